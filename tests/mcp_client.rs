//! The client bridge against third-party MCP servers (none written here), installed by
//! `.ci/mcp_peers.sh`: `mcp-server-time` and `mcp-server-git` from PyPI in a virtual environment,
//! and `@modelcontextprotocol/server-everything` from npm under Node 22.
//!
//! A test whose server is not installed prints `SKIPPED: <why>` and passes, unless
//! `PRISM_REQUIRE_PEERS=1`, when it fails instead.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use prism::call::{ContentBlock, ErrorCode};
use prism::dispatch::{CollectingSink, ToolEventKind, event_fn};
use prism::mcp::{McpClient, McpClientError, RemoteServer, codes};
use prism::registry::ToolFilter;
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use serde_json::json;

/// Where `.ci/mcp_peers.sh` caches the peers, unless its variables say otherwise.
fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/nonexistent"));
    base.join("prism-ci")
}

fn peer_path(variable: &str, default: PathBuf) -> Option<PathBuf> {
    let path = std::env::var_os(variable).map_or(default, PathBuf::from);
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{} not found (run `eval \"$(bash .ci/mcp_peers.sh)\"`, or set {variable})",
        path.display()
    );
    if std::env::var("PRISM_REQUIRE_PEERS").as_deref() == Ok("1") {
        panic!("PRISM_REQUIRE_PEERS=1 and {why}");
    }
    println!("SKIPPED: {why}");
    None
}

fn python() -> Option<PathBuf> {
    let venv = peer_path("PRISM_MCP_VENV", cache_dir().join("mcp-servers-venv"))?;
    peer_path("PRISM_MCP_VENV", venv.join("bin/python"))
}

/// `node` (22) and server-everything's entry point.
fn everything_paths() -> Option<(PathBuf, PathBuf)> {
    let node = peer_path(
        "PRISM_NODE22",
        cache_dir().join("node22/node_modules/.bin/node"),
    )?;
    let package = peer_path(
        "PRISM_MCP_EVERYTHING",
        cache_dir().join(
            "mcp-server-everything-2026.8.31/node_modules/@modelcontextprotocol/server-everything",
        ),
    )?;
    Some((node, package.join("dist/index.js")))
}

fn everything() -> Option<RemoteServer> {
    let (node, entry) = everything_paths()?;
    Some(
        RemoteServer::command("everything", node)
            .arg(entry)
            .arg("stdio")
            .prefixed(true),
    )
}

fn time_server() -> Option<RemoteServer> {
    Some(
        RemoteServer::command("time", python()?)
            .args(["-m", "mcp_server_time", "--local-timezone", "UTC"])
            .prefixed(true),
    )
}

fn registry(definitions: Vec<ToolDefinition>) -> ToolRegistry {
    ToolRegistry::from_iter(definitions)
}

async fn connect(server: RemoteServer) -> McpClient {
    McpClient::connect(server)
        .await
        .unwrap_or_else(|error| panic!("connect: {error}"))
}

fn text_of(blocks: &[ContentBlock]) -> String {
    blocks.iter().filter_map(ContentBlock::as_text).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_lists_its_tools_and_their_claims_grant_nothing() {
    let Some(server) = everything() else { return };
    let client = connect(server.filter(ToolFilter::deny(["get-env"]))).await;
    let tools = client.tools().await.unwrap();
    let names: Vec<&str> = tools
        .definitions()
        .iter()
        .map(ToolDefinition::name)
        .collect();
    assert!(names.contains(&"everything__echo"), "{names:?}");
    assert!(names.contains(&"everything__get-tiny-image"), "{names:?}");
    // The host's filter keeps a tool out of the definitions altogether.
    assert!(!names.contains(&"everything__get-env"), "{names:?}");
    assert!(tools.skipped().is_empty(), "{:?}", tools.skipped());

    // The server claims its long-running tool is read-only, idempotent and closed-world.
    let long = tools
        .definitions()
        .iter()
        .find(|tool| tool.name() == "everything__trigger-long-running-operation")
        .expect("listed");
    let hints = long.annotations();
    assert_eq!(hints.read_only, Some(false));
    assert_eq!(hints.idempotent, Some(false));
    assert_eq!(hints.destructive, Some(true));
    assert_eq!(hints.open_world, Some(true));
    assert!(long.untrusted_output());
    assert_eq!(long.parameters().unwrap()["type"], "object");
    assert!(client.protocol_version().is_some());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_calls_go_through_the_dispatcher_and_keep_their_content() {
    let Some(server) = everything() else { return };
    let client = connect(server).await;
    let events = CollectingSink::new();
    let dispatcher =
        Dispatcher::builder(registry(client.tools().await.unwrap().into_definitions()))
            .filter(ToolFilter::deny(["everything__get-sum"]))
            .events(events.clone())
            .build();
    let ctx = ToolExecutionContext::new();

    let echo = ToolCall::new("c1", "everything__echo", json!({"message": "bonjour"}));
    let result = dispatcher.dispatch(echo, &ctx).await.unwrap();
    assert!(result.is_untrusted());
    assert!(text_of(result.content()).contains("bonjour"), "{result:?}");

    let image = ToolCall::new("c2", "everything__get-tiny-image", json!({}));
    let result = dispatcher.dispatch(image, &ctx).await.unwrap();
    let image = result
        .content()
        .iter()
        .find_map(|block| match block {
            ContentBlock::Image { data, media_type } => Some((data.clone(), media_type.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("an image block: {result:?}"));
    assert_eq!(image.1, "image/png");
    assert!(!image.0.is_empty());

    let resource = ToolCall::new(
        "c3",
        "everything__get-resource-reference",
        json!({"resourceType": "Text", "resourceId": 2}),
    );
    let result = dispatcher.dispatch(resource, &ctx).await.unwrap();
    let embedded = result
        .content()
        .iter()
        .find_map(|block| match block {
            ContentBlock::Resource { resource } => Some(resource.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("an embedded resource: {result:?}"));
    assert!(embedded.uri.contains('2'), "{embedded:?}");
    assert!(embedded.text.is_some() || embedded.blob.is_some());

    // A tool the dispatcher's filter denies is blocked before its handler runs.
    let denied = ToolCall::new("c4", "everything__get-sum", json!({"a": 1, "b": 2}));
    let result = dispatcher.dispatch(denied, &ctx).await.unwrap();
    assert_eq!(result.error_info().unwrap().code, ErrorCode::ToolDenied);

    // Every call above has its events; the denied one never started.
    let started: Vec<String> = events
        .events()
        .iter()
        .filter(|event| matches!(event.kind, ToolEventKind::ToolExecutionStarted { .. }))
        .map(|event| event.tool_call_id.as_str().to_owned())
        .collect();
    assert_eq!(started, ["c1", "c2", "c3"]);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_progress_reaches_the_dispatchers_events() {
    let Some(server) = everything() else { return };
    let client = connect(server).await;
    let events = CollectingSink::new();
    let dispatcher =
        Dispatcher::builder(registry(client.tools().await.unwrap().into_definitions()))
            .events(events.clone())
            .build();
    let call = ToolCall::new(
        "p1",
        "everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 4}),
    );
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    assert!(
        text_of(result.content()).contains("completed"),
        "{result:?}"
    );
    let progress: Vec<f64> = events
        .events()
        .iter()
        .filter_map(|event| match &event.kind {
            ToolEventKind::ToolExecutionProgress { progress, .. } => progress["progress"].as_f64(),
            _ => None,
        })
        .collect();
    // Progress sent after the tool returned may be dropped; what arrives increases.
    assert!(
        !progress.is_empty(),
        "no progress among {:?}",
        events.events()
    );
    assert!(
        progress.windows(2).all(|pair| pair[0] < pair[1]),
        "{progress:?}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_call_fails_the_call_instead_of_hanging() {
    let Some(server) = everything() else { return };
    // The call timeout is far away: the error must come from the dead connection.
    let client = connect(server.call_timeout(Duration::from_secs(300))).await;
    let pid = client.process_id().expect("a child process");
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started_tx = Mutex::new(Some(started_tx));
    let dispatcher =
        Dispatcher::builder(registry(client.tools().await.unwrap().into_definitions()))
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

    // Later calls fail at once, too.
    let again = client
        .call(
            "echo",
            json!({"message": "x"}),
            &ToolExecutionContext::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(again.code().as_str(), codes::CONNECTION_LOST);
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
    let dispatcher =
        Dispatcher::builder(registry(client.tools().await.unwrap().into_definitions())).build();
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
async fn time_server_answers_and_its_errors_are_tool_errors() {
    let Some(server) = time_server() else { return };
    let client = connect(server).await;
    let tools = client.tools().await.unwrap();
    let names: Vec<&str> = tools
        .definitions()
        .iter()
        .map(ToolDefinition::name)
        .collect();
    assert_eq!(names, ["time__get_current_time", "time__convert_time"]);
    let dispatcher = Dispatcher::builder(registry(tools.into_definitions())).build();
    let ctx = ToolExecutionContext::new();

    let now = ToolCall::new(
        "t1",
        "time__get_current_time",
        json!({"timezone": "Europe/Paris"}),
    );
    let result = dispatcher.dispatch(now, &ctx).await.unwrap();
    assert!(result.is_untrusted());
    let text = text_of(result.content());
    assert!(text.contains("Europe/Paris"), "{result:?}");

    let bad = ToolCall::new(
        "t2",
        "time__get_current_time",
        json!({"timezone": "Nowhere/Atlantis"}),
    );
    let result = dispatcher.dispatch(bad, &ctx).await.unwrap();
    let error = result.error_info().expect("a remote error");
    assert_eq!(error.code, ErrorCode::ToolError);
    assert!(error.message.contains("Nowhere/Atlantis"), "{error:?}");
    assert!(result.is_untrusted());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_server_a_denied_tool_never_reaches_the_server() {
    let Some(python) = python() else { return };
    let repo = tempfile_dir();
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    git(&["init", "-q", "-b", "main"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "start",
    ]);
    let server = RemoteServer::command("git", python)
        .args(["-m", "mcp_server_git", "--repository"])
        .arg(&repo)
        .prefixed(true);
    let client = connect(server).await;
    let definitions = client.tools().await.unwrap().into_definitions();
    assert!(
        definitions
            .iter()
            .any(|tool| tool.name() == "git__git_create_branch")
    );
    let ctx = ToolExecutionContext::new();
    let create = |id: &str| {
        ToolCall::new(
            id,
            "git__git_create_branch",
            json!({"repo_path": repo.to_str().unwrap(), "branch_name": "from-model"}),
        )
    };

    let guarded = Dispatcher::builder(registry(definitions.clone()))
        .filter(ToolFilter::deny(["git__git_create_branch"]))
        .build();
    let result = guarded.dispatch(create("g1"), &ctx).await.unwrap();
    assert_eq!(result.error_info().unwrap().code, ErrorCode::ToolDenied);
    assert!(!git(&["branch", "--list"]).contains("from-model"));

    // The same call, allowed, does reach the server: the check above can fail.
    let open = Dispatcher::builder(registry(definitions)).build();
    let result = open.dispatch(create("g2"), &ctx).await.unwrap();
    assert!(result.error_info().is_none(), "{result:?}");
    assert!(git(&["branch", "--list"]).contains("from-model"));
    client.close().await;
    let _ = std::fs::remove_dir_all(&repo);
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

fn tempfile_dir() -> PathBuf {
    static NEXT: Mutex<u32> = Mutex::new(0);
    let mut next = NEXT.lock().unwrap();
    *next += 1;
    let dir = std::env::temp_dir().join(format!("prism-mcp-git-{}-{}", std::process::id(), *next));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// server-everything over streamable HTTP on a free local port; killed when dropped.
struct HttpEverything {
    child: tokio::process::Child,
    url: String,
}

impl HttpEverything {
    async fn start() -> Option<Self> {
        let (node, entry) = everything_paths()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = tokio::process::Command::new(node)
            .arg(entry)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // Wait for the listener: a bounded number of tries, not a measured time.
        for _ in 0..600 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Some(Self {
                    child,
                    url: format!("http://127.0.0.1:{port}/mcp"),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("server-everything did not listen on port {port}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http_lists_calls_and_reports_progress() {
    let Some(mut server) = HttpEverything::start().await else {
        return;
    };
    let client = connect(RemoteServer::http("everything", server.url.clone()).prefixed(true)).await;
    assert_eq!(client.process_id(), None);
    let events = CollectingSink::new();
    let dispatcher =
        Dispatcher::builder(registry(client.tools().await.unwrap().into_definitions()))
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
    assert!(
        events
            .events()
            .iter()
            .any(|event| matches!(event.kind, ToolEventKind::ToolExecutionProgress { .. })),
        "no progress over HTTP"
    );

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
