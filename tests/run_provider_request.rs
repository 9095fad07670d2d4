//! What a run sends its provider besides the transcript (instructions, tool choice, parallel
//! calls), what it keeps of each response (replay state, usage), and the stream of provider
//! events a host can watch.

mod run_support;

use std::sync::{Arc, Mutex};

use prism::call::ReplayState;
use prism::run::{
    AgentConfig, ProviderErrorKind, ProviderEvent, ScriptedProvider, SessionState, StopReason,
    ToolChoice, Usage,
};
use prism::{Agent, Message, ProviderResponse, RunError, RunOptions};
use prism::{Dispatcher, ToolCall, ToolRegistry};
use run_support::named;
use serde_json::json;

fn agent(provider: &ScriptedProvider, config: AgentConfig) -> Agent {
    let registry = ToolRegistry::from_iter([named("read")]);
    Agent::new(Dispatcher::builder(registry).build(), provider.clone()).with_config(config)
}

#[tokio::test]
async fn instructions_and_tool_choice_reach_the_provider_and_the_run_wins() {
    let provider =
        ScriptedProvider::new([ProviderResponse::text("a"), ProviderResponse::text("b")]);
    let config = AgentConfig::new()
        .instructions("You are terse.")
        .tool_choice(ToolChoice::Required);
    let mut session = agent(&provider, config).session("s");
    session.run("hi", RunOptions::new()).await.unwrap();
    session
        .run(
            "again",
            RunOptions::new().tool_choice(ToolChoice::tool("read")),
        )
        .await
        .unwrap();
    let requests = provider.requests();
    assert_eq!(requests[0].instructions.as_deref(), Some("You are terse."));
    assert_eq!(requests[0].tool_choice, ToolChoice::Required);
    assert_eq!(requests[1].instructions.as_deref(), Some("You are terse."));
    assert_eq!(requests[1].tool_choice, ToolChoice::tool("read"));
}

#[tokio::test]
async fn replay_state_is_kept_on_the_assistant_row_and_survives_the_stored_session() {
    let call = ToolCall::new("c1", "read", json!({})).with_replay(ReplayState::new(
        "gemini",
        json!({"thoughtSignature": "sig-1"}),
    ));
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([call])
            .with_replay(ReplayState::new(
                "anthropic",
                json!([{"type": "thinking", "signature": "t"}]),
            ))
            .with_usage(Usage {
                input_tokens: 3,
                output_tokens: 4,
                ..Usage::default()
            }),
        ProviderResponse::text("done"),
    ]);
    let agent = agent(&provider, AgentConfig::new());
    let mut session = agent.session("s");
    session.run("hi", RunOptions::new()).await.unwrap();

    let stored = serde_json::to_string(&session.state()).unwrap();
    let restored: SessionState = serde_json::from_str(&stored).unwrap();
    let Message::Assistant {
        tool_calls, replay, ..
    } = &restored.transcript[1]
    else {
        panic!("row 1 is the assistant's: {:?}", restored.transcript[1]);
    };
    assert_eq!(
        replay
            .as_ref()
            .and_then(|state| state.data_for("anthropic")),
        Some(&json!([{"type": "thinking", "signature": "t"}]))
    );
    assert_eq!(
        tool_calls[0]
            .replay
            .as_deref()
            .and_then(|state| state.data_for("gemini")),
        Some(&json!({"thoughtSignature": "sig-1"}))
    );
    // The second turn was sent the replay state too.
    let sent = &provider.requests()[1].transcript[1];
    assert_eq!(sent, &restored.transcript[1]);
}

#[tokio::test]
async fn a_host_watches_each_turn_stream_in() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "read", json!({"path": "a"}))]),
        ProviderResponse::text("done"),
    ]);
    let mut session = agent(&provider, AgentConfig::new()).session("s");
    let options = RunOptions::new().provider_events(move |event: &ProviderEvent| {
        log.lock().unwrap().push(event.clone());
    });
    session.run("hi", options).await.unwrap();
    let seen = seen.lock().unwrap();
    let started = seen
        .iter()
        .position(
            |event| matches!(event, ProviderEvent::ToolCallStarted { name, .. } if name == "read"),
        )
        .expect("the call was seen forming");
    assert!(matches!(
        &seen[started + 1],
        ProviderEvent::ToolCallArgumentsDelta { delta, .. } if delta == r#"{"path":"a"}"#
    ));
    let stops: Vec<_> = seen
        .iter()
        .filter_map(|event| match event {
            ProviderEvent::Stop { reason } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(stops, [StopReason::ToolCalls, StopReason::EndTurn]);
}

#[tokio::test]
async fn a_provider_failure_keeps_its_kind_through_the_run() {
    let provider = ScriptedProvider::new([]);
    let mut session = agent(&provider, AgentConfig::new()).session("s");
    let error = session.run("hi", RunOptions::new()).await.unwrap_err();
    let RunError::Provider { error, .. } = error else {
        panic!("expected a provider error, got {error:?}");
    };
    assert_eq!(error.kind(), ProviderErrorKind::Other);
    assert!(error.message().contains("no response left"));
}
