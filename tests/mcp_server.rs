//! The MCP server against rmcp's own client, in one process over an in-memory duplex stream (the
//! stdio transport's framing): both protocol eras, listing, calls through the pipeline, progress,
//! cancellation and approvals.

mod log_capture;
mod mcp_server_support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_server_support::{TestClient, charging, first_text, fixture, fixture_with, meta};
use prism::call::ToolOutcome;
use prism::dispatch::RecordStatus;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, ClientRequest, ErrorCode,
    PaginatedRequestParams, ProgressToken, RequestMetaObject,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService, ServiceError};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, TestClient>;

async fn connect(server: &prism::mcp::McpServer, client: TestClient) -> Client {
    let transport = mcp_server_support::serve_in_memory(server, 64 * 1024);
    mcp_server_support::start(client, transport).await
}

/// The call re-issued with the sealed `state` it was asked about and a person's "yes".
fn approved_call(name: &str, arguments: Value, state: &str) -> CallToolRequestParams {
    answered_call(name, arguments, state, true)
}

/// The call re-issued with the sealed `state` and the person's answer `approve`.
fn answered_call(
    name: &str,
    arguments: Value,
    state: &str,
    approve: bool,
) -> CallToolRequestParams {
    let mut params = call(name, arguments);
    params.request_state = Some(state.to_owned());
    params.input_responses = Some(
        [(
            "approval".to_owned(),
            json!({"action": "accept", "content": {"approve": approve}}),
        )]
        .into(),
    );
    params
}

/// The names of every tool the client is shown.
async fn listed(client: &Client) -> Vec<String> {
    let tools = client.list_all_tools().await.unwrap();
    tools
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

/// The fixture's tools a client may list, in registry order (`hidden` is filtered out).
const LISTED: [&str; 7] = [
    "add",
    "stats",
    "wipe",
    "slow",
    "pay",
    "multiply",
    "cancellations",
];

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    params
}

#[tokio::test]
async fn tools_list_shows_the_allowed_tools_in_registry_order_with_their_descriptions() {
    let fixture = fixture();
    for client in [TestClient::current(), TestClient::handshake_era()] {
        let client = connect(&fixture.server, client).await;
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<_> = tools.iter().map(|tool| tool.name.to_string()).collect();
        assert_eq!(names, LISTED, "`hidden` is filtered out");
        let add = serde_json::to_value(&tools[0]).unwrap();
        assert_eq!(add["title"], "Add");
        assert_eq!(add["icons"][0]["src"], "https://example.com/add.svg");
        assert_eq!(add["icons"][0]["mimeType"], "image/svg+xml");
        assert_eq!(add["annotations"]["readOnlyHint"], true);
        assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
        assert!(
            add.get("outputSchema").is_none(),
            "add returns a number, not an object"
        );
        let stats = serde_json::to_value(&tools[1]).unwrap();
        assert_eq!(stats["outputSchema"]["type"], "object");
        let wipe = serde_json::to_value(&tools[2]).unwrap();
        assert_eq!(wipe["_meta"]["dev.prism/requiresApproval"], true);
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn tools_list_pages_follow_the_cursor_and_refuse_a_forged_one() {
    let fixture = fixture_with(|builder| builder.page_size(2));
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    let cursor = first.next_cursor.clone().expect("more pages follow");
    let all = client.list_all_tools().await.unwrap();
    assert_eq!(all.len(), 7);
    let second = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.tools[0].name, "wipe");
    // The cursor is the client's text: the error never repeats it (it could be anything, a
    // secret included).
    let forged = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("sk-live-0123456789".into())),
        ))
        .await;
    match forged {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert!(!error.message.contains("0123456789"), "{}", error.message);
        }
        other => panic!("a forged cursor must be refused, got {other:?}"),
    }
}

/// One `tools/list` page from `cursor` (the first page without one).
async fn list_page(
    client: &Client,
    cursor: Option<String>,
) -> Result<rmcp::model::ListToolsResult, ServiceError> {
    client
        .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
        .await
}

/// The names on `page`.
fn names(page: &rmcp::model::ListToolsResult) -> Vec<String> {
    page.tools
        .iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

/// The message of the `-32602` error a refused cursor gets.
fn refused_cursor(result: Result<rmcp::model::ListToolsResult, ServiceError>) -> String {
    match result {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{}", error.message);
            error.message.into_owned()
        }
        other => panic!("the cursor must be refused, got {other:?}"),
    }
}

#[tokio::test]
async fn tools_list_pages_show_every_tool_once() {
    let fixture = fixture_with(|builder| builder.page_size(3));
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let page = list_page(&client, cursor).await.unwrap();
        pages.push(names(&page));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(
        pages,
        [
            vec!["add", "stats", "wipe"],
            vec!["slow", "pay", "multiply"],
            vec!["cancellations"],
        ]
    );
    // Deterministic: the same cursor gives the same page again.
    let first = list_page(&client, None).await.unwrap();
    let again = list_page(&client, None).await.unwrap();
    assert_eq!(first.next_cursor, again.next_cursor);
    let second = list_page(&client, first.next_cursor).await.unwrap();
    assert_eq!(names(&second), ["slow", "pay", "multiply"]);
}

#[tokio::test]
async fn tools_list_refuses_a_plain_offset_as_a_cursor() {
    let fixture = fixture_with(|builder| builder.page_size(2));
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    for offset in ["1", "2", "0", "6"] {
        let message = refused_cursor(list_page(&client, Some(offset.into())).await);
        assert!(message.contains("not one this server wrote"), "{message}");
    }
}

#[tokio::test]
async fn tools_list_refuses_a_very_long_cursor_without_repeating_it() {
    let fixture = fixture_with(|builder| builder.page_size(2));
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let written = list_page(&client, None).await.unwrap().next_cursor.unwrap();
    for long in [
        "7".repeat(100_000),
        format!("{written}{}", "sk-live-0123456789".repeat(1_000)),
    ] {
        let message = refused_cursor(list_page(&client, Some(long)).await);
        assert!(message.contains("not one this server wrote"), "{message}");
        assert!(message.len() < 200, "{message}");
        assert!(
            !message.contains("777") && !message.contains("0123456789"),
            "{message}"
        );
    }
}

#[tokio::test]
async fn a_cursor_from_before_the_tool_list_changed_is_refused() {
    let fixture = fixture_with(|builder| builder.page_size(2));
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let first = list_page(&client, None).await.unwrap();
    assert_eq!(names(&first), ["add", "stats"]);
    let stale = first.next_cursor.unwrap();

    // `add` removed: the old cursor would now skip `wipe`.
    assert!(fixture.registry.remove("add").is_some());
    let message = refused_cursor(list_page(&client, Some(stale.clone())).await);
    assert!(
        message.contains("the tool list changed") && message.contains("from the start"),
        "{message}"
    );
    // Listing again from the start pages through the new list.
    let first = list_page(&client, None).await.unwrap();
    assert_eq!(names(&first), ["stats", "wipe"]);
    let fresh = first.next_cursor.unwrap();
    assert_eq!(
        names(&list_page(&client, Some(fresh.clone())).await.unwrap()),
        ["slow", "pay"]
    );

    // A tool added at the end changes the list too, although the offset still points right.
    fixture
        .registry
        .register(
            prism::ToolDefinition::builder("late")
                .parameters(json!({"type": "object"}))
                .run_sync(|_, _| Ok(json!("late"))),
        )
        .unwrap();
    let message = refused_cursor(list_page(&client, Some(fresh)).await);
    assert!(message.contains("the tool list changed"), "{message}");
    assert!(!message.contains(&stale), "{message}");
}

#[tokio::test]
async fn a_cursor_written_for_one_scope_is_refused_under_another() {
    use prism::ToolExecutionContext;
    use prism::registry::{ToolGrant, ToolScope};
    let everything = fixture_with(|builder| builder.page_size(2));
    let narrowed = fixture_with(|builder| {
        builder
            .page_size(2)
            .context(
                ToolExecutionContext::new().with_scope(ToolScope::new(ToolGrant::only([
                    "add", "stats", "slow", "pay",
                ]))),
            )
    });
    let wide = connect(&everything.server, TestClient::handshake_era()).await;
    let narrow = connect(&narrowed.server, TestClient::handshake_era()).await;
    let cursor = list_page(&wide, None).await.unwrap().next_cursor.unwrap();
    let message = refused_cursor(list_page(&narrow, Some(cursor)).await);
    assert!(message.contains("the tool list changed"), "{message}");
    let narrow_first = list_page(&narrow, None).await.unwrap();
    assert_eq!(names(&narrow_first), ["add", "stats"]);
    let page = list_page(&narrow, narrow_first.next_cursor).await.unwrap();
    assert_eq!(names(&page), ["slow", "pay"]);
}

#[tokio::test]
async fn a_cursor_works_on_another_server_over_the_same_tools() {
    // Two servers built apart over equal registries, as two processes behind one address are.
    let one = fixture_with(|builder| builder.page_size(2));
    let other = fixture_with(|builder| builder.page_size(2));
    let first = connect(&one.server, TestClient::current()).await;
    let second = connect(&other.server, TestClient::current()).await;
    let mut pages = Vec::new();
    let mut cursor = None;
    for client in [&first, &second, &first, &second] {
        let page = list_page(client, cursor).await.unwrap();
        pages.extend(names(&page));
        cursor = page.next_cursor;
    }
    assert_eq!(cursor, None);
    assert_eq!(pages, LISTED);
}

#[tokio::test]
async fn calls_run_through_the_pipeline_and_report_each_outcome() {
    let fixture = fixture();
    let client = connect(&fixture.server, TestClient::handshake_era()).await;

    let sum = client
        .call_tool(call("add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(sum.is_error, Some(false));
    assert_eq!(first_text(&sum), "5");

    let stats = client
        .call_tool(call("stats", json!({"values": [1, 2, 4]})))
        .await
        .unwrap();
    assert_eq!(
        stats.structured_content,
        Some(json!({"sum": 7, "count": 3}))
    );
    assert_eq!(
        first_text(&stats),
        r#"{"sum":7,"count":3}"#,
        "structured output also as text"
    );

    let denied = client.call_tool(call("hidden", json!({}))).await.unwrap();
    assert_eq!(denied.is_error, Some(true));
    assert_eq!(meta(&denied)["dev.prism/error"]["reason"], "tool_denied");

    let bad = client
        .call_tool(call("multiply", json!({"a": "two", "b": 2})))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(meta(&bad)["dev.prism/error"]["code"], "invalid_arguments");

    let unknown = client.call_tool(call("nope", json!({}))).await;
    match unknown {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert_eq!(error.message, "Unknown tool: nope");
        }
        other => panic!("an unknown tool is a JSON-RPC error, got {other:?}"),
    }

    // Every call, refused or not, left its rows in the dispatcher's ledger.
    let rows: Vec<_> = fixture
        .ledger
        .records()
        .iter()
        .map(|row| (row.tool_name.to_string(), row.status))
        .collect();
    assert!(
        rows.contains(&("hidden".into(), RecordStatus::Blocked)),
        "{rows:?}"
    );
    assert!(
        rows.contains(&("nope".into(), RecordStatus::Blocked)),
        "{rows:?}"
    );
    assert_eq!(
        rows.iter()
            .filter(|row| row.1 == RecordStatus::Finished)
            .count(),
        2
    );
    // Call ids are the server's: `mcp-`, 64 random bits in hex, `-` and the call's number, so
    // that servers started one per client stay apart in a shared ledger.
    for row in fixture.ledger.records() {
        let id = row.tool_call_id.as_str();
        let parts: Vec<&str> = id.split('-').collect();
        assert!(
            parts.len() == 3
                && parts[0] == "mcp"
                && parts[1].len() == 16
                && parts[1].bytes().all(|byte| byte.is_ascii_hexdigit())
                && parts[2].parse::<u64>().is_ok(),
            "call id {id}"
        );
    }
}

#[tokio::test]
async fn progress_reaches_the_client_with_increasing_values() {
    let fixture = fixture();
    let client = TestClient::handshake_era();
    let progress = client.progress.clone();
    let client = connect(&fixture.server, client).await;
    let mut params = call("slow", json!({"finish": true}));
    params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
        rmcp::model::NumberOrString::Number(7),
    )));
    let done = client.call_tool(params).await.unwrap();
    assert_eq!(first_text(&done), "finished");
    // Notifications may trail the response by a scheduling turn.
    for _ in 0..100 {
        if progress.lock().unwrap().len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen = progress.lock().unwrap().clone();
    let values: Vec<f64> = seen.iter().map(|update| update.progress).collect();
    assert_eq!(
        values,
        [1.0, 2.0, 3.0, 4.0],
        "the text update counts one past the last value"
    );
    assert_eq!(seen[0].total, Some(3.0));
    assert_eq!(seen[0].message.as_deref(), Some("step 1"));
    assert_eq!(seen[3].message.as_deref(), Some(r#""almost""#));
}

#[tokio::test]
async fn a_cancelled_request_cancels_the_call() {
    let fixture = fixture();
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(call("slow", json!({}))));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    // Wait until the tool is running (its started row is written).
    mcp_server_support::wait_for_row(&fixture.ledger, RecordStatus::Started).await;
    handle
        .cancel(Some("the user pressed stop".into()))
        .await
        .unwrap();
    let error = mcp_server_support::wait_for_row(&fixture.ledger, RecordStatus::Error).await;
    match error.outcome {
        Some(ToolOutcome::Error(error)) => assert_eq!(error.code.as_str(), "cancelled"),
        other => panic!("expected a cancelled error, got {other:?}"),
    }
}

#[tokio::test]
async fn approvals_on_the_current_protocol_go_through_input_required() {
    let fixture = fixture();
    let client = TestClient::current();
    let asked = client.asked.clone();
    let client = connect(&fixture.server, client).await;
    // rmcp's client answers the form through its handler and re-issues the call.
    let done = client
        .call_tool(call("wipe", json!({"path": "/tmp/x"})))
        .await
        .unwrap();
    assert_eq!(first_text(&done), "wiped /tmp/x");
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 1);
    assert!(asked.lock().unwrap()[0].contains(r#"{"path":"/tmp/x"}"#));

    // The same sealed approval cannot run the call twice, nor another call.
    let first = client
        .call_tool_once(call("wipe", json!({"path": "/tmp/y"})))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(required) = first else {
        panic!("a call needing approval asks first, got {first:?}");
    };
    let state = required.request_state.clone().unwrap();
    let approved = |arguments: Value| approved_call("wipe", arguments, &state);
    let other = client
        .call_tool_once(approved(json!({"path": "/"})))
        .await
        .unwrap();
    let CallToolResponse::Complete(other) = other else {
        panic!("no second question")
    };
    assert_eq!(other.is_error, Some(true));
    assert_eq!(
        meta(&other)["dev.prism/error"]["reason"],
        "permission_denied"
    );
    let once = client
        .call_tool_once(approved(json!({"path": "/tmp/y"})))
        .await
        .unwrap();
    let CallToolResponse::Complete(once) = once else {
        panic!("the approved call runs")
    };
    assert_eq!(first_text(&once), "wiped /tmp/y");
    let twice = client
        .call_tool_once(approved(json!({"path": "/tmp/y"})))
        .await
        .unwrap();
    let CallToolResponse::Complete(twice) = twice else {
        panic!("no second question")
    };
    assert!(
        first_text(&twice).contains("already used"),
        "{}",
        first_text(&twice)
    );
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 2);

    // A forged state is a protocol error.
    let mut forged = approved(json!({"path": "/tmp/y"}));
    forged.request_state = Some(format!("{state}x"));
    match client.call_tool_once(forged).await {
        Err(ServiceError::McpError(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
        other => panic!("a forged requestState must be refused, got {other:?}"),
    }
}

#[tokio::test]
async fn an_approval_does_not_cover_a_tool_registered_again_with_another_definition() {
    let fixture = fixture();
    let client = connect(&fixture.server, TestClient::current()).await;
    let first = client
        .call_tool_once(call("wipe", json!({"path": "/tmp/x"})))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(required) = first else {
        panic!("a call needing approval asks first, got {first:?}");
    };
    let state = required.request_state.clone().unwrap();

    // While the person decides, the host replaces `wipe` with a wider tool of the same name.
    let replaced = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let runs = std::sync::Arc::clone(&replaced);
    let wider = prism::ToolDefinition::builder("wipe")
        .description("Deletes a directory and everything under it.")
        .parameters(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
        .requires_approval(true)
        .run_sync(move |_, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(json!("wiped everything"))
        });
    fixture.registry.register(wider).unwrap();
    let answered = client
        .call_tool_once(approved_call("wipe", json!({"path": "/tmp/x"}), &state))
        .await
        .unwrap();
    let CallToolResponse::Complete(answered) = answered else {
        panic!("no second question")
    };
    assert_eq!(
        replaced.load(Ordering::SeqCst),
        0,
        "the new tool was never approved"
    );
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 0);
    assert_eq!(answered.is_error, Some(true));
    assert_eq!(
        meta(&answered)["dev.prism/error"]["reason"],
        "permission_denied"
    );
    let text = first_text(&answered);
    assert!(
        text.contains("wipe changed since its approval was asked"),
        "{text}"
    );
    assert!(
        !text.contains("/tmp/x"),
        "no argument in the message: {text}"
    );
}

#[tokio::test]
async fn approvals_in_the_handshake_era_are_asked_during_the_call() {
    let fixture = fixture();
    let mut refusing = TestClient::handshake_era();
    refusing.approve = false;
    let client = connect(&fixture.server, refusing).await;
    let refused = client
        .call_tool(call("wipe", json!({"path": "/"})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(first_text(&refused).contains("refused"));
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 0);

    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let done = client
        .call_tool(call("wipe", json!({"path": "/tmp/z"})))
        .await
        .unwrap();
    assert_eq!(first_text(&done), "wiped /tmp/z");
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_client_that_cannot_elicit_is_told_the_approval_is_pending() {
    let fixture = fixture();
    for mut client in [TestClient::current(), TestClient::handshake_era()] {
        client.elicitation = false;
        let client = connect(&fixture.server, client).await;
        let pending = client
            .call_tool(call("wipe", json!({"path": "/"})))
            .await
            .unwrap();
        assert_eq!(pending.is_error, Some(true));
        assert!(
            first_text(&pending).starts_with("Approval pending: wipe"),
            "{}",
            first_text(&pending)
        );
    }
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_request_scope_narrows_both_the_list_and_the_calls() {
    use prism::registry::{ToolGrant, ToolScope};
    // Over stdio there is no HTTP request: such callers may only add.
    let fixture = fixture_with(|builder| {
        builder.authorize(|request| {
            request
                .is_none()
                .then(|| ToolScope::new(ToolGrant::only(["add"])))
        })
    });
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    assert_eq!(listed(&client).await, ["add"]);
    let refused = client
        .call_tool(call("stats", json!({"values": [1]})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(meta(&refused)["dev.prism/error"]["reason"], "tool_denied");
    let sum = client
        .call_tool(call("add", json!({"a": 1, "b": 1})))
        .await
        .unwrap();
    assert_eq!(first_text(&sum), "2");
}

#[tokio::test]
async fn the_servers_own_scope_narrows_the_list_as_it_narrows_the_calls() {
    use prism::ToolExecutionContext;
    use prism::registry::{ToolGrant, ToolScope};
    let own = ToolScope::new(ToolGrant::only(["add", "stats"]));
    let fixture = fixture_with(|builder| {
        builder
            .context(ToolExecutionContext::new().with_scope(own))
            // The request's scope, within the server's: `wipe` stays out, and `multiply` is
            // granted here but not by the server.
            .authorize(|_| Some(ToolScope::new(ToolGrant::only(["add", "multiply"]))))
    });
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    assert_eq!(listed(&client).await, ["add"]);
    for (name, arguments) in [
        ("stats", json!({"values": [1]})),
        ("multiply", json!({"a": 2, "b": 3})),
    ] {
        let refused = client.call_tool(call(name, arguments)).await.unwrap();
        assert_eq!(meta(&refused)["dev.prism/error"]["reason"], "tool_denied");
    }
}

#[tokio::test]
async fn a_reissued_approval_of_a_tool_with_an_effect_gets_the_recorded_outcome() {
    let (server, _ledger, charged) = charging(Duration::from_secs(900));
    let client = connect(&server, TestClient::current()).await;
    let asked = client
        .call_tool_once(call("charge", json!({"cents": 5})))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(required) = asked else {
        panic!("a call needing approval asks first, got {asked:?}");
    };
    let state = required.request_state.clone().unwrap();
    let approved = || approved_call("charge", json!({"cents": 5}), &state);
    // The second time is a client whose stream dropped before it read the first answer.
    for attempt in ["first", "re-issued"] {
        let answered = client.call_tool_once(approved()).await.unwrap();
        let CallToolResponse::Complete(answered) = answered else {
            panic!("no second question")
        };
        assert_eq!(
            answered.structured_content,
            Some(json!({"charge": 1})),
            "{attempt}: {}",
            first_text(&answered)
        );
    }
    assert_eq!(charged.load(Ordering::SeqCst), 1, "the effect ran once");
}

#[tokio::test]
async fn an_approval_that_never_expires_still_runs_each_approved_call_once() {
    let fixture = fixture_with(|builder| builder.approval_ttl(Duration::MAX));
    let client = connect(&fixture.server, TestClient::current()).await;
    // The second redemption sweeps the table of used approvals, which the first left non-empty.
    for path in ["/tmp/x", "/tmp/y"] {
        // A panic in the server would leave the call unanswered: bounded, so it fails instead.
        let done = tokio::time::timeout(
            Duration::from_secs(30),
            client.call_tool(call("wipe", json!({ "path": path }))),
        )
        .await
        .expect("the approved call is answered")
        .unwrap();
        assert_eq!(first_text(&done), format!("wiped {path}"));
    }
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 2);
}

/// Every `tools/call` gets exactly one answer: a panic in the host's `authorize` hook refuses
/// the call (it grants nothing) instead of ending rmcp's handler task without an answer.
#[tokio::test]
async fn a_panicking_authorize_hook_still_answers_the_call() {
    let fixture = fixture_with(|builder| {
        builder.authorize(|_| -> Option<prism::registry::ToolScope> {
            panic!("the host's authorisation backend failed")
        })
    });
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let answered = tokio::time::timeout(
        Duration::from_secs(5),
        client.call_tool(call("add", json!({"a": 1, "b": 2}))),
    )
    .await;
    let answered = answered
        .expect("tools/call gets an answer")
        .expect("a result");
    assert_eq!(answered.is_error, Some(true), "{}", first_text(&answered));
}

/// Same for `tools/list`, which then lists no tool.
#[tokio::test]
async fn a_panicking_authorize_hook_still_answers_the_list() {
    let fixture = fixture_with(|builder| {
        builder.authorize(|_| -> Option<prism::registry::ToolScope> {
            panic!("the host's authorisation backend failed")
        })
    });
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let answered = tokio::time::timeout(Duration::from_secs(5), client.list_tools(None)).await;
    let listed = answered
        .expect("tools/list gets an answer")
        .expect("a list");
    assert!(listed.tools.is_empty(), "{:?}", listed.tools);
}

/// A sealed `requestState` is used up by its first answer: one answered "no" cannot be sent
/// again with "yes".
#[tokio::test]
async fn a_state_answered_no_cannot_be_replayed_with_yes() {
    let fixture = fixture();
    let client = connect(&fixture.server, TestClient::current()).await;
    let args = json!({"path": "/"});
    let asked = client
        .call_tool_once(call("wipe", args.clone()))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(required) = asked else {
        panic!("a call needing approval asks first, got {asked:?}");
    };
    let state = required.request_state.clone().unwrap();

    let refused = client
        .call_tool_once(answered_call("wipe", args.clone(), &state, false))
        .await
        .unwrap();
    let CallToolResponse::Complete(refused) = refused else {
        panic!("no second question")
    };
    assert_eq!(refused.is_error, Some(true), "{}", first_text(&refused));
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 0);

    // The same state, replayed with the other answer.
    let replayed = client
        .call_tool_once(answered_call("wipe", args, &state, true))
        .await
        .unwrap();
    let CallToolResponse::Complete(replayed) = replayed else {
        panic!("no second question")
    };
    assert!(
        first_text(&replayed).contains("already used"),
        "{}",
        first_text(&replayed)
    );
    assert_eq!(
        fixture.wiped.load(Ordering::SeqCst),
        0,
        "a state answered \"no\" was replayed with \"yes\" and ran the call: {}",
        first_text(&replayed)
    );
}

/// A 2026-07-28 client whose elicitation capability is URL mode only: it cannot fill a form.
#[derive(Clone)]
struct UrlOnlyClient;

impl rmcp::ClientHandler for UrlOnlyClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        use rmcp::model::{
            ClientCapabilities, ClientConfig, ElicitationCapability, Implementation,
            UrlElicitationCapability,
        };
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_url(UrlElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new("url-only", "0.0.0"))
            .with_protocol_version(rmcp::model::ProtocolVersion::V_2026_07_28)
    }
}

/// Approvals are asked with an elicitation form: a 2026-07-28 client that declared only URL
/// elicitation gets the `isError` result naming the pending approval, not a form it cannot show.
#[tokio::test]
async fn a_current_client_with_url_only_elicitation_is_told_the_approval_is_pending() {
    let fixture = fixture();
    let client = rmcp::service::serve_client_with_lifecycle(
        UrlOnlyClient,
        mcp_server_support::serve_in_memory(&fixture.server, 64 * 1024),
        rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("the client starts");
    let answer = client
        .call_tool_once(call("wipe", json!({"path": "/"})))
        .await
        .unwrap();
    match answer {
        CallToolResponse::Complete(result) => {
            assert_eq!(result.is_error, Some(true));
            assert!(
                first_text(&result).starts_with("Approval pending: wipe"),
                "{}",
                first_text(&result)
            );
        }
        other => panic!("a client that cannot show a form was sent a form elicitation: {other:?}"),
    }
}

/// A sealed approval binds the exact arguments, integers past 2^53 included (RFC 8785 alone
/// writes 2^53 and 2^53 + 1 alike).
#[tokio::test]
async fn an_approval_for_one_large_integer_does_not_run_another() {
    use prism::{Dispatcher, ToolDefinition, ToolRegistry};
    use std::sync::{Arc, Mutex};
    let ran = Arc::new(Mutex::new(Vec::<Value>::new()));
    let seen = Arc::clone(&ran);
    let transfer = ToolDefinition::builder("transfer")
        .parameters(json!({
            "type": "object",
            "properties": {"amount": {"type": "integer"}},
            "required": ["amount"]
        }))
        .requires_approval(true)
        .run_sync(move |args: &Value, _| {
            seen.lock().unwrap().push(args["amount"].clone());
            Ok(json!("transferred"))
        });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([transfer])).build();
    let server = prism::mcp::McpServer::builder(dispatcher).build().unwrap();
    let client = connect(&server, TestClient::current()).await;

    let approved_amount: u64 = 1 << 53; // 9007199254740992
    let asked = client
        .call_tool_once(call("transfer", json!({"amount": approved_amount})))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(required) = asked else {
        panic!("a call needing approval asks first, got {asked:?}");
    };
    let state = required.request_state.clone().unwrap();
    let other_amount = approved_amount + 1; // 9007199254740993
    let changed = client
        .call_tool_once(answered_call(
            "transfer",
            json!({"amount": other_amount}),
            &state,
            true,
        ))
        .await
        .unwrap();
    let CallToolResponse::Complete(changed) = changed else {
        panic!("no second question")
    };
    assert_eq!(
        *ran.lock().unwrap(),
        Vec::<Value>::new(),
        "the approval for {approved_amount} ran a call with other arguments: {}",
        first_text(&changed)
    );
}

/// Two different calls of a tool with an effect policy are two effects, even when their amounts
/// differ only past 2^53.
#[tokio::test]
async fn two_payments_of_different_large_amounts_both_run() {
    let fixture = fixture();
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let first: u64 = 1 << 53;
    let one = client
        .call_tool(call("pay", json!({"cents": first})))
        .await
        .unwrap();
    let two = client
        .call_tool(call("pay", json!({"cents": first + 1})))
        .await
        .unwrap();
    assert_eq!(
        fixture.paid.load(Ordering::SeqCst),
        2,
        "the second payment was answered with the first's outcome: {} / {}",
        first_text(&one),
        first_text(&two)
    );
}

/// No secret known to the redactor reaches an MCP answer, not even one made of digits that a
/// tool returns as a JSON number (a card number): it leaves neither the text nor
/// `structuredContent`.
#[tokio::test]
async fn a_secret_returned_as_a_number_is_redacted_in_the_answer() {
    use prism::dispatch::SecretRedactor;
    use prism::{Dispatcher, ToolDefinition, ToolRegistry};
    const CARD: &str = "4111111111111111";
    let card = ToolDefinition::builder("card")
        .parameters(json!({"type": "object"}))
        .run_sync(|_, _| Ok(json!({"card": 4_111_111_111_111_111_u64})));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([card]))
        .redactor(SecretRedactor::new([CARD]))
        .build();
    let server = prism::mcp::McpServer::builder(dispatcher).build().unwrap();
    let client = connect(&server, TestClient::handshake_era()).await;
    let answer = client.call_tool(call("card", json!({}))).await.unwrap();
    let wire = serde_json::to_string(&answer).unwrap();
    assert!(
        !wire.contains(CARD),
        "the secret reached the answer: {wire}"
    );
}

/// Tools whose names MCP does not accept (a client may refuse a whole list for one) are left
/// out of every page, which stay the same from one listing to the next; a call naming one still
/// goes through the dispatcher.
#[tokio::test]
async fn tools_whose_names_mcp_does_not_accept_are_left_out_of_every_page() {
    use prism::dispatch::SecretRedactor;
    use prism::{Dispatcher, ToolDefinition, ToolRegistry};
    const KEY: &str = "sk-live-0123456789";
    let (logged, _logging) = log_capture::capture(tracing::Level::INFO);

    let tool = |name: &str| {
        ToolDefinition::builder(name)
            .parameters(json!({"type": "object"}))
            .run_sync(|_, _| Ok(json!("ran")))
    };
    let long_with_key = format!("key {KEY} {}", "y".repeat(100_000));
    let registry = ToolRegistry::from_iter([
        tool("a"),
        tool(&long_with_key),
        tool("b"),
        tool("has space"),
        tool(&"x".repeat(129)),
        tool("c"),
        tool("ünïcode"),
        tool("d.e-f_1"),
        tool(&"z".repeat(128)),
    ]);
    let dispatcher = Dispatcher::builder(registry)
        .redactor(SecretRedactor::new([KEY]))
        .build();
    let server = prism::mcp::McpServer::builder(dispatcher)
        .page_size(2)
        .build()
        .unwrap();
    let client = connect(&server, TestClient::handshake_era()).await;

    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(cursor.clone()),
            ))
            .await
            .unwrap();
        pages.push(
            page.tools
                .iter()
                .map(|tool| tool.name.to_string())
                .collect::<Vec<_>>(),
        );
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let z = "z".repeat(128);
    assert_eq!(
        pages,
        [vec!["a", "b"], vec!["c", "d.e-f_1"], vec![z.as_str()],]
    );
    assert_eq!(
        listed(&client).await,
        ["a", "b", "c", "d.e-f_1", z.as_str()],
        "the same again"
    );

    let log = logged.text();
    let warning = log
        .lines()
        .find(|line| line.contains("left out of the MCP tools/list"))
        .expect("the left-out tools are logged");
    assert!(warning.contains("count=4"), "{warning}");
    assert!(warning.len() < 1_000, "{} bytes", warning.len());
    assert!(!log.contains(KEY), "the secret reached the log");
    assert!(!log.contains(&"y".repeat(1_000)), "a name was logged whole");

    let answer = client
        .call_tool(call("has space", json!({})))
        .await
        .unwrap();
    assert_eq!(first_text(&answer), "ran");
}

/// A `tools/call` whose arguments are no object (a model that wrote them as a JSON string, say)
/// is an invalid call: an `isError` result with the reason, through the pipeline, in both eras.
/// Not "method not found", which rmcp answers for a call it cannot read; parameters naming no
/// tool are invalid parameters, and other methods stay unknown.
#[tokio::test]
async fn a_call_whose_arguments_are_not_an_object_is_refused_with_the_reason() {
    let fixture = fixture();
    for (client, current) in [
        (TestClient::current(), true),
        (TestClient::handshake_era(), false),
    ] {
        let client = connect(&fixture.server, client).await;
        let send = |method: &str, params: Value| {
            let request =
                ClientRequest::CustomRequest(rmcp::model::CustomRequest::new(method, Some(params)));
            client.send_request(request)
        };
        for (arguments, kind) in [
            (json!("{\"a\": 1, \"b\": 2}"), "a string"),
            (json!([1, 2]), "an array"),
        ] {
            let answer = send("tools/call", json!({"name": "add", "arguments": arguments}))
                .await
                .unwrap();
            let rmcp::model::ServerResult::CallToolResult(refused) = answer else {
                panic!("a tool result, got {answer:?}");
            };
            assert_eq!(refused.is_error, Some(true));
            // Shaped for the client's era, as rmcp shapes every other result.
            assert_eq!(refused.result_type.is_some(), current, "{refused:?}");
            let text = first_text(&refused);
            assert!(text.contains("must be a JSON object"), "{text}");
            assert!(text.contains(kind), "{text}");
            assert_eq!(
                meta(&refused)["dev.prism/error"]["reason"],
                "invalid_arguments"
            );
        }
        match send("tools/call", json!({"name": 7, "arguments": {}})).await {
            Err(ServiceError::McpError(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
            other => panic!("a call naming no tool is invalid, got {other:?}"),
        }
        match send("tools/other", json!({})).await {
            Err(ServiceError::McpError(error)) => {
                assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND)
            }
            other => panic!("another method is unknown, got {other:?}"),
        }
        client.cancel().await.unwrap();
    }
    let rows = fixture.ledger.records();
    assert_eq!(
        rows.iter()
            .filter(|row| row.status == RecordStatus::Blocked)
            .count(),
        4,
        "each refused call has its row: {rows:?}"
    );
}

/// A request of a method this server does not know is answered `-32601` without the method's
/// text as the client wrote it: like a requested tool name, it is redacted and cut.
#[tokio::test]
async fn an_unknown_method_is_named_redacted_and_cut() {
    use prism::dispatch::SecretRedactor;
    use prism::{Dispatcher, ToolRegistry};
    const KEY: &str = "sk-live-0123456789abcdef";
    let dispatcher = Dispatcher::builder(ToolRegistry::new())
        .redactor(SecretRedactor::new([KEY]))
        .build();
    let server = prism::mcp::McpServer::builder(dispatcher).build().unwrap();
    let client = connect(&server, TestClient::handshake_era()).await;
    let long = format!("x/{}", "y".repeat(100_000));
    for method in [format!("tools/{KEY}"), long] {
        let request =
            ClientRequest::CustomRequest(rmcp::model::CustomRequest::new(method.clone(), None));
        match client.send_request(request).await {
            Err(ServiceError::McpError(error)) => {
                assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
                assert!(!error.message.contains(KEY), "{}", error.message);
                assert!(error.message.len() < 1000, "{} bytes", error.message.len());
            }
            other => panic!("an unknown method, got {other:?}"),
        }
    }
}
