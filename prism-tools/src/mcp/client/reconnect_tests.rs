//! A session that ends is replaced: against a child server written in `sh` that records each
//! start and each call in files, starts only while a marker file exists, and can be killed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::call::ErrorCode;
use crate::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};

use super::codes;
use super::connect::ProtocolEra;
use super::mcp_client::McpClient;
use super::outcome::RemoteOutcome;
use super::server::RemoteServer;
use super::sessions::Backoff;

/// Against a hang only: nothing here should take more than a fraction of it.
const GUARD: Duration = Duration::from_secs(60);

/// The server: it writes `start` to `$STARTS` when it starts and, unless `$MARKER` exists,
/// refuses the handshake quoting its token (`$API_TOKEN`) and exits; it lists `pid` and `slow`;
/// `pid` answers with the process's id, `slow` never answers; each call and listing is written
/// to `$CALLS` first.
const SCRIPT: &str = r#"
echo start >> "$STARTS"
if [ ! -e "$MARKER" ]; then
  IFS= read -r line; id=${line#*\"id\":}; id=${id%%[,\}]*}
  printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"token %s refused"}}\n' "$id" "$API_TOKEN"
  exit 1
fi
while IFS= read -r line; do
  id=${line#*\"id\":}; id=${id%%[,\}]*}
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"phoenix","version":"1"}}}\n' "$id" ;;
    *'"method":"notifications/'*) ;;
    *'"method":"tools/list"'*) echo list >> "$CALLS"; printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"pid","inputSchema":{"type":"object"}},{"name":"slow","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *'"method":"tools/call"'*'"slow"'*) echo slow >> "$CALLS" ;;
    *'"method":"tools/call"'*'"pid"'*) echo pid >> "$CALLS"; printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}\n' "$id" "$$" ;;
    *'"id":'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown"}}\n' "$id" ;;
  esac
done
"#;

/// The server's secret, which no message may carry.
const TOKEN: &str = "tok-91c4e7a2d5b8f306";

/// The server's files, in a directory removed with it.
struct Files {
    _dir: tempfile::TempDir,
    starts: PathBuf,
    calls: PathBuf,
    marker: PathBuf,
}

impl Files {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        let files = Self {
            starts: path("starts"),
            calls: path("calls"),
            marker: path("marker"),
            _dir: dir,
        };
        std::fs::write(&files.marker, "").unwrap();
        files
    }

    fn server(&self) -> RemoteServer {
        RemoteServer::command("phoenix", "sh")
            .args(["-c", SCRIPT])
            .env("STARTS", &self.starts)
            .env("CALLS", &self.calls)
            .env("MARKER", &self.marker)
            .secret_env("API_TOKEN", TOKEN)
            .connect_timeout(Duration::from_secs(30))
            .call_timeout(Duration::from_secs(30))
            .list_timeout(Duration::from_secs(30))
    }

    fn starts(&self) -> usize {
        lines(&self.starts, "start")
    }

    fn calls(&self, what: &str) -> usize {
        lines(&self.calls, what)
    }
}

/// How many lines of `path` are `line`.
fn lines(path: &Path, line: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|each| *each == line)
        .count()
}

async fn connected(files: &Files) -> McpClient {
    McpClient::connect_with(files.server(), ProtocolEra::Handshake)
        .await
        .unwrap()
}

/// Kills the client's server process and waits until the client's session saw it end.
async fn kill(client: &McpClient) {
    let pid = client.process_id().expect("a running process");
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    until(|| client.session_ended()).await;
}

/// Waits until `done` holds, checking every 20 ms, within the guard.
async fn until(mut done: impl FnMut() -> bool) {
    tokio::time::timeout(GUARD, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the condition came about in time");
}

/// The process id the `pid` tool answered with, called directly.
async fn pid_of(client: &McpClient) -> Result<u32, crate::ToolError> {
    let ctx = ToolExecutionContext::new();
    let outcome = tokio::time::timeout(GUARD, client.call("pid", json!({}), &ctx))
        .await
        .expect("the call ended");
    match outcome? {
        RemoteOutcome::Complete(output) => {
            Ok(output.content()[0].as_text().unwrap().parse().unwrap())
        }
        other => panic!("a complete result: {other:?}"),
    }
}

/// Asserts that `error` is `mcp_connection_lost` and its message says each of `saying`.
fn assert_lost(error: &crate::ToolError, saying: &[&str]) {
    let message = error.message();
    assert_eq!(error.code().as_str(), codes::CONNECTION_LOST, "{message}");
    for words in saying {
        assert!(message.contains(words), "{message}");
    }
}

/// A server killed between two calls: the second call, through the same registered
/// definition, runs on a new process, and the tool list is asked for again.
#[tokio::test]
async fn a_killed_server_is_started_again_for_the_next_call() {
    let files = Files::new();
    let client = connected(&files).await;
    let registry = ToolRegistry::from_iter(client.tools().await.unwrap().into_definitions());
    let dispatcher = Dispatcher::builder(registry).build();
    let dispatch_pid = || async {
        let call = ToolCall::new("c1", "pid", json!({}));
        let result = tokio::time::timeout(
            GUARD,
            dispatcher.dispatch(call, &ToolExecutionContext::new()),
        )
        .await
        .expect("the call ended")
        .unwrap();
        assert!(result.error_info().is_none(), "{result:?}");
        result.content()[0]
            .as_text()
            .unwrap()
            .parse::<u32>()
            .unwrap()
    };
    let first = client.process_id().unwrap();
    assert_eq!(dispatch_pid().await, first);

    kill(&client).await;
    let second = dispatch_pid().await;
    assert_ne!(second, first);
    assert_eq!(client.process_id(), Some(second));
    assert_eq!(files.starts(), 2);

    // The list kept from the first process is not trusted for the second.
    assert_eq!(files.calls("list"), 1);
    let tools = client.tools().await.unwrap();
    assert_eq!(tools.definitions().len(), 2);
    assert_eq!(files.calls("list"), 2);
    client.close().await;
}

/// A call in flight when the server dies fails with `mcp_connection_lost` and is not sent to
/// the new process; the next call is.
#[tokio::test]
async fn a_call_in_flight_when_the_server_dies_is_never_sent_again() {
    let files = Files::new();
    let client = connected(&files).await;
    let ctx = ToolExecutionContext::new();
    let (slow, ()) = tokio::join!(client.call("slow", json!({}), &ctx), async {
        until(|| files.calls("slow") == 1).await;
        kill(&client).await;
    });
    assert_lost(&slow.unwrap_err(), &["`slow`"]);

    let pid = pid_of(&client).await.unwrap();
    assert_eq!(client.process_id(), Some(pid));
    assert_eq!(files.starts(), 2);
    assert_eq!(files.calls("slow"), 1, "the call in flight was sent once");
    assert_eq!(files.calls("pid"), 1);
    client.close().await;
}

/// A server that cannot be started again: the call that tries fails with
/// `mcp_connection_lost`, the calls and listings right after fail at once without starting a
/// process, saying when the next attempt will be; once the delay passed, the next call starts
/// the server again.
#[tokio::test]
async fn a_server_that_stays_down_is_tried_once_per_delay() {
    let files = Files::new();
    let client = connected(&files).await;
    // Long enough that the calls below all fall inside it, however slow the machine.
    client.set_backoff(Backoff {
        first: Duration::from_secs(3600),
        cap: Duration::from_secs(3600),
    });
    std::fs::remove_file(&files.marker).unwrap();
    kill(&client).await;

    let failed = pid_of(&client).await.unwrap_err();
    // The server's refusal is quoted, its token taken out.
    let saying = [
        "could not be opened",
        "next attempt will be made in",
        "token [REDACTED] refused",
    ];
    assert_lost(&failed, &saying);
    assert!(!failed.message().contains(TOKEN), "{}", failed.message());
    assert_eq!(files.starts(), 2);

    let waiting = pid_of(&client).await.unwrap_err();
    assert_lost(&waiting, &["next attempt will be made in"]);
    let listing = tokio::time::timeout(GUARD, client.tools())
        .await
        .expect("the listing ended")
        .unwrap_err()
        .to_string();
    assert!(
        listing.contains("next attempt will be made in"),
        "{listing}"
    );
    assert_eq!(files.starts(), 2, "no process was started inside the delay");

    // The delay over, the server is started again.
    std::fs::write(&files.marker, "").unwrap();
    client.skip_reconnect_delay();
    let pid = pid_of(&client).await.unwrap();
    assert_eq!(client.process_id(), Some(pid));
    assert_eq!(files.starts(), 3);
    client.close().await;
}

/// Calls that find the session ended together wait for one new session.
#[tokio::test]
async fn concurrent_calls_after_a_death_open_one_session() {
    let files = Files::new();
    let client = connected(&files).await;
    kill(&client).await;
    let calls = (0..8).map(|_| pid_of(&client));
    let pids = futures_util::future::join_all(calls).await;
    let pids: Vec<u32> = pids.into_iter().map(Result::unwrap).collect();
    assert!(pids.iter().all(|pid| *pid == pids[0]), "{pids:?}");
    assert_eq!(client.process_id(), Some(pids[0]));
    assert_eq!(files.starts(), 2);
    client.close().await;
}

/// After `close`, nothing is started again: calls fail saying the client was closed.
#[tokio::test]
async fn a_closed_client_does_not_reconnect() {
    let files = Files::new();
    let client = connected(&files).await;
    let registry = ToolRegistry::from_iter(client.tools().await.unwrap().into_definitions());
    let dispatcher = Dispatcher::builder(registry).build();
    client.close().await;
    assert_lost(&pid_of(&client).await.unwrap_err(), &["was closed"]);
    let listing = client.tools().await.unwrap_err().to_string();
    assert!(listing.contains("was closed"), "{listing}");
    // Through a definition registered before the close, too.
    let call = ToolCall::new("c1", "pid", json!({}));
    let result = tokio::time::timeout(
        GUARD,
        dispatcher.dispatch(call, &ToolExecutionContext::new()),
    )
    .await
    .expect("the call ended")
    .unwrap();
    let info = result.error_info().expect("an error");
    assert_eq!(info.code, ErrorCode::parse(codes::CONNECTION_LOST));
    assert!(info.message.contains("was closed"), "{}", info.message);
    assert_eq!(files.starts(), 1);
    assert_eq!(files.calls("pid"), 0);
}

/// A server whose one tool, `which`, answers with the name of the server instance.
struct Instance(&'static str);

impl rmcp::ServerHandler for Instance {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }

    async fn call_tool(
        &self,
        _request: rmcp::model::CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::service::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::model::ErrorData> {
        Ok(
            rmcp::model::CallToolResult::success(vec![rmcp::model::ContentBlock::text(self.0)])
                .into(),
        )
    }
}

/// An HTTP server restarted on the same port forgot the session: the next call goes on with a
/// new one, on the new server. (The SDK's transport opens it: the server answers the old
/// session's request with 404, so the request never ran and is sent again in the new session.)
#[tokio::test]
async fn a_restarted_http_server_gets_a_new_session() {
    use crate::mcp::server::{HttpOptions, serve_http};
    let first = serve_http(
        || Instance("first"),
        HttpOptions::bind(([127, 0, 0, 1], 0).into()),
    )
    .await
    .unwrap();
    let address = first.local_addr();
    let server = RemoteServer::http("restarting", first.url("/mcp"))
        .connect_timeout(Duration::from_secs(30))
        .call_timeout(Duration::from_secs(30));
    let client = McpClient::connect_with(server, ProtocolEra::Handshake)
        .await
        .unwrap();
    let which = || async {
        let ctx = ToolExecutionContext::new();
        let outcome = tokio::time::timeout(GUARD, client.call("which", json!({}), &ctx))
            .await
            .expect("the call ended");
        match outcome {
            Ok(RemoteOutcome::Complete(output)) => {
                Ok(output.content()[0].as_text().unwrap().to_owned())
            }
            Ok(other) => panic!("a complete result: {other:?}"),
            Err(error) => Err(error),
        }
    };
    assert_eq!(which().await.unwrap(), "first");
    first.shutdown().await;
    let second = serve_http(|| Instance("second"), HttpOptions::bind(address))
        .await
        .unwrap();
    assert_eq!(which().await.unwrap(), "second");
    assert_eq!(which().await.unwrap(), "second");
    client.close().await;
    second.shutdown().await;
}
