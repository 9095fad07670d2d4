//! Listing a server's tools: every page (a bounded number of them), within the list timeout,
//! with the server's cache hint kept so the list is asked again only when it may have changed.
//! Only the tools the host's filters allow are kept, and they are what the bound on tools
//! counts: a server's many unwanted tools cannot crowd out one the host wants.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rmcp::model::{PaginatedRequestParams, Tool};
use rmcp::service::{Peer, RoleClient};

use super::error::McpClientError;
use super::server::RemoteServer;
use crate::filter::CompiledFilters;

/// The most pages the bridge asks for: a server that keeps handing out cursors is cut off.
const MAX_PAGES: usize = 100;

/// The server's tools the host's filters allow, and until when the server said the list holds.
pub(crate) struct Listed {
    pub(crate) tools: Vec<Tool>,
    pub(crate) expires_at: Option<Instant>,
    /// Whether listing stopped at the bound, with pages left unread.
    pub(crate) cut: bool,
}

/// Lists every page of the server's tools.
pub(crate) async fn list(
    server: &RemoteServer,
    peer: &Peer<RoleClient>,
) -> Result<Listed, McpClientError> {
    let waited = server.bounds.list_timeout;
    tokio::time::timeout(waited, pages(server, peer))
        .await
        .map_err(|_| McpClientError::Timeout {
            server: server.name.clone(),
            during: "tools/list",
            waited,
        })?
}

async fn pages(server: &RemoteServer, peer: &Peer<RoleClient>) -> Result<Listed, McpClientError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    let mut expires_at: Option<Instant> = None;
    let mut every_page_has_a_hint = true;
    let filters = CompiledFilters::new(&server.filters);
    for _ in 0..MAX_PAGES {
        let params = cursor
            .clone()
            .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let page = peer
            .list_tools(params)
            .await
            .map_err(|error| McpClientError::Request {
                server: server.name.clone(),
                during: "tools/list",
                message: server.scrub(&error.to_string()),
            })?;
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
        // rest were left out.
        let full = tools.len() > server.bounds.max_tools;
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
