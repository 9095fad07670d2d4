//! The generate-validate-revise loop: inert tools, bounded tools, the round limit, and revisions
//! counted apart from tool rounds.

mod run_support;

use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use prism::run::{
    AgentConfig, ArtifactFailure, ArtifactLoop, ArtifactVerdict, LoopStrategy, RunEnd,
    RunEventKind, RunEventLog, ScriptedProvider, artifact_validator_fn,
};
use prism::{
    Agent, Dispatcher, Message, ProviderResponse, RunError, RunOptions, ToolCall, ToolDefinition,
    ToolRegistry,
};
use run_support::{Gates, poll_once, release_and_poll, summary, tool_rows};
use serde_json::{Value, json};

/// Accepts JSON objects with `"ok": true`; asks for a revision otherwise. Records what it saw.
fn checker(seen: &Arc<Mutex<Vec<String>>>) -> impl prism::run::ArtifactValidator {
    let seen = Arc::clone(seen);
    artifact_validator_fn(move |text| {
        seen.lock().unwrap().push(text.to_owned());
        match serde_json::from_str::<Value>(text) {
            Ok(value) if value["ok"] == json!(true) => ArtifactVerdict::Accept(value),
            _ => ArtifactVerdict::Revise("Answer with {\"ok\": true}.".into()),
        }
    })
}

fn counting_lookup(runs: &Arc<AtomicUsize>) -> ToolDefinition {
    let runs = Arc::clone(runs);
    ToolDefinition::builder("lookup")
        .parameters(json!({"type": "object"}))
        .run_sync(move |_, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"fact": 42}))
        })
}

struct Fixture {
    runs: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<String>>>,
    log: RunEventLog,
}

impl Fixture {
    fn new() -> Self {
        Self {
            runs: Arc::default(),
            seen: Arc::default(),
            log: RunEventLog::new(),
        }
    }

    fn agent(&self, provider: &ScriptedProvider, artifact: ArtifactLoop) -> Agent {
        let registry = ToolRegistry::from_iter([counting_lookup(&self.runs)]);
        Agent::new(Dispatcher::builder(registry).build(), provider.clone())
            .with_config(
                AgentConfig::new()
                    .loop_strategy(LoopStrategy::GenerateValidateRevise(artifact))
                    .artifact_validator(checker(&self.seen)),
            )
            .with_events(self.log.clone())
    }

    fn lookups(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

fn lookup(id: &str) -> ToolCall {
    ToolCall::new(id, "lookup", json!({}))
}

#[tokio::test]
async fn inert_tools_execute_nothing_and_the_text_is_still_a_candidate() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([lookup("c1")]).with_text("draft"),
        ProviderResponse::text(r#"{"ok": true}"#),
    ]);
    let mut session = fixture.agent(&provider, ArtifactLoop::new(2)).session("s");
    let outcome = session.run("write it", RunOptions::new()).await.unwrap();

    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.summary().artifact, Some(json!({"ok": true})));
    assert_eq!(outcome.summary().revisions, 1);
    assert_eq!(outcome.summary().tool_rounds, 0);
    assert_eq!(fixture.lookups(), 0);
    assert_eq!(
        summary(&tool_rows(session.transcript())),
        [("c1".to_owned(), "tool_call_inert".to_owned())]
    );
    assert_eq!(*fixture.seen.lock().unwrap(), ["draft", r#"{"ok": true}"#]);
    // The revision request reached the model as a user row.
    assert!(matches!(
        &session.transcript()[3],
        Message::User { content } if content.contains("Answer with")
    ));
}

#[tokio::test]
async fn bounded_tools_use_a_round_and_skip_parsing_that_response() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([lookup("c1"), lookup("c2")]).with_text("let me check"),
        ProviderResponse::text(r#"{"ok": true, "fact": 42}"#),
    ]);
    let mut session = fixture
        .agent(&provider, ArtifactLoop::new(0).with_bounded_tools())
        .session("s");
    let outcome = session
        .run("write it", RunOptions::new().max_tool_rounds(1))
        .await
        .unwrap();

    assert_eq!(
        outcome.summary().artifact,
        Some(json!({"ok": true, "fact": 42}))
    );
    assert_eq!(outcome.summary().tool_rounds, 1);
    assert_eq!(outcome.summary().revisions, 0);
    assert_eq!(fixture.lookups(), 2);
    assert_eq!(
        *fixture.seen.lock().unwrap(),
        [r#"{"ok": true, "fact": 42}"#],
        "the response with calls was not parsed"
    );
    // The assistant row with the calls, then their results, then the next answer.
    let roles: Vec<_> = session
        .transcript()
        .iter()
        .map(|row| match row {
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::Tool { .. } => "tool",
        })
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "assistant"]);
}

#[test]
fn bounded_tools_run_one_at_a_time_whatever_the_concurrency() {
    let gates = Gates::new(["a", "b"]);
    let registry = ToolRegistry::from_iter([gates.tool("wait")]);
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "wait", json!({"gate": "a"})),
            ToolCall::new("c2", "wait", json!({"gate": "b"})),
        ]),
        ProviderResponse::text(r#"{"ok": true}"#),
    ]);
    let seen = Arc::default();
    let agent = Agent::new(Dispatcher::builder(registry).build(), provider).with_config(
        AgentConfig::new()
            .loop_strategy(LoopStrategy::GenerateValidateRevise(
                ArtifactLoop::new(0).with_bounded_tools(),
            ))
            .artifact_validator(checker(&seen))
            .tool_concurrency(4),
    );
    let mut session = agent.session("s");
    let mut run = pin!(session.run("go", RunOptions::new()));
    assert!(poll_once(run.as_mut()).is_pending());
    assert_eq!(gates.started(), ["a"]);
    assert!(release_and_poll(&gates, "a", run.as_mut()).is_pending());
    assert_eq!(gates.started(), ["a", "b"]);
    let Poll::Ready(outcome) = release_and_poll(&gates, "b", run.as_mut()) else {
        panic!("both calls were released");
    };
    assert_eq!(outcome.unwrap().end, RunEnd::Completed);
    assert_eq!(gates.max_in_flight(), 1);
}

#[tokio::test]
async fn a_call_past_the_round_limit_executes_nothing_and_fails_the_loop() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([lookup("c1")]),
        ProviderResponse::calls([lookup("c2")]),
        ProviderResponse::text("never sent"),
    ]);
    let mut session = fixture
        .agent(&provider, ArtifactLoop::new(5).with_bounded_tools())
        .session("s");
    let error = session
        .run("write it", RunOptions::new().max_tool_rounds(1))
        .await
        .unwrap_err();

    assert_eq!(
        error,
        RunError::ArtifactFailed {
            reason: ArtifactFailure::ToolRoundLimit
        }
    );
    assert_eq!(fixture.lookups(), 1);
    assert_eq!(
        summary(&tool_rows(session.transcript())),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "tool_round_limit".to_owned())
        ]
    );
    let failed = fixture
        .log
        .events()
        .into_iter()
        .find(|event| matches!(event.kind, RunEventKind::ArtifactFailed { .. }))
        .expect("an artifact_failed event");
    let wire = serde_json::to_value(&failed).unwrap();
    assert_eq!(wire["type"], "artifact_failed");
    assert_eq!(wire["metadata"]["reason"], "tool_round_limit");
}

#[tokio::test]
async fn tool_rounds_never_consume_revisions() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([lookup("c1")]),
        ProviderResponse::text("not json"),
        ProviderResponse::calls([lookup("c2")]),
        ProviderResponse::calls([lookup("c3")]),
        ProviderResponse::text(r#"{"ok": true}"#),
    ]);
    let mut session = fixture
        .agent(&provider, ArtifactLoop::new(1).with_bounded_tools())
        .session("s");
    let outcome = session
        .run("write it", RunOptions::new().max_tool_rounds(3))
        .await
        .unwrap();
    assert_eq!(outcome.summary().tool_rounds, 3);
    assert_eq!(outcome.summary().revisions, 1);
    assert_eq!(fixture.lookups(), 3);
}

#[tokio::test]
async fn too_many_revisions_fail_the_loop() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::text("first"),
        ProviderResponse::text("second"),
        ProviderResponse::text(r#"{"ok": true}"#),
    ]);
    let mut session = fixture.agent(&provider, ArtifactLoop::new(1)).session("s");
    let error = session
        .run("write it", RunOptions::new())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        RunError::ArtifactFailed {
            reason: ArtifactFailure::MaxRevisions
        }
    );
    assert_eq!(provider.requests().len(), 2);
}

#[tokio::test]
async fn the_loop_needs_a_validator_before_anything_is_written() {
    let provider = ScriptedProvider::new([ProviderResponse::text("x")]);
    let agent = Agent::new(
        Dispatcher::builder(ToolRegistry::new()).build(),
        provider.clone(),
    )
    .with_config(
        AgentConfig::new()
            .loop_strategy(LoopStrategy::GenerateValidateRevise(ArtifactLoop::new(1))),
    );
    let mut session = agent.session("s");
    let error = session
        .run("write it", RunOptions::new())
        .await
        .unwrap_err();
    assert!(matches!(error, RunError::Misconfigured { .. }));
    assert!(session.transcript().is_empty());
    assert!(provider.requests().is_empty());
}
