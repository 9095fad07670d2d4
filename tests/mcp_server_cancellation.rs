//! The MCP server when the client cancels at awkward moments, leaves a question unanswered, or
//! stops reading: a cancelled call never runs its effect, an unanswered approval ends, and a
//! client that reads slowly never holds up the tool.

mod mcp_server_support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_server_support::{charging, first_text, fixture, serve_in_memory, wait_for_row};
use prism::call::ToolOutcome;
use prism::dispatch::{InMemoryLedger, RecordStatus, ToolCallRecord};
use prism::mcp::McpServer;
use prism::{Dispatcher, ToolDefinition, ToolExecutionContext, ToolRegistry};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, PeerRequestOptions, RequestContext, RoleClient, RunningService,
    serve_client_with_lifecycle,
};
use rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

fn call(name: &str, arguments: Value) -> ClientRequest {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    ClientRequest::CallToolRequest(CallToolRequest::new(params))
}

fn error_code(row: &ToolCallRecord) -> &str {
    match &row.outcome {
        Some(ToolOutcome::Error(error) | ToolOutcome::Blocked(error)) => error.code.as_str(),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// rmcp hands the request and the `notifications/cancelled` right behind it to separate tasks,
/// so the cancellation may be handled before the call of a tool with an effect registers to
/// hear it. It must still stop the call before its effect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_right_behind_its_request_stops_the_effect() {
    for round in 0..20 {
        let fixture = fixture();
        let client = mcp_server_support::start(
            mcp_server_support::TestClient::handshake_era(),
            serve_in_memory(&fixture.server, 64 * 1024),
        )
        .await;
        let handle = client
            .send_cancellable_request(
                call("pay", json!({ "cents": round })),
                PeerRequestOptions::no_options(),
            )
            .await
            .unwrap();
        handle.cancel(None).await.unwrap();
        let ended = wait_for_row(&fixture.ledger, RecordStatus::Error).await;
        assert_eq!(error_code(&ended), "cancelled", "round {round}");
        assert_eq!(fixture.paid.load(Ordering::SeqCst), 0, "round {round}");
        let _ = client.cancel().await;
    }
}

/// A handshake-era client that can elicit, whose person answers "approve" only when the test
/// says so.
#[derive(Clone)]
struct PersonAtTheClient {
    asked: Arc<tokio::sync::Notify>,
    answer: Arc<tokio::sync::Semaphore>,
}

impl PersonAtTheClient {
    fn new() -> Self {
        Self {
            asked: Arc::new(tokio::sync::Notify::new()),
            answer: Arc::new(tokio::sync::Semaphore::new(0)),
        }
    }
}

impl ClientHandler for PersonAtTheClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("person", "0.0.0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.notify_one();
        self.answer.acquire().await.unwrap().forget();
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true})))
    }
}

/// A session of `server` whose client is `PersonAtTheClient`.
async fn asking_a_person(
    server: &McpServer,
) -> (
    PersonAtTheClient,
    RunningService<RoleClient, PersonAtTheClient>,
) {
    let person = PersonAtTheClient::new();
    let client = serve_client_with_lifecycle(
        person.clone(),
        serve_in_memory(server, 64 * 1024),
        ClientLifecycleMode::Initialize,
    )
    .await
    .unwrap();
    (person, client)
}

#[tokio::test]
async fn a_call_cancelled_while_its_approval_is_asked_never_runs() {
    let (server, ledger, charged) = charging(Duration::from_secs(60));
    let (person, client) = asking_a_person(&server).await;
    let handle = client
        .send_cancellable_request(
            call("charge", json!({"cents": 5})),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), person.asked.notified())
        .await
        .expect("the person is asked");
    handle.cancel(Some("pressed stop".into())).await.unwrap();
    // The refusal is recorded once the server heard the cancellation; only then does the person
    // answer, too late (one permit for the stale question, one for the next call's).
    let refused = wait_for_row(&ledger, RecordStatus::Blocked).await;
    assert_eq!(error_code(&refused), "permission_denied");
    match &refused.outcome {
        Some(ToolOutcome::Blocked(error)) => {
            assert!(error.message.contains("cancelled"), "{}", error.message)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    person.answer.add_permits(2);
    // A later call still runs: the answer that came late approved nothing.
    let ran = client
        .call_tool(CallToolRequestParams::new("charge"))
        .await
        .unwrap();
    assert_eq!(ran.structured_content, Some(json!({"charge": 1})));
    assert_eq!(
        charged.load(Ordering::SeqCst),
        1,
        "only the second call ran"
    );
}

#[tokio::test]
async fn an_approval_nobody_answers_ends_when_its_question_expires() {
    let (server, _ledger, charged) = charging(Duration::from_millis(300));
    let (_person, client) = asking_a_person(&server).await;
    let unanswered = tokio::time::timeout(
        Duration::from_secs(30),
        client.call_tool(CallToolRequestParams::new("charge")),
    )
    .await
    .expect("the call ends without an answer")
    .unwrap();
    assert_eq!(unanswered.is_error, Some(true));
    assert!(
        first_text(&unanswered).starts_with("No answer to the approval of charge"),
        "{}",
        first_text(&unanswered)
    );
    assert_eq!(charged.load(Ordering::SeqCst), 0);
}

/// A client that asked for progress and then reads nothing: the notifications fill the
/// connection, and the tool must run to its end all the same.
#[tokio::test]
async fn a_client_that_stops_reading_never_holds_up_the_tool() {
    let chatty = ToolDefinition::builder("chatty")
        .parameters(json!({"type": "object"}))
        .run(|_args: Value, ctx: ToolExecutionContext| async move {
            for step in 1..=200 {
                ctx.progress(json!({"progress": step, "message": "x".repeat(1024)}));
                // A real pause, so the server's relay sends while the tool waits.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            Ok(json!("done"))
        });
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([chatty]))
        .ledger(ledger.clone())
        .build();
    let server = McpServer::new(dispatcher);
    // Room for the handshake's answer and a few notifications, no more.
    let mut client = serve_in_memory(&server, 8 * 1024);
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "silent", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "chatty", "arguments": {}, "_meta": {"progressToken": 1}}}),
    ];
    for message in messages {
        client
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let finished = wait_for_row(&ledger, RecordStatus::Finished).await;
    assert_eq!(finished.tool_name.as_ref(), "chatty");
    // Reading again, the client gets the notifications still owed and the answer.
    let mut lines = tokio::io::BufReader::new(client).lines();
    let mut notified = 0;
    let answer = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["method"] == "notifications/progress" {
                notified += 1;
            } else if message["id"] == 2 {
                return message;
            }
        }
        panic!("the connection closed before the answer");
    })
    .await
    .expect("the answer comes once the client reads");
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    assert!(notified > 0, "the progress reached the client");
}

/// A call whose `notifications/cancelled` the server handled before the call was first polled
/// must not run, whether or not its tool has an effect policy: the client, having cancelled,
/// gets no answer, so it would never learn the tool ran. One thread, and both messages in one
/// write, so the server reads the cancellation before the call's task starts.
#[tokio::test(flavor = "current_thread")]
async fn a_call_cancelled_before_it_starts_never_runs_its_tool() {
    let touched = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = Arc::clone(&touched);
    let touch = ToolDefinition::builder("touch")
        .parameters(json!({"type": "object"}))
        .run_sync(move |_, _| {
            count.fetch_add(1, Ordering::SeqCst);
            Ok(json!("touched"))
        });
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([touch]))
        .ledger(ledger.clone())
        .build();
    let server = McpServer::new(dispatcher);
    let mut client = serve_in_memory(&server, 64 * 1024);
    let handshake = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "hasty", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    let mut lines = String::new();
    for message in handshake {
        lines.push_str(&format!("{message}\n"));
    }
    client.write_all(lines.as_bytes()).await.unwrap();
    let mut reader = tokio::io::BufReader::new(client);
    let mut answer = String::new();
    reader.read_line(&mut answer).await.unwrap();
    assert!(answer.contains("\"id\":1"), "{answer}");
    let both = format!(
        "{}\n{}\n",
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "touch", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 2, "reason": "pressed stop"}}),
    );
    reader.get_mut().write_all(both.as_bytes()).await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(row) = ledger
                .records()
                .into_iter()
                .find(|row| row.status != RecordStatus::Started)
            {
                return row;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the call ends");
    assert_eq!(touched.load(Ordering::SeqCst), 0, "the tool ran: {ended:?}");
    assert_eq!(error_code(&ended), "cancelled");
}
