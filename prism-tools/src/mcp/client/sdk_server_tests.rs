//! What the third-party servers of `tests/mcp_client.rs` never do, against the SDK's own server
//! over an in-memory pipe: ask for input (`input_required`) from a client that offers no
//! elicitation, split the tool list over pages with cache hints, hand out cursors forever.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    ElicitRequestParams, ErrorData, InputRequest as WireInputRequest, InputRequests,
    InputRequiredResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::json;

use crate::call::ErrorCode;
use crate::dispatch::InMemoryLedger;
use crate::redact::SecretRedactor;
use crate::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};

use super::codes;
use super::mcp_client::McpClient;
use super::outcome::RemoteOutcome;
use super::server::RemoteServer;

/// A client of `handler`, served on its own task over an in-memory pipe, as the host's
/// `remote` sees it.
async fn connected(handler: impl ServerHandler, remote: RemoteServer) -> McpClient {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    McpClient::connect_over(remote, client_side).await.unwrap()
}

/// A server of tools in the 2026-07-28 revision.
fn current_era_tools() -> ServerConfig {
    let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
    info.protocol_version = ProtocolVersion::V_2026_07_28;
    info
}

/// The one tool of the servers that ask before they purge: `purge({dir})`.
fn purge_listed() -> ListToolsResult {
    let schema = json!({"type": "object", "properties": {"dir": {"type": "string"}}});
    let serde_json::Value::Object(schema) = schema else {
        unreachable!("an object")
    };
    ListToolsResult::with_all_items(vec![Tool::new(
        "purge",
        "Deletes the files of a directory.",
        schema,
    )])
}

/// Asks "Delete 3 files?" before `purge` runs, then runs it with the answer.
struct AskingServer;

impl ServerHandler for AskingServer {
    fn get_info(&self) -> ServerConfig {
        current_era_tools()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(purge_listed())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match request.request_state.as_deref() {
            None => {
                let ask = WireInputRequest::Elicitation(ElicitRequest::new(
                    ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: "Delete 3 files?".into(),
                        requested_schema: serde_json::from_value(json!({
                            "type": "object",
                            "properties": {"confirm": {"type": "boolean"}},
                            "required": ["confirm"]
                        }))
                        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?,
                    },
                ));
                let mut requests = InputRequests::new();
                requests.insert("confirm".to_owned(), ask);
                Ok(InputRequiredResult::new(Some(requests), Some("state-1".into())).into())
            }
            Some("state-1") => {
                let answer = request
                    .input_responses
                    .as_ref()
                    .and_then(|responses| responses.get("confirm"))
                    .cloned()
                    .unwrap_or_default();
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "purged after {answer}"
                ))])
                .into())
            }
            Some(other) => Err(ErrorData::invalid_params(
                format!("unknown state {other}"),
                None,
            )),
        }
    }
}

#[tokio::test]
async fn input_required_reaches_the_host_typed_and_its_answer_reaches_the_server() {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(async move {
        if let Ok(running) = AskingServer.serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    let client = McpClient::connect_over(RemoteServer::command("asker", "unused"), client_side)
        .await
        .unwrap();
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    let registry = ToolRegistry::from_iter(client.tools().await.unwrap().into_definitions());
    let dispatcher = Dispatcher::builder(registry).build();
    let ctx = ToolExecutionContext::new();

    let call = ToolCall::new("c1", "purge", json!({"dir": "/tmp/x"}));
    let result = dispatcher.dispatch(call, &ctx).await.unwrap();
    let error = result.error_info().unwrap();
    assert_eq!(error.code, ErrorCode::parse(codes::INPUT_REQUIRED));
    assert!(error.message.contains("Delete 3 files?"), "{error:?}");

    let request = client.take_input_required("c1").expect("kept for the host");
    assert!(client.take_input_required("c1").is_none());
    assert_eq!(request.tool, "purge");
    assert_eq!(request.request_state.as_deref(), Some("state-1"));
    assert_eq!(request.requests.len(), 1);
    assert_eq!(request.requests[0].key, "confirm");
    assert_eq!(request.requests[0].method, "elicitation/create");
    assert_eq!(request.requests[0].message(), Some("Delete 3 files?"));

    let answer = json!({"action": "accept", "content": {"confirm": true}});
    let responses = BTreeMap::from([("confirm".to_owned(), answer.clone())]);
    let resumed = client
        .resume(&request, json!({"dir": "/tmp/x"}), responses, &ctx)
        .await
        .unwrap();
    let RemoteOutcome::Complete(output) = resumed else {
        panic!("{resumed:?}");
    };
    let text = output.content()[0].as_text().unwrap();
    assert_eq!(text, format!("purged after {answer}"));

    client.close().await;
    server.abort();
}

/// Lists `pages` (by default five tools over three), each page with a cache hint; with
/// `endless`, every page hands out a new cursor.
struct PagedServer {
    ttl_ms: u64,
    endless: bool,
    lists: Arc<AtomicUsize>,
    pages: &'static [&'static [&'static str]],
}

const FIVE_TOOLS: &[&[&str]] = &[&["a", "b"], &["c", "d"], &["e"]];

impl ServerHandler for PagedServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        let page: usize = request
            .and_then(|request| request.cursor)
            .map_or(Ok(0), |cursor| cursor.parse())
            .map_err(|_| ErrorData::invalid_params("bad cursor", None))?;
        let names = self.pages.get(page).copied().unwrap_or_default();
        let schema = match json!({"type": "object"}) {
            serde_json::Value::Object(schema) => schema,
            _ => unreachable!("an object"),
        };
        let mut result = ListToolsResult::with_all_items(
            names
                .iter()
                .map(|name| Tool::new(name.to_string(), "A tool.", schema.clone()))
                .collect(),
        );
        result.ttl_ms = Some(self.ttl_ms);
        if page + 1 < self.pages.len() || self.endless {
            result.next_cursor = Some((page + 1).to_string());
        }
        Ok(result)
    }
}

async fn paged(ttl_ms: u64, endless: bool) -> (McpClient, Arc<AtomicUsize>) {
    let lists = Arc::new(AtomicUsize::new(0));
    let server = PagedServer {
        ttl_ms,
        endless,
        lists: Arc::clone(&lists),
        pages: FIVE_TOOLS,
    };
    let client = connected(server, RemoteServer::command("paged", "unused")).await;
    (client, lists)
}

#[tokio::test]
async fn every_page_is_listed_and_kept_as_long_as_the_server_says() {
    let (client, lists) = paged(3_600_000, false).await;
    let tools = client.tools().await.unwrap();
    let names: Vec<_> = tools.definitions().iter().map(|tool| tool.name()).collect();
    assert_eq!(names, ["a", "b", "c", "d", "e"]);
    assert!(tools.expires_in().is_some());
    assert_eq!(lists.load(Ordering::SeqCst), 3);
    client.tools().await.unwrap();
    assert_eq!(lists.load(Ordering::SeqCst), 3, "kept while the hint holds");
    client.refresh_tools().await;
    client.tools().await.unwrap();
    assert_eq!(
        lists.load(Ordering::SeqCst),
        6,
        "asked again once forgotten"
    );

    let (client, lists) = paged(0, false).await;
    client.tools().await.unwrap();
    client.tools().await.unwrap();
    assert_eq!(
        lists.load(Ordering::SeqCst),
        6,
        "a hint of 0 ms keeps nothing"
    );
}

#[tokio::test]
async fn a_list_that_never_ends_is_an_error() {
    let (client, lists) = paged(0, true).await;
    let error = client.tools().await.unwrap_err();
    assert!(error.to_string().contains("past 100 pages"), "{error}");
    assert_eq!(lists.load(Ordering::SeqCst), 100);
}

/// A tool that never answers; it says when a call starts and when its cancellation arrives.
struct StuckServer {
    started: Arc<tokio::sync::Notify>,
    cancelled: Arc<tokio::sync::Notify>,
}

impl ServerHandler for StuckServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.started.notify_one();
        context.ct.cancelled().await;
        self.cancelled.notify_one();
        Err(ErrorData::internal_error("cancelled", None))
    }
}

/// The client, and the server's "started" and "cancelled" signals.
type Stuck = (
    McpClient,
    Arc<tokio::sync::Notify>,
    Arc<tokio::sync::Notify>,
);

async fn stuck(server: RemoteServer) -> Stuck {
    let started = Arc::new(tokio::sync::Notify::new());
    let cancelled = Arc::new(tokio::sync::Notify::new());
    let handler = StuckServer {
        started: Arc::clone(&started),
        cancelled: Arc::clone(&cancelled),
    };
    (connected(handler, server).await, started, cancelled)
}

#[tokio::test]
async fn the_server_is_told_when_a_call_times_out_or_is_cancelled() {
    let server =
        RemoteServer::command("stuck", "unused").call_timeout(std::time::Duration::from_millis(50));
    let (client, _, cancelled) = stuck(server).await;
    let ctx = ToolExecutionContext::new();
    let error = client.call("wait", json!({}), &ctx).await.unwrap_err();
    assert_eq!(error.code().as_str(), codes::TIMEOUT);
    // Returns once the server has received the cancellation: the test hangs if it never does.
    cancelled.notified().await;

    let (client, started, cancelled) = stuck(RemoteServer::command("stuck", "unused")).await;
    let token = crate::context::CancellationToken::new();
    let ctx = ToolExecutionContext::new().with_cancellation(token.clone());
    // The client stays alive here: the server can only learn of the cancellation from the
    // notification, not from a closed connection.
    let caller = client.clone();
    let call = tokio::spawn(async move { caller.call("wait", json!({}), &ctx).await });
    // Cancelled once the server is running the call (a call cancelled before it is sent is
    // never sent).
    started.notified().await;
    token.cancel();
    let error = call.await.unwrap().unwrap_err();
    assert_eq!(error.code(), &ErrorCode::Cancelled);
    cancelled.notified().await;
    client.close().await;
}

#[tokio::test]
async fn a_server_with_more_tools_than_the_bound_gives_the_first_ones() {
    let server = PagedServer {
        ttl_ms: 0,
        endless: false,
        lists: Arc::default(),
        pages: FIVE_TOOLS,
    };
    let client = connected(
        server,
        RemoteServer::command("paged", "unused").max_tools(3),
    )
    .await;
    let tools = client.tools().await.unwrap();
    let names: Vec<_> = tools.definitions().iter().map(|tool| tool.name()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(
        tools.skipped()[0].reason,
        "the server offers more than 3 tools"
    );
}

/// Lists one tool named after `version`, kept for an hour unless the server says the list
/// changed; refuses the next list when `fail_next` is set.
struct ChangingServer {
    version: Arc<AtomicUsize>,
    fail_next: Arc<std::sync::atomic::AtomicBool>,
    lists: Arc<AtomicUsize>,
    peer: Arc<std::sync::Mutex<Option<rmcp::service::Peer<RoleServer>>>>,
}

impl ServerHandler for ChangingServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        *self.peer.lock().unwrap() = Some(context.peer.clone());
        self.lists.fetch_add(1, Ordering::SeqCst);
        if self.fail_next.swap(false, Ordering::SeqCst) {
            return Err(ErrorData::internal_error("busy, try again", None));
        }
        let name = format!("v{}", self.version.load(Ordering::SeqCst));
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let mut result = ListToolsResult::with_all_items(vec![Tool::new(name, "A tool.", schema)]);
        result.ttl_ms = Some(3_600_000);
        Ok(result)
    }
}

#[tokio::test]
async fn a_change_whose_relist_failed_is_asked_for_again() {
    let version = Arc::new(AtomicUsize::new(1));
    let fail_next = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let lists = Arc::new(AtomicUsize::new(0));
    let handler = ChangingServer {
        version: Arc::clone(&version),
        fail_next: Arc::clone(&fail_next),
        lists: Arc::clone(&lists),
        peer: Arc::default(),
    };
    let peer = Arc::clone(&handler.peer);
    let client = connected(handler, RemoteServer::command("changing", "unused")).await;
    assert_eq!(client.tools().await.unwrap().definitions()[0].name(), "v1");

    version.store(2, Ordering::SeqCst);
    fail_next.store(true, Ordering::SeqCst);
    let peer = peer.lock().unwrap().clone().unwrap();
    peer.notify_tool_list_changed().await.unwrap();
    // The notification arrives on the client's own task.
    for _ in 0..500 {
        if client.tools().await.is_err() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let failed = lists.load(Ordering::SeqCst);
    let again = client.tools().await.unwrap();
    assert_eq!(again.definitions()[0].name(), "v2");
    assert_eq!(lists.load(Ordering::SeqCst), failed + 1, "asked once more");
}

#[tokio::test]
async fn a_maximum_call_time_without_end_is_a_day() {
    let server = RemoteServer::command("stuck", "unused")
        .call_timeout(std::time::Duration::from_millis(50))
        .max_call_timeout(std::time::Duration::MAX);
    let (client, _, _) = stuck(server).await;
    let error = client
        .call("wait", json!({}), &ToolExecutionContext::new())
        .await
        .unwrap_err();
    assert_eq!(error.code().as_str(), codes::TIMEOUT);
}

#[tokio::test]
async fn a_prefixing_server_whose_name_could_meet_anothers_is_refused() {
    for name in ["a__b", "a_", "", "a b", "ä"] {
        let (_server_side, client_side) = tokio::io::duplex(1024);
        let refused = McpClient::connect_over(
            RemoteServer::command(name, "unused").prefixed(true),
            client_side,
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("`{name}` is refused"));
        assert!(
            matches!(refused, super::McpClientError::Name { .. }),
            "{refused}"
        );
    }
    for name in ["a", "a_b", "time-2.1"] {
        let server = RemoteServer::command(name, "unused").prefixed(true);
        assert!(server.check_prefix().is_ok(), "`{name}` prefixes");
    }
    // Unprefixed, the name is only a label.
    assert!(
        RemoteServer::command("a__b", "unused")
            .check_prefix()
            .is_ok()
    );
}

#[tokio::test]
async fn an_error_never_carries_the_endpoints_credentials() {
    let server = RemoteServer::http(
        "h",
        "http://user:pa55word@127.0.0.1:1/mcp?key=sk-SECRET-123",
    )
    .header("Authorization", "Bearer sk-HEADER-456")
    .connect_timeout(std::time::Duration::from_secs(10));
    let error = McpClient::connect(server).await.err().unwrap().to_string();
    for secret in ["sk-SECRET-123", "sk-HEADER-456", "pa55word"] {
        assert!(!error.contains(secret), "{error}");
    }
    assert!(
        error.contains("127.0.0.1"),
        "the rest of the message stays: {error}"
    );
}

/// The bound counts the tools the host wants: one it allows on the last page is taken, however
/// many it does not want come first.
#[tokio::test]
async fn the_bound_on_tools_counts_only_the_tools_the_filters_allow() {
    let server = PagedServer {
        ttl_ms: 0,
        endless: false,
        lists: Arc::default(),
        pages: FIVE_TOOLS,
    };
    let remote = RemoteServer::command("paged", "unused")
        .max_tools(2)
        .filter(crate::filter::ToolFilter::allow(["e"]));
    let tools = connected(server, remote).await.tools().await.unwrap();
    let names: Vec<_> = tools.definitions().iter().map(|tool| tool.name()).collect();
    assert_eq!(names, ["e"]);
    assert!(tools.skipped().is_empty(), "{:?}", tools.skipped());
}

/// When tools skipped for bad names leave room under the bound, the pages listing never read
/// are named in `skipped()` rather than silently missing.
#[tokio::test]
async fn pages_left_unread_at_the_bound_are_reported() {
    let server = PagedServer {
        ttl_ms: 0,
        endless: false,
        lists: Arc::default(),
        pages: &[&["bad name", "b"], &["c d", "d"], &["e"]],
    };
    let remote = RemoteServer::command("paged", "unused").max_tools(2);
    let tools = connected(server, remote).await.tools().await.unwrap();
    let names: Vec<_> = tools.definitions().iter().map(|tool| tool.name()).collect();
    assert_eq!(names, ["b", "d"]);
    let unread = tools.skipped().last().unwrap();
    assert_eq!(unread.name, "*");
    assert!(
        unread.reason.contains("later pages were not read"),
        "{}",
        unread.reason
    );
}

/// Answers `fail` with `isError: true`, `refuse` with a JSON-RPC error and `echo` with a result,
/// each carrying the `text` argument as the server's message, with `HEADER`, `KEY`, `BASIC`,
/// `PAIR`, `PASSWORD` and `PATH` spelled out as the credentials of the tests' endpoints (a
/// server quoting back what it was sent). The description of `echo` quotes the token in the
/// path of [`PATH_TOKEN_URL`].
struct EchoingServer;

impl ServerHandler for EchoingServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let serde_json::Value::Object(schema) = schema else {
            unreachable!("an object")
        };
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("fail", "Fails with the text.", schema.clone()),
            Tool::new("refuse", "Refuses with the text.", schema.clone()),
            Tool::new(
                "echo",
                "Answers with the text, as /s/sk-PATH-789/mcp does.",
                schema,
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("text"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .replace("HEADER", "sk-HEADER-456")
            .replace("KEY", "sk-SECRET-123")
            .replace("BASIC", "dXNlci0xOnBhNTUtdzByZA==")
            .replace("PAIR", "user-1:pa55-w0rd")
            .replace("PASSWORD", "pa55-w0rd")
            .replace("PATH", "sk-PATH-789");
        match request.name.as_ref() {
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into()),
            "echo" => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(text.clone())]);
                result.structured_content = Some(json!({ "text": text }));
                Ok(result.into())
            }
            _ => Err(ErrorData::invalid_params(text, None)),
        }
    }
}

/// A dispatcher over the echoing server's tools, with a ledger and the host's `secrets`.
async fn echoing(remote: RemoteServer, secrets: &[&str]) -> (Dispatcher, InMemoryLedger) {
    let client = connected(EchoingServer, remote).await;
    let registry = ToolRegistry::from_iter(client.tools().await.unwrap().into_definitions());
    let ledger = InMemoryLedger::default();
    let dispatcher = Dispatcher::builder(registry)
        .ledger(ledger.clone())
        .redactor(SecretRedactor::new(secrets))
        .build();
    (dispatcher, ledger)
}

/// The error message of `tool` called with `text`, and every ledger row as JSON.
async fn echoed(
    dispatcher: &Dispatcher,
    ledger: &InMemoryLedger,
    tool: &str,
    text: &str,
) -> (String, String) {
    let call = ToolCall::new(format!("c-{tool}"), tool, json!({"text": text}));
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    let message = result.error_info().expect("an error").message.clone();
    (message, serde_json::to_string(&ledger.records()).unwrap())
}

/// What the model and the ledger got from the `echo` tool called with `text`: the result's
/// content and value, and every ledger row as JSON.
async fn echoed_back(
    dispatcher: &Dispatcher,
    ledger: &InMemoryLedger,
    text: &str,
) -> (String, String) {
    let call = ToolCall::new("c-echo", "echo", json!({"text": text}));
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    assert!(result.error_info().is_none(), "{result:?}");
    let shown = format!("{:?} {:?}", result.content(), result.as_value());
    (shown, serde_json::to_string(&ledger.records()).unwrap())
}

/// Asserts that none of `secrets` is in what `tool`'s call showed or in the ledger's `rows`.
fn assert_kept_out(tool: &str, shown: &str, rows: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(!shown.contains(secret), "{tool}: {shown}");
        assert!(
            !rows.contains(secret),
            "{tool}: a ledger row holds {secret}"
        );
    }
}

/// The endpoint's credentials (a header value, a query parameter's value on its own) are taken
/// out of whatever the server says back: a remote `isError` and a JSON-RPC error alike.
#[tokio::test]
async fn the_servers_text_never_carries_the_endpoints_credentials() {
    let remote = RemoteServer::http("h", "http://127.0.0.1:1/mcp?key=sk-SECRET-123&v=2")
        .header("Authorization", "Bearer sk-HEADER-456");
    let (dispatcher, ledger) = echoing(remote, &[]).await;
    let text = "the credential Bearer HEADER and the key KEY are refused";
    for tool in ["fail", "refuse"] {
        let (message, rows) = echoed(&dispatcher, &ledger, tool, text).await;
        assert_kept_out(tool, &message, &rows, &["sk-HEADER-456", "sk-SECRET-123"]);
        assert!(message.contains("are refused"), "the rest stays: {message}");
    }
}

/// A server that quotes the credential of an `Authorization` header without its scheme (the
/// token alone, as servers write it) has it taken out all the same.
#[tokio::test]
async fn the_servers_text_never_carries_an_authorization_headers_bare_credential() {
    let remote = RemoteServer::http("h", "http://127.0.0.1:1/mcp")
        .header("Authorization", "Bearer sk-HEADER-456");
    let (dispatcher, ledger) = echoing(remote, &[]).await;
    for tool in ["fail", "refuse"] {
        let (message, rows) =
            echoed(&dispatcher, &ledger, tool, "the token HEADER is refused").await;
        assert!(!message.contains("sk-HEADER-456"), "{tool}: {message}");
        assert!(
            !rows.contains("sk-HEADER-456"),
            "{tool}: a ledger row holds the token"
        );
        assert!(message.contains("is refused"), "the rest stays: {message}");
    }
}

/// The endpoint's credentials and the host's secrets are taken out of the server's text in one
/// pass: a query value found inside a host secret (`v=2`) must not split the secret before the
/// host's redactor looks for it, which would leave both parts of it in the message.
#[tokio::test]
async fn a_credential_inside_a_host_secret_leaves_no_part_of_it() {
    let secret = "host-secret-2-abcdef";
    let remote = RemoteServer::http("h", "http://127.0.0.1:1/mcp?key=sk-SECRET-123&v=2");
    let (dispatcher, ledger) = echoing(remote, &[secret]).await;
    let text = format!("the secret {secret} is refused");
    for tool in ["fail", "refuse"] {
        let (message, rows) = echoed(&dispatcher, &ledger, tool, &text).await;
        assert_kept_out(tool, &message, &rows, &["host-secret", "abcdef"]);
        assert!(message.contains("is refused"), "the rest stays: {message}");
    }
    // A successful result that echoes it is scrubbed in the same one pass.
    let (shown, rows) = echoed_back(&dispatcher, &ledger, &text).await;
    assert_kept_out("echo", &shown, &rows, &["host-secret", "abcdef"]);
    assert!(shown.contains("is refused"), "the rest stays: {shown}");
}

/// A secret the host's redactor knows is found whole before any cut: the bridge passes the
/// server's text on uncut, and the dispatcher cuts only after redacting.
#[tokio::test]
async fn a_known_secret_is_never_cut_before_it_is_redacted() {
    let secret = "sk-HOST-SECRET-0123456789";
    let (dispatcher, ledger) = echoing(RemoteServer::command("e", "unused"), &[secret]).await;
    for before in [8 * 1024 - 12, 16 * 1024 - 12] {
        let text = format!("{}{secret}", "x".repeat(before));
        for tool in ["fail", "refuse"] {
            let (message, rows) = echoed(&dispatcher, &ledger, tool, &text).await;
            let kept = &secret[..12];
            assert!(
                !message.contains(kept),
                "{tool}: …{}",
                &message[message.len() - 60..]
            );
            assert!(
                !rows.contains(kept),
                "{tool}: a cut secret reached a ledger row"
            );
        }
    }
}

/// Asks for input on every call, with the call's `dir` argument as the request state, so each
/// `input_required` says which call it answers.
struct AlwaysAsking;

impl ServerHandler for AlwaysAsking {
    fn get_info(&self) -> ServerConfig {
        current_era_tools()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(purge_listed())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let dir = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("dir"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Ok(InputRequiredResult::new(Some(InputRequests::new()), Some(dir)).into())
    }
}

/// A call id names the call that used it last: a model that reuses an id (many do, turn after
/// turn) gets the input request of its latest call, not one left over from an earlier turn.
#[tokio::test]
async fn a_reused_call_id_gives_the_input_request_of_its_latest_call() {
    let client = connected(AlwaysAsking, RemoteServer::command("asker", "unused")).await;
    let registry = ToolRegistry::from_iter(client.tools().await.unwrap().into_definitions());
    let dispatcher = Dispatcher::builder(registry).build();
    let ctx = ToolExecutionContext::new();
    for dir in ["/tmp/first", "/tmp/second"] {
        let call = ToolCall::new("c1", "purge", json!({ "dir": dir }));
        let result = dispatcher.dispatch(call, &ctx).await.unwrap();
        assert_eq!(
            result.error_info().unwrap().code,
            ErrorCode::parse(codes::INPUT_REQUIRED)
        );
    }
    let request = client.take_input_required("c1").expect("kept for the host");
    assert_eq!(request.request_state.as_deref(), Some("/tmp/second"));
    assert!(
        client.take_input_required("c1").is_none(),
        "the earlier call's request is gone with it"
    );
    client.close().await;
}

/// An `Authorization` header's credentials are secret on their own, without the scheme before
/// them: a server that quotes back only the token (or the user and password of a basic
/// header) has them taken out too.
#[tokio::test]
async fn the_credentials_of_an_authorization_header_are_taken_out_without_their_scheme() {
    let remote = RemoteServer::http("h", "http://127.0.0.1:1/mcp")
        .header("Authorization", "Bearer sk-HEADER-456")
        // `user-1:pa55-w0rd`
        .header("Proxy-Authorization", "Basic dXNlci0xOnBhNTUtdzByZA==");
    let (dispatcher, ledger) = echoing(remote, &[]).await;
    let text = "the token HEADER is unknown; so are BASIC, PAIR and PASSWORD";
    for tool in ["fail", "refuse"] {
        let (message, rows) = echoed(&dispatcher, &ledger, tool, text).await;
        assert_kept_out(
            tool,
            &message,
            &rows,
            &["sk-HEADER-456", "dXNlci0xOnBhNTUtdzByZA==", "pa55-w0rd"],
        );
        assert!(message.contains("is unknown"), "the rest stays: {message}");
    }
}

/// A server that quotes the endpoint's credentials back in a successful result (an echo of
/// what it was sent) has them taken out of the result's content and value too, so they reach
/// neither the model nor a ledger row.
#[tokio::test]
async fn a_result_never_carries_the_endpoints_credentials() {
    let remote = RemoteServer::http("h", "http://127.0.0.1:1/mcp?key=sk-SECRET-123")
        .header("Authorization", "Bearer sk-HEADER-456");
    let (dispatcher, ledger) = echoing(remote, &[]).await;
    let (shown, rows) = echoed_back(&dispatcher, &ledger, "sent Bearer HEADER with KEY").await;
    assert_kept_out("echo", &shown, &rows, &["sk-HEADER-456", "sk-SECRET-123"]);
    assert!(shown.contains("sent"), "the rest stays: {shown}");
}

/// A client of a server that answers the handshake and then stops reading its input: the pipe
/// from the client (a few KiB) fills at the first large request, and the client's writes stay
/// blocked for good.
async fn deaf(remote: RemoteServer) -> McpClient {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (client_side, relay_client) = tokio::io::duplex(4096);
    let (relay_server, server_side) = tokio::io::duplex(64 * 1024);
    let handler = StuckServer {
        started: Arc::default(),
        cancelled: Arc::default(),
    };
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    let deafened = Arc::new(tokio::sync::Notify::new());
    let (mut from_client, mut to_client) = tokio::io::split(relay_client);
    let (mut from_server, mut to_server) = tokio::io::split(relay_server);
    tokio::spawn(async move { tokio::io::copy(&mut from_server, &mut to_client).await });
    let deaf = Arc::clone(&deafened);
    tokio::spawn(async move {
        let mut chunk = [0_u8; 4096];
        loop {
            tokio::select! {
                biased;
                // Holds the stream open, never reading again.
                () = deaf.notified() => std::future::pending::<()>().await,
                read = from_client.read(&mut chunk) => match read {
                    Ok(0) | Err(_) => return,
                    Ok(read) => {
                        if to_server.write_all(&chunk[..read]).await.is_err() {
                            return;
                        }
                    }
                },
            }
        }
    });
    let client = McpClient::connect_over(remote, client_side).await.unwrap();
    deafened.notify_one();
    client
}

/// Arguments larger than the pipe to a server that stopped reading.
fn filling() -> serde_json::Value {
    json!({"pad": "x".repeat(64 * 1024)})
}

/// Against a server that stopped reading, every call ends with `mcp_timeout` soon after its
/// own timeout, not at the hard maximum: the SDK's writes and its cancellation notice stay
/// blocked behind the full pipe.
#[tokio::test]
async fn a_call_to_a_server_that_stopped_reading_ends_at_its_own_timeout() {
    let server = RemoteServer::command("deaf", "unused")
        .call_timeout(std::time::Duration::from_millis(50))
        .max_call_timeout(std::time::Duration::from_secs(600));
    let client = deaf(server).await;
    let calls = (0..8).map(|n| {
        let client = client.clone();
        async move {
            let arguments = if n == 0 { filling() } else { json!({}) };
            let ctx = ToolExecutionContext::new();
            client.call("wait", arguments, &ctx).await
        }
    });
    let ended = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        futures_util::future::join_all(calls),
    )
    .await
    .expect("every call ends near its timeout, not at the hard maximum");
    for result in ended {
        let error = result.unwrap_err();
        assert_eq!(error.code().as_str(), codes::TIMEOUT, "{}", error.message());
    }
}

/// Cancelling the context ends a call at once, while the client's writes are blocked behind a
/// server that stopped reading.
#[tokio::test]
async fn a_call_to_a_server_that_stopped_reading_ends_when_cancelled() {
    let server = RemoteServer::command("deaf", "unused")
        .call_timeout(std::time::Duration::from_secs(600))
        .max_call_timeout(std::time::Duration::from_secs(600));
    let client = deaf(server).await;
    let token = crate::context::CancellationToken::new();
    let ctx = ToolExecutionContext::new().with_cancellation(token.clone());
    let call = tokio::spawn(async move { client.call("wait", filling(), &ctx).await });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    token.cancel();
    let error = tokio::time::timeout(std::time::Duration::from_secs(20), call)
        .await
        .expect("the call ends once cancelled")
        .unwrap()
        .unwrap_err();
    assert_eq!(error.code(), &ErrorCode::Cancelled);
}

/// An endpoint that authenticates by a token in its URL's path, as hosted servers often do.
const PATH_TOKEN_URL: &str = "http://127.0.0.1:1/s/sk-PATH-789/mcp";

/// A token in the URL's path, named with [`RemoteServer::secret`], is taken out of what the
/// server says back (a tool's description, a result, a remote error, a JSON-RPC error) and of
/// the endpoint as the host prints it.
#[tokio::test]
async fn a_token_in_the_urls_path_named_a_secret_is_taken_out() {
    let remote = RemoteServer::http("h", PATH_TOKEN_URL).secret("sk-PATH-789");
    assert!(!format!("{remote:?}").contains("sk-PATH-789"), "{remote:?}");
    let client = connected(EchoingServer, remote.clone()).await;
    let tools = client.tools().await.unwrap();
    let echo = tools
        .definitions()
        .iter()
        .find(|tool| tool.name() == "echo")
        .unwrap();
    assert_eq!(
        echo.description(),
        Some("Answers with the text, as /s/[REDACTED]/mcp does.")
    );
    client.close().await;
    let (dispatcher, ledger) = echoing(remote, &[]).await;
    let text = "the token PATH is refused";
    for tool in ["fail", "refuse"] {
        let (message, rows) = echoed(&dispatcher, &ledger, tool, text).await;
        assert_kept_out(tool, &message, &rows, &["sk-PATH-789"]);
        assert!(message.contains("is refused"), "the rest stays: {message}");
    }
    let (shown, rows) = echoed_back(&dispatcher, &ledger, "sent to /s/PATH/mcp").await;
    assert_kept_out("echo", &shown, &rows, &["sk-PATH-789"]);
    assert!(shown.contains("sent to /s/"), "the rest stays: {shown}");
}

/// A failed connection is reported with the URL cut to its scheme, host and port, so a token
/// in its path is not quoted even when the host did not name it; one it named is taken out of
/// anything else that quotes it.
#[tokio::test]
async fn a_failed_connection_never_quotes_a_token_in_the_urls_path() {
    for named in [false, true] {
        let mut server = RemoteServer::http("h", "http://127.0.0.1:1/s/sk-PATH-TOKEN/mcp")
            .connect_timeout(std::time::Duration::from_secs(10));
        if named {
            server = server.secret("sk-PATH-TOKEN");
        }
        let error = McpClient::connect(server).await.err().unwrap().to_string();
        assert!(!error.contains("sk-PATH-TOKEN"), "{error}");
        assert!(
            error.contains("127.0.0.1:1"),
            "which server failed stays: {error}"
        );
    }
}

/// A forecast, the structured result of [`ForecastServer`]'s tools.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    celsius: f64,
    sky: String,
}

/// Declares its output schema as the SDK's servers do, from a Rust type: `forecast` answers a
/// forecast, `garbled` a value of another shape.
struct ForecastServer;

impl ServerHandler for ForecastServer {
    fn get_info(&self) -> ServerConfig {
        current_era_tools()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object"});
        let serde_json::Value::Object(schema) = schema else {
            unreachable!("an object")
        };
        let tool = |name: &'static str| {
            Tool::new(name, "Tomorrow's weather.", schema.clone()).with_output_schema::<Forecast>()
        };
        Ok(ListToolsResult::with_all_items(vec![
            tool("forecast"),
            tool("garbled"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let value = match request.name.as_ref() {
            "forecast" => json!(Forecast {
                celsius: 21.5,
                sky: "clear".into()
            }),
            _ => json!({"celsius": "warm"}),
        };
        Ok(CallToolResult::structured(value).into())
    }
}

/// An output schema made by the SDK from a Rust type compiles, a result of that type passes
/// with its value, and one of another shape fails the call naming where it breaks the schema.
#[tokio::test]
async fn results_are_held_to_the_output_schema_the_sdk_made_from_a_type() {
    let client = connected(ForecastServer, RemoteServer::command("weather", "unused")).await;
    let tools = client.tools().await.unwrap();
    assert!(tools.skipped().is_empty(), "{:?}", tools.skipped());
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(tools.into_definitions())).build();
    let ctx = ToolExecutionContext::new();
    let forecast = dispatcher
        .dispatch(ToolCall::new("c1", "forecast", json!({})), &ctx)
        .await
        .unwrap();
    assert!(forecast.error_info().is_none(), "{forecast:?}");
    assert_eq!(forecast.as_value().unwrap()["sky"], "clear");

    let garbled = dispatcher
        .dispatch(ToolCall::new("c2", "garbled", json!({})), &ctx)
        .await
        .unwrap();
    let error = garbled.error_info().expect("a failed call");
    assert_eq!(error.code.as_str(), codes::PROTOCOL_ERROR);
    assert!(error.message.contains("at /celsius:"), "{}", error.message);
    assert!(error.message.contains("\"sky\""), "{}", error.message);
    client.close().await;
}
