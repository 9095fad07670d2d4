//! The client bridge against third-party MCP servers (none written here; see `mcp_support`):
//! listing, calls through the dispatcher with a filter, content blocks, progress, remote errors.

mod mcp_support;

use prism::call::{ContentBlock, ErrorCode};
use prism::dispatch::{CollectingSink, ToolEventKind};
use prism::mcp::RemoteServer;
use prism::registry::ToolFilter;
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext};
use serde_json::json;

use mcp_support::*;

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
    let dispatcher = Dispatcher::builder(remote_registry(&client).await)
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
    let dispatcher = Dispatcher::builder(remote_registry(&client).await)
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

/// A tool that declares an output schema (made by the TypeScript SDK from a Zod type) has its
/// schema taken and its result checked against it: the server's own result passes, whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_structured_results_are_checked_against_their_output_schema() {
    let Some(server) = everything() else { return };
    let client = connect(server).await;
    let tools = client.tools().await.unwrap();
    let structured = tools
        .definitions()
        .iter()
        .find(|tool| tool.name() == "everything__get-structured-content")
        .expect("listed");
    assert!(structured.output_schema().is_some());
    let dispatcher = Dispatcher::builder(registry(tools.into_definitions())).build();
    let call = ToolCall::new(
        "s1",
        "everything__get-structured-content",
        json!({"location": "Chicago"}),
    );
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    assert!(result.error_info().is_none(), "{result:?}");
    let value = result.as_value().expect("a structured value");
    assert_eq!(value["temperature"], 36, "{value}");
    assert_eq!(value["humidity"], 82, "{value}");
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
