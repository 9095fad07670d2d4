//! The client bridge when a server fails: killed mid-call (and started again for the next call),
//! too slow, cancelled, gone before the handshake, silent; and the same over streamable HTTP.
//! Every case ends in an error, never a hang (the tests' own timeouts only guard against one).

mod log_capture;
mod mcp_support;

use std::sync::Mutex;
use std::time::Duration;

use prism::call::ErrorCode;
use prism::dispatch::{CollectingSink, ToolEventKind, event_fn};
use prism::mcp::{McpClient, McpClientError, RemoteServer, codes};
use prism::{Dispatcher, ToolCall, ToolExecutionContext};
use serde_json::json;

use mcp_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_call_fails_the_call_instead_of_hanging() {
    let Some(server) = everything() else { return };
    // The call timeout is far away: the error must come from the dead connection.
    let client = connect(server.call_timeout(Duration::from_secs(300))).await;
    let pid = client.process_id().expect("a child process");
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started_tx = Mutex::new(Some(started_tx));
    let dispatcher = Dispatcher::builder(remote_registry(&client).await)
        .events(event_fn(move |event| {
            if matches!(event.kind, ToolEventKind::ToolExecutionProgress { .. })
                && let Some(tx) = started_tx.lock().unwrap().take()
            {
                let _ = tx.send(());
            }
        }))
        .build();
    let call = ToolCall::new(
        "k1",
        "everything__trigger-long-running-operation",
        json!({"duration": 120, "steps": 240}),
    );
    let ctx = ToolExecutionContext::new();
    let running = tokio::spawn(async move { dispatcher.dispatch(call, &ctx).await });
    // Once the server is surely mid-call (it sent progress), kill it.
    started_rx.await.expect("progress before the kill");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // A generous guard against a hang only; the answer comes as soon as the pipe closes.
    let result = tokio::time::timeout(Duration::from_secs(120), running)
        .await
        .expect("the call ended")
        .unwrap()
        .unwrap();
    let error = result.error_info().expect("an error");
    assert_eq!(error.code.as_str(), codes::CONNECTION_LOST, "{error:?}");

    // The next call starts the server again and runs there (the call in flight is not sent
    // again: what it did is unknown).
    let again = tokio::time::timeout(
        Duration::from_secs(120),
        client.call(
            "echo",
            json!({"message": "back again"}),
            &ToolExecutionContext::new(),
        ),
    )
    .await
    .expect("the call ended")
    .unwrap();
    let prism::mcp::RemoteOutcome::Complete(output) = again else {
        panic!("{again:?}");
    };
    assert!(text_of(output.content()).contains("back again"));
    let restarted = client.process_id().expect("a child process");
    assert_ne!(restarted, pid);

    // Progress of the new session reaches its calls.
    let events = CollectingSink::new();
    let dispatcher = Dispatcher::builder(remote_registry(&client).await)
        .events(events.clone())
        .build();
    let long = ToolCall::new(
        "k2",
        "everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 2}),
    );
    let result = tokio::time::timeout(
        Duration::from_secs(120),
        dispatcher.dispatch(long, &ToolExecutionContext::new()),
    )
    .await
    .expect("the call ended")
    .unwrap();
    assert!(result.error_info().is_none(), "{result:?}");
    assert!(saw_progress(&events), "no progress in the new session");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_server_does_not_answer_in_time_is_cancelled_and_the_session_goes_on() {
    let Some(server) = everything() else { return };
    let client = connect(server.call_timeout(Duration::from_secs(2))).await;
    // One step: no progress until the end, 60 s away.
    let slow = client
        .call(
            "trigger-long-running-operation",
            json!({"duration": 60, "steps": 1}),
            &ToolExecutionContext::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(slow.code().as_str(), codes::TIMEOUT, "{}", slow.message());
    let echo = client
        .call(
            "echo",
            json!({"message": "still here"}),
            &ToolExecutionContext::new(),
        )
        .await
        .unwrap();
    let prism::mcp::RemoteOutcome::Complete(output) = echo else {
        panic!("{echo:?}");
    };
    assert!(text_of(output.content()).contains("still here"));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_context_ends_the_remote_call() {
    let Some(server) = everything() else { return };
    let client = connect(server.call_timeout(Duration::from_secs(300))).await;
    let dispatcher = Dispatcher::builder(remote_registry(&client).await).build();
    let token = prism::context::CancellationToken::new();
    let ctx = ToolExecutionContext::new().with_cancellation(token.clone());
    let call = ToolCall::new(
        "x1",
        "everything__trigger-long-running-operation",
        json!({"duration": 120, "steps": 1}),
    );
    let running = tokio::spawn(async move { dispatcher.dispatch(call, &ctx).await });
    token.cancel();
    let result = tokio::time::timeout(Duration::from_secs(60), running)
        .await
        .expect("the call ended")
        .unwrap()
        .unwrap();
    assert_eq!(result.error_info().unwrap().code, ErrorCode::Cancelled);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_once_is_a_handshake_error() {
    let server = RemoteServer::command("gone", "sh").args(["-c", "exit 3"]);
    let error = McpClient::connect(server).await.unwrap_err();
    assert!(matches!(error, McpClientError::Handshake { .. }), "{error}");
    let missing = RemoteServer::command("missing", "/nonexistent/mcp-server");
    let error = McpClient::connect(missing).await.unwrap_err();
    assert!(matches!(error, McpClientError::Spawn { .. }), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_the_handshake_times_out() {
    let server = RemoteServer::command("mute", "sleep")
        .arg("600")
        .connect_timeout(Duration::from_secs(2));
    let error = McpClient::connect(server).await.unwrap_err();
    assert!(matches!(error, McpClientError::Timeout { .. }), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http_lists_calls_and_reports_progress() {
    let Some(mut server) = HttpEverything::start().await else {
        return;
    };
    let client = connect(RemoteServer::http("everything", server.url.clone()).prefixed(true)).await;
    assert_eq!(client.process_id(), None);
    let events = CollectingSink::new();
    let dispatcher = Dispatcher::builder(remote_registry(&client).await)
        .events(events.clone())
        .build();
    let ctx = ToolExecutionContext::new();
    let echo = ToolCall::new("h1", "everything__echo", json!({"message": "over http"}));
    let result = dispatcher.dispatch(echo, &ctx).await.unwrap();
    assert!(result.is_untrusted());
    assert!(
        text_of(result.content()).contains("over http"),
        "{result:?}"
    );

    let long = ToolCall::new(
        "h2",
        "everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 4}),
    );
    let result = dispatcher.dispatch(long, &ctx).await.unwrap();
    assert!(result.error_info().is_none(), "{result:?}");
    assert!(saw_progress(&events), "no progress over HTTP");

    // The server goes away mid-session: calls fail, they do not hang.
    server.child.kill().await.unwrap();
    let gone = ToolCall::new("h3", "everything__echo", json!({"message": "anyone?"}));
    let result = tokio::time::timeout(Duration::from_secs(120), dispatcher.dispatch(gone, &ctx))
        .await
        .expect("the call ended")
        .unwrap();
    let error = result.error_info().expect("an error");
    assert_eq!(error.code.as_str(), codes::CONNECTION_LOST, "{error:?}");
    client.close().await;
}

/// The HTTP stack quotes a failed request's URL, query included, and the SDK logs such errors:
/// a token in the endpoint's query string must reach no log line, the SDK's included.
#[tokio::test]
async fn a_token_in_the_urls_query_reaches_no_log_line() {
    const TOKEN: &str = "sk-query-0123456789";
    let (logged, _logging) = log_capture::capture(tracing::Level::TRACE);

    // A server that takes each connection and closes it at once, without an answer.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let closing = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            drop(stream);
        }
    });
    let url = format!("http://{address}/mcp?key={TOKEN}");
    let server = RemoteServer::http("closing", url).connect_timeout(Duration::from_secs(20));
    let error = McpClient::connect(server).await.unwrap_err();
    closing.abort();

    let text = logged.text();
    assert!(!error.to_string().contains(TOKEN), "{error}");
    assert!(
        text.contains(&address.to_string()),
        "the failure was logged: {text}"
    );
    assert!(!text.contains(TOKEN), "a log line quotes the token: {text}");
}

/// Whether `events` hold a progress report of a tool.
fn saw_progress(events: &CollectingSink) -> bool {
    events
        .events()
        .iter()
        .any(|event| matches!(event.kind, ToolEventKind::ToolExecutionProgress { .. }))
}

/// A child server that answers `initialize` and `tools/list` (one tool, `login`), writes each
/// call it gets on its standard error, as servers log their requests, and answers it.
const LOGGING_SERVER: &str = r#"
while IFS= read -r line; do
  id=${line#*\"id\":}; id=${id%%[,\}]*}
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"logging","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"login","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *'"method":"tools/call"'*) printf 'handling %s\n' "$line" >&2; printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}\n' "$id" ;;
    *'"method":"notifications/'*) ;;
    *'"id":'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown"}}\n' "$id" ;;
  esac
done
"#;

/// The bridge logs a child's standard error as its own log lines, which are redacted as the
/// dispatcher's events are: a secret the dispatcher's redactor knows, sent to the server in a
/// call's arguments and logged back by it, reaches no log line.
#[tokio::test]
async fn a_host_secret_the_server_writes_on_its_standard_error_reaches_no_log_line() {
    const PASSWORD: &str = "pw-4f1d9c7e2b8a6035";
    let (logged, _logging) = log_capture::capture(tracing::Level::DEBUG);
    let server = RemoteServer::command("logging", "sh").args(["-c", LOGGING_SERVER]);
    let client = McpClient::connect(server).await.unwrap();
    let tools = client.tools().await.unwrap().into_definitions();
    let dispatcher = Dispatcher::builder(prism::ToolRegistry::from_iter(tools))
        .redactor(prism::dispatch::SecretRedactor::new([PASSWORD]))
        .build();
    let call = ToolCall::new("c1", "login", json!({"password": PASSWORD}));
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    assert!(result.error_info().is_none(), "{result:?}");
    // The line is logged by a task of its own: waited for, a hang guarded against.
    tokio::time::timeout(Duration::from_secs(20), async {
        while !logged.text().contains("handling") {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the server's standard error was logged");
    // Prism's own lines: rmcp's write whole messages at DEBUG, as the README says.
    let text = logged.text();
    let own: Vec<&str> = text
        .lines()
        .filter(|line| !line.contains(" rmcp::"))
        .collect();
    assert!(own.iter().any(|line| line.contains("handling")), "{text}");
    for line in own {
        assert!(
            !line.contains(PASSWORD),
            "a log line quotes the secret: {line}"
        );
    }
    client.close().await;
}

/// What a server wrote is quoted in a log line escaped: a line break in a tool's name cannot
/// start a line of its own, which would read as the host's.
#[tokio::test]
async fn a_line_break_in_a_skipped_tools_name_starts_no_log_line() {
    let (logged, _logging) = log_capture::capture(tracing::Level::WARN);
    // The logging server, its one tool named with a line break and a forged line after it.
    let forging = LOGGING_SERVER.replace(
        r#""name":"login""#,
        r#""name":"x\\nFORGED INFO all is well""#,
    );
    let server = RemoteServer::command("forging", "sh").args(["-c", &forging]);
    let client = McpClient::connect(server).await.unwrap();
    let listed = client.tools().await.unwrap();
    assert_eq!(listed.skipped().len(), 1, "the name is no tool name");
    let text = logged.text();
    assert!(text.contains("remote tool skipped"), "{text}");
    assert!(
        !text.lines().any(|line| line.starts_with("FORGED")),
        "a forged line: {text}"
    );
    client.close().await;
}
