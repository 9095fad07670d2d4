//! Listing a server's tools: every page (a bounded number of them), within the list timeout,
//! with the server's cache hint kept so the list is asked again only when it may have changed.
//! Only the tools the host's filters allow are kept, and they are what the bound on tools
//! counts (those the SDK cannot read among them): a server's many unwanted tools cannot crowd
//! out one the host wants.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientRequest, CustomResult, ListToolsRequest, PaginatedRequestParams, ServerResult, Tool,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;

use super::bounded_lines::LineOverflow;
use super::catalog::{SkippedTool, bounded};
use super::error::McpClientError;
use super::remote_call::CancelOnDrop;
use super::server::RemoteServer;
use crate::filter::CompiledFilters;
use crate::redact::SecretRedactor;

/// The most pages the bridge asks for: a server that keeps handing out cursors is cut off.
const MAX_PAGES: usize = 100;

/// The server's tools the host's filters allow, and until when the server said the list holds.
pub(crate) struct Listed {
    pub(crate) tools: Vec<Tool>,
    /// The tools the host's filters allow that the SDK could not read, with the reason.
    pub(crate) unreadable: Vec<SkippedTool>,
    pub(crate) expires_at: Option<Instant>,
    /// Whether listing stopped at the bound, with pages left unread.
    pub(crate) cut: bool,
}

/// Lists every page of the server's tools.
pub(crate) async fn list(
    server: &RemoteServer,
    peer: &Peer<RoleClient>,
    overflow: &LineOverflow,
) -> Result<Listed, McpClientError> {
    let waited = server.bounds.list_timeout;
    tokio::time::timeout(waited, pages(server, peer, overflow))
        .await
        .map_err(|_| McpClientError::Timeout {
            server: server.name.clone(),
            during: "tools/list",
            waited,
        })?
}

async fn pages(
    server: &RemoteServer,
    peer: &Peer<RoleClient>,
    overflow: &LineOverflow,
) -> Result<Listed, McpClientError> {
    let mut tools = Vec::new();
    let mut unreadable = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    let mut expires_at: Option<Instant> = None;
    let mut every_page_has_a_hint = true;
    let filters = CompiledFilters::new(&server.filters);
    let scrubber = server.scrubber();
    for _ in 0..MAX_PAGES {
        let params = cursor
            .clone()
            .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let page = page(peer, params, &scrubber, overflow)
            .await
            .map_err(|message| McpClientError::Request {
                server: server.name.clone(),
                during: "tools/list",
                message: server.scrub(&message),
            })?;
        unreadable.extend(
            page.unreadable
                .into_iter()
                .filter(|tool| tool.name == NAMELESS || filters.allows(&tool.name)),
        );
        match page.ttl_ms {
            Some(ttl) => {
                let page_expiry = Instant::now().checked_add(Duration::from_millis(ttl));
                expires_at = match (expires_at, page_expiry) {
                    (Some(earlier), Some(this)) => Some(earlier.min(this)),
                    (earlier, this) => earlier.or(this),
                };
            }
            None => every_page_has_a_hint = false,
        }
        tools.extend(
            page.tools
                .into_iter()
                .filter(|tool| filters.allows(&tool.name)),
        );
        // One tool past the bound is enough for the catalog to keep the first ones and say the
        // rest were left out. The tools the SDK could not read count too: each is a skipped
        // entry and a log line, which a server must not grow page after page.
        let full = tools.len().saturating_add(unreadable.len()) > server.bounds.max_tools;
        let cut = full && page.next_cursor.is_some();
        let listed = if full { None } else { page.next_cursor };
        match listed {
            Some(next) if seen.insert(next.clone()) => cursor = Some(next),
            // The cursor is the server's text, of any length: not repeated.
            Some(_) => {
                return Err(McpClientError::Request {
                    server: server.name.clone(),
                    during: "tools/list",
                    message: "the server handed out the same cursor twice".into(),
                });
            }
            None => {
                return Ok(Listed {
                    tools,
                    unreadable,
                    expires_at: expires_at.filter(|_| every_page_has_a_hint),
                    cut,
                });
            }
        }
    }
    Err(McpClientError::Request {
        server: server.name.clone(),
        during: "tools/list",
        message: format!("the list goes on past {MAX_PAGES} pages"),
    })
}

/// One page of the list as the bridge reads it.
struct Page {
    tools: Vec<Tool>,
    /// The tools on the page the SDK could not read, with the reason.
    unreadable: Vec<SkippedTool>,
    next_cursor: Option<String>,
    ttl_ms: Option<u64>,
}

/// The name a [`SkippedTool`] has when the server gave the tool none.
const NAMELESS: &str = "?";

/// Asks for one page. A page the SDK cannot read as a whole (one tool with a boolean schema or
/// a hint of the wrong type spoils it for the SDK) is read a tool at a time, so that tool alone
/// is skipped. Sent past the SDK's response cache: the client keeps the whole list itself, by
/// the same hints. The error is the SDK's text, not yet scrubbed; the skipped tools' names and
/// reasons have the endpoint's credentials (`scrubber`) taken out.
async fn page(
    peer: &Peer<RoleClient>,
    params: Option<PaginatedRequestParams>,
    scrubber: &SecretRedactor,
    overflow: &LineOverflow,
) -> Result<Page, String> {
    // A session ended at a message over the bound says so, not just that it is closed.
    let failed = |error: ServiceError| {
        overflow
            .cause_of(&error)
            .unwrap_or_else(|| error.to_string())
    };
    let request = ClientRequest::ListToolsRequest(ListToolsRequest {
        method: Default::default(),
        params,
        extensions: Default::default(),
    });
    let handle = peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(failed)?;
    // The list timeout drops this future: the server is told the request is abandoned.
    let mut cancel = CancelOnDrop {
        peer: Some(peer.clone()),
        id: handle.id.clone(),
        reason: "the listing timed out",
    };
    let answer = handle.await_response().await;
    cancel.peer = None;
    match answer.map_err(failed)? {
        ServerResult::ListToolsResult(page) => Ok(Page {
            tools: page.tools,
            unreadable: Vec::new(),
            next_cursor: page.next_cursor,
            ttl_ms: page.ttl_ms,
        }),
        ServerResult::CustomResult(CustomResult(value)) => lenient(value, scrubber)
            .ok_or_else(|| "the server's answer is not a list of tools".to_owned()),
        _ => Err("the server's answer is not a list of tools".to_owned()),
    }
}

/// A page read a tool at a time, or `None` when it has no list of tools. The SDK's reasons
/// quote the server's values, which may hold the endpoint's credentials (`scrubber`): they are
/// taken out before the text is cut.
fn lenient(value: Value, scrubber: &SecretRedactor) -> Option<Page> {
    let Value::Object(mut fields) = value else {
        return None;
    };
    let Some(Value::Array(listed)) = fields.remove("tools") else {
        return None;
    };
    let mut tools = Vec::new();
    let mut unreadable = Vec::new();
    for tool in listed {
        let name = tool.get("name").and_then(Value::as_str).map_or_else(
            || NAMELESS.to_owned(),
            |name| bounded(&scrubber.redact_str(name), 140),
        );
        match serde_json::from_value::<Tool>(tool) {
            Ok(tool) => tools.push(tool),
            Err(error) => unreadable.push(SkippedTool {
                name,
                reason: bounded(
                    &scrubber.redact_str(&format!("the tool cannot be read: {error}")),
                    512,
                ),
            }),
        }
    }
    Some(Page {
        tools,
        unreadable,
        next_cursor: fields
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned),
        // As the SDK reads it: a negative hint keeps nothing.
        ttl_ms: fields
            .get("ttlMs")
            .and_then(Value::as_i64)
            .and_then(|ttl| u64::try_from(ttl.max(0)).ok()),
    })
}

#[cfg(test)]
mod tests {
    use super::super::catalog::SkippedTool;
    use super::super::scripted_server::connected;
    use super::super::scripted_server::scripted_server;
    use crate::definition::ToolDefinition;
    use crate::filter::ToolFilter;

    /// The `tools/list` answer of a server whose one page holds a good tool beside three the
    /// SDK cannot read: a boolean input schema, a hint of the wrong type, no name at all.
    const SLOPPY_LIST: &str = r#"    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"good","inputSchema":{"type":"object"}},{"name":"boolean","inputSchema":true},{"name":"hinted","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}},{"nameless":1,"inputSchema":{"type":"object"}},{"name":"unwanted","inputSchema":false}]}}\n' "$id" ;;"#;

    /// One tool the SDK cannot read costs only that tool: the others are taken, and it is
    /// named among the skipped with the reason (unless the host's filter did not want it).
    #[tokio::test]
    async fn a_tool_the_sdk_cannot_read_is_skipped_and_the_rest_of_the_list_kept() {
        let server = scripted_server("sloppy", SLOPPY_LIST).filter(ToolFilter::deny(["unwanted"]));
        let client = connected(server).await;
        let tools = client.tools().await.unwrap();
        let names: Vec<_> = tools
            .definitions()
            .iter()
            .map(ToolDefinition::name)
            .collect();
        assert_eq!(names, ["good"]);
        let skipped: Vec<_> = tools
            .skipped()
            .iter()
            .map(|tool| tool.name.as_str())
            .collect();
        assert_eq!(skipped, ["boolean", "hinted", "?"], "{:?}", tools.skipped());
        assert!(
            tools
                .skipped()
                .iter()
                .all(|SkippedTool { reason, .. }| !reason.is_empty()),
            "{:?}",
            tools.skipped()
        );
        client.close().await;
    }

    /// A `tools/list` answer of one line of 200,000 bytes.
    const OVER_LONG_LIST: &str = r#"    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"big","description":"' "$id"; head -c 200000 /dev/zero | tr '\0' x; printf '","inputSchema":{"type":"object"}}]}}\n' ;;"#;

    /// A list over the transport's bound fails the listing at once, saying so, rather than
    /// waiting out the list timeout.
    #[tokio::test]
    async fn a_list_over_the_bound_fails_at_once_saying_why() {
        let server = scripted_server("wordy", OVER_LONG_LIST)
            .max_result_bytes(1000)
            .max_schema_bytes(1000)
            .list_timeout(std::time::Duration::from_secs(30));
        let bound = server.bounds.max_message_bytes();
        let client = connected(server).await;
        // Against a hang only.
        let listed = tokio::time::timeout(std::time::Duration::from_secs(20), client.tools())
            .await
            .expect("the listing ended before its timeout");
        let message = listed.unwrap_err().to_string();
        assert!(
            message.contains(&format!("sent a message over {bound} bytes")),
            "{message}"
        );
        client.close().await;
    }

    /// A `tools/list` answer of 40 pages (the cursor counts them), each of 20 tools the SDK
    /// cannot read (a boolean input schema).
    const UNREADABLE_PAGES: &str = r#"    *'"method":"tools/list"'*) n=$((${n:-0}+1)); tools=''; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do tools="$tools${tools:+,}{\"name\":\"u${n}_$i\",\"inputSchema\":true}"; done; next=''; [ "$n" -lt 40 ] && next=",\"nextCursor\":\"c$n\""; printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]%s}}\n' "$id" "$tools" "$next" ;;"#;

    /// Tools the SDK cannot read count toward the bound on tools like the others: a server
    /// cannot grow the skipped list (and the log line each skipped tool gets) past it by making
    /// every tool unreadable, page after page.
    #[tokio::test]
    async fn unreadable_tools_count_toward_the_bound() {
        let server = scripted_server("unreadable", UNREADABLE_PAGES).max_tools(5);
        let client = connected(server).await;
        let tools = client.tools().await.unwrap();
        let unreadable = tools
            .skipped()
            .iter()
            .filter(|tool| tool.reason.contains("cannot be read"))
            .count();
        // One page past the bound at most.
        assert!(unreadable <= 5 + 20, "{unreadable} skipped as unreadable");
        assert!(tools.definitions().is_empty(), "{:?}", tools.definitions());
        let unread = tools.skipped().last().unwrap();
        assert_eq!(unread.name, "*", "{:?}", tools.skipped());
        client.close().await;
    }

    /// A `tools/list` answer of one page of 400 tools, half of them named outside MCP's rule.
    const CROWDED_PAGE: &str = r#"    *'"method":"tools/list"'*) tools=''; i=0; while [ "$i" -lt 200 ]; do i=$((i+1)); tools="$tools${tools:+,}{\"name\":\"t$i\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"bad $i\",\"inputSchema\":{\"type\":\"object\"}}"; done; printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}\n' "$id" "$tools" ;;"#;

    /// Every skipped tool is an entry and a warning in the log: a page of many tools past the
    /// bound or with bad names names only the first of them, and counts the rest in one entry.
    #[tokio::test]
    async fn a_crowded_page_names_a_bounded_number_of_skipped_tools() {
        let server = scripted_server("crowded", CROWDED_PAGE).max_tools(5);
        let client = connected(server).await;
        let tools = client.tools().await.unwrap();
        assert_eq!(tools.definitions().len(), 5);
        let skipped = tools.skipped();
        assert!(skipped.len() <= 101, "{} skipped entries", skipped.len());
        let rest = skipped.last().unwrap();
        assert_eq!(rest.name, "*", "{rest:?}");
        // 395 skipped in all: 100 named and this one counting the rest.
        assert!(rest.reason.contains("295 more"), "{rest:?}");
        client.close().await;
    }
}
