//! Per-turn narrowing, the clamp event, hidden calls, disclosure and the per-turn `ids_hash`.

mod run_support;

use std::sync::Arc;

use prism::call::BlockReason;
use prism::dispatch::SecretRedactor;
use prism::run::{
    AgentConfig, DisclosureMode, DisclosureRequest, RunEventKind, RunEventLog, ScriptedProvider,
    ToolDisclosure, ToolsMetadata, narrowing_fn,
};
use prism::{Agent, Dispatcher, ProviderResponse, RunError, RunOptions, ToolCall, ToolRegistry};
use run_support::{add, named, summary, tool_rows};
use serde_json::json;

fn registry() -> ToolRegistry {
    ToolRegistry::from_iter([
        named("wiki.search"),
        named("wiki.read"),
        named("shell"),
        add(),
    ])
}

fn calls_then_text(rounds: usize) -> ScriptedProvider {
    let mut turns: Vec<_> = (0..rounds)
        .map(|round| {
            ProviderResponse::calls([ToolCall::new(
                format!("c{round}"),
                "add",
                json!({"a": 1, "b": 2}),
            )])
            .with_text(format!("round {round}"))
        })
        .collect();
    turns.push(ProviderResponse::text("done"));
    ScriptedProvider::new(turns)
}

#[tokio::test]
async fn names_outside_the_grant_are_dropped_and_reported() {
    let provider = ScriptedProvider::new([ProviderResponse::text("done")]);
    let log = RunEventLog::new();
    let agent = Agent::new(Dispatcher::builder(registry()).build(), provider.clone())
        .with_events(log.clone());
    let options = RunOptions::new()
        .tool_names(["wiki.search", "wiki.read", "add"])
        .tool_narrowing(narrowing_fn(|_| {
            Ok::<_, String>(["add", "made.up", "shell", "wiki.search", "made.up"])
        }));
    agent.session("s").run("hi", options).await.unwrap();

    assert_eq!(provider.requests()[0].tool_names, ["wiki.search", "add"]);
    let clamped: Vec<_> = log
        .events()
        .into_iter()
        .filter_map(|event| match event.kind {
            RunEventKind::ToolNarrowingClamped { turn, dropped } => Some((turn, dropped)),
            _ => None,
        })
        .collect();
    assert_eq!(
        clamped,
        [(1, vec!["made.up".to_owned(), "shell".to_owned()])]
    );
    let wire = serde_json::to_value(&log.events()[1]).unwrap();
    assert_eq!(wire["type"], "tool_narrowing_clamped");
    assert_eq!(wire["dropped"], json!(["made.up", "shell"]));
}

#[tokio::test]
async fn dropped_names_are_redacted_in_the_clamp_event() {
    let provider = ScriptedProvider::new([ProviderResponse::text("done")]);
    let log = RunEventLog::new();
    let dispatcher = Dispatcher::builder(registry())
        .redactor(SecretRedactor::new(["sk-live-77"]))
        .build();
    let agent = Agent::new(dispatcher, provider).with_events(log.clone());
    let options = RunOptions::new()
        .tool_narrowing(narrowing_fn(|_| Ok::<_, String>(["add", "key=sk-live-77"])));
    agent.session("s").run("hi", options).await.unwrap();

    let text = serde_json::to_string(&log.events()).unwrap();
    assert!(!text.contains("sk-live-77"), "{text}");
    assert!(text.contains(r#""dropped":["key=[REDACTED]"]"#), "{text}");
}

#[tokio::test]
async fn a_failing_callback_fails_the_turn_before_anything_is_sent() {
    let provider = calls_then_text(1);
    let agent = Agent::new(Dispatcher::builder(registry()).build(), provider.clone()).with_config(
        AgentConfig::new().tool_narrowing(narrowing_fn(|request| {
            if request.turn == 2 {
                Err("the plane is unknown".to_owned())
            } else {
                Ok(request
                    .tool_ids
                    .iter()
                    .map(|id| id.to_string())
                    .collect::<Vec<_>>())
            }
        })),
    );
    let mut session = agent.session("s");
    let error = session.run("hi", RunOptions::new()).await.unwrap_err();

    assert_eq!(
        error,
        RunError::Narrowing {
            turn: 2,
            message: "the plane is unknown".into()
        }
    );
    assert_eq!(provider.requests().len(), 1, "turn 2 sent nothing");
    assert_eq!(
        tool_rows(session.transcript()).len(),
        1,
        "turn 1's call kept its row"
    );
}

#[tokio::test]
async fn a_panicking_callback_fails_the_turn_too() {
    let provider = calls_then_text(0);
    let agent = Agent::new(Dispatcher::builder(registry()).build(), provider.clone());
    let options =
        RunOptions::new().tool_narrowing(narrowing_fn(|_| -> Result<Vec<String>, String> {
            panic!("narrowing bug")
        }));
    let error = agent.session("s").run("hi", options).await.unwrap_err();
    assert!(
        matches!(error, RunError::Narrowing { turn: 1, ref message } if message.contains("narrowing bug"))
    );
    assert!(provider.requests().is_empty());
}

#[tokio::test]
async fn hidden_tools_are_denied_unless_hidden_calls_are_allowed() {
    let hidden_call = || {
        ScriptedProvider::new([
            ProviderResponse::calls([
                ToolCall::new("c1", "shell", json!({})),
                ToolCall::new("c2", "add", json!({"a": 1, "b": 1})),
            ]),
            ProviderResponse::text("done"),
        ])
    };
    let only_add = || narrowing_fn(|_| Ok::<_, String>(["add"]));
    let dispatcher = Dispatcher::builder(registry()).build();

    let provider = hidden_call();
    let mut session = Agent::new(dispatcher.clone(), provider.clone()).session("s1");
    session
        .run("hi", RunOptions::new().tool_narrowing(only_add()))
        .await
        .unwrap();
    assert_eq!(provider.requests()[0].tool_names, ["add"]);
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::ToolDenied));
    assert!(rows[1].is_success());

    let mut session = Agent::new(dispatcher, hidden_call()).session("s2");
    session
        .run(
            "hi",
            RunOptions::new()
                .tool_narrowing(only_add())
                .allow_hidden_tool_calls(true),
        )
        .await
        .unwrap();
    assert!(
        tool_rows(session.transcript())
            .iter()
            .all(|row| row.is_success())
    );
}

#[tokio::test]
async fn identical_subsets_send_identical_schema_bytes_and_hashes() {
    let provider = calls_then_text(3);
    let log = RunEventLog::new();
    let agent = Agent::new(Dispatcher::builder(registry()).build(), provider.clone())
        .with_events(log.clone());
    // Turns 1 and 2 get the same subset (listed in different orders); turn 3 another; turn 4 the
    // first again.
    let options = RunOptions::new().tool_narrowing(narrowing_fn(|request| {
        Ok::<_, String>(match request.turn {
            1 => vec!["add", "wiki.read"],
            2 => vec!["wiki.read", "add"],
            3 => vec!["wiki.read"],
            _ => vec!["add", "wiki.read"],
        })
    }));
    agent.session("s").run("hi", options).await.unwrap();

    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0].tool_names, ["wiki.read", "add"]);
    assert_eq!(requests[0].tool_schemas, requests[1].tool_schemas);
    assert_eq!(requests[0].tool_schemas, requests[3].tool_schemas);
    assert_ne!(requests[0].tool_schemas, requests[2].tool_schemas);
    let hashes: Vec<_> = requests
        .iter()
        .map(|request| request.metadata.tools.ids_hash.clone())
        .collect();
    assert_eq!(hashes[0], hashes[1]);
    assert_eq!(hashes[0], hashes[3]);
    assert_ne!(hashes[0], hashes[2]);
    assert_eq!(requests[2].metadata.tools.count, 1);

    // The run's events record the same metadata as the request.
    let recorded: Vec<_> = log
        .events()
        .into_iter()
        .filter_map(|event| match event.kind {
            RunEventKind::TurnStarted { metadata, .. } => Some(metadata.tools),
            _ => None,
        })
        .collect();
    let sent: Vec<_> = requests.iter().map(|r| r.metadata.tools.clone()).collect();
    assert_eq!(recorded, sent);
    let wire = serde_json::to_value(&log.events()[1]).unwrap();
    assert_eq!(wire["type"], "turn_started");
    assert_eq!(wire["metadata"]["tools"]["count"], 2);
    assert_eq!(wire["metadata"]["tools"]["idsHash"], json!(hashes[0]));
}

#[test]
fn ids_hash_is_stable_across_processes_and_versions() {
    // SHA-256 of the canonical JSON text `["add","echo"]`: pinned so that a change in hashing
    // (which would silently break hosts comparing hashes across releases) fails here.
    let metadata = ToolsMetadata::of_names(["add", "echo"]);
    assert_eq!(
        metadata.ids_hash,
        "79152a9f92408d56b8ef5255fe81d9fd5c091c81290ae82f21ab580988243118"
    );
    assert_eq!(metadata.count, 2);
    assert_ne!(ToolsMetadata::of_names(["echo", "add"]), metadata);
    assert_ne!(
        ToolsMetadata::of_names(["add,echo"]).ids_hash,
        ToolsMetadata::of_names(["add", "echo"]).ids_hash,
        "names are hashed as a list, not joined"
    );
}

struct FirstOnly;

impl ToolDisclosure for FirstOnly {
    fn disclose(&self, request: DisclosureRequest<'_>) -> Vec<Arc<str>> {
        let mut names: Vec<Arc<str>> = request
            .tools
            .iter()
            .take(1)
            .map(|tool| Arc::clone(tool.name_arc()))
            .collect();
        names.push("not.granted".into());
        names
    }
}

#[tokio::test]
async fn disclosure_describes_a_subset_and_never_authorises() {
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "add", json!({"a": 2, "b": 2}))]),
        ProviderResponse::text("done"),
    ]);
    let agent = Agent::new(Dispatcher::builder(registry()).build(), provider.clone());
    let mut session = agent.session("s");
    session
        .run(
            "hi",
            RunOptions::new().tools_disclosure(DisclosureMode::custom(FirstOnly)),
        )
        .await
        .unwrap();
    assert_eq!(provider.requests()[0].tool_names, ["wiki.search"]);
    assert_eq!(
        summary(&tool_rows(session.transcript())),
        [("c1".to_owned(), "ok".to_owned())],
        "a granted, visible tool stays callable when it was not described"
    );
}

#[tokio::test]
async fn disclosing_everything_is_byte_identical_to_no_disclosure_step() {
    let default = ScriptedProvider::new([ProviderResponse::text("done")]);
    let explicit = ScriptedProvider::new([ProviderResponse::text("done")]);
    let dispatcher = Dispatcher::builder(registry()).build();
    Agent::new(dispatcher.clone(), default.clone())
        .session("s")
        .run("hi", RunOptions::new())
        .await
        .unwrap();
    Agent::new(dispatcher, explicit.clone())
        .session("s")
        .run(
            "hi",
            RunOptions::new().tools_disclosure(DisclosureMode::All),
        )
        .await
        .unwrap();
    assert_eq!(
        default.requests()[0].tool_schemas,
        explicit.requests()[0].tool_schemas
    );
    assert_eq!(
        default.requests()[0].metadata,
        explicit.requests()[0].metadata
    );
}
