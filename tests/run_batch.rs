//! The batch executor: concurrency limits, call-order rows, exclusive tools, tripwires, aborts and
//! the tool-round limit. Calls block on oneshot gates and the test polls the batch by hand, so
//! every step is deterministic (no sleeps, no timing).

mod run_support;

use std::pin::pin;
use std::task::Poll;

use prism::call::ErrorCode;
use prism::context::CancellationToken;
use prism::dispatch::{CollectingSink, InMemoryLedger, SecretRedactor};
use prism::guard::{GuardrailRule, RulePack, call_middleware};
use prism::registry::{ToolGrant, ToolScope};
use prism::run::{AgentConfig, BatchExecutor, BatchStop, ScriptedProvider};
use prism::{
    Agent, Dispatcher, Message, ProviderResponse, RunError, RunOptions, ToolCall,
    ToolExecutionContext, ToolRegistry,
};
use run_support::{Gates, named, poll_once, release_and_poll, summary, tool_rows};
use serde_json::json;

/// A dispatcher whose only tool is the gated `wait`.
fn wait_dispatcher(gates: &Gates) -> Dispatcher {
    Dispatcher::builder(ToolRegistry::from_iter([gates.tool("wait")])).build()
}

fn gated_calls(keys: &[&str]) -> Vec<ToolCall> {
    keys.iter()
        .map(|key| ToolCall::new(*key, "wait", json!({ "gate": key })))
        .collect()
}

#[test]
fn rows_come_back_in_call_order_when_later_calls_finish_first() {
    let keys = ["a", "b", "c"];
    let gates = Gates::new(keys);
    let dispatcher = wait_dispatcher(&gates);
    let ctx = ToolExecutionContext::new();
    let executor = BatchExecutor::new(3);
    let mut batch = pin!(executor.run(&dispatcher, gated_calls(&keys), &ctx));

    assert!(poll_once(batch.as_mut()).is_pending());
    assert_eq!(gates.started(), ["a", "b", "c"]);
    assert!(release_and_poll(&gates, "c", batch.as_mut()).is_pending());
    assert!(release_and_poll(&gates, "b", batch.as_mut()).is_pending());
    let Poll::Ready(outcome) = release_and_poll(&gates, "a", batch.as_mut()) else {
        panic!("every call was released");
    };
    let values: Vec<_> = outcome
        .results
        .iter()
        .map(|r| r.as_value().cloned())
        .collect();
    assert_eq!(
        values,
        [
            Some(json!({"gate": "a"})),
            Some(json!({"gate": "b"})),
            Some(json!({"gate": "c"}))
        ]
    );
    assert!(outcome.stopped.is_none());
}

#[test]
fn never_more_than_n_in_flight_and_n_whenever_n_are_ready() {
    let keys = ["k0", "k1", "k2", "k3", "k4", "k5", "k6"];
    let gates = Gates::new(keys);
    let dispatcher = wait_dispatcher(&gates);
    let ctx = ToolExecutionContext::new();
    let executor = BatchExecutor::new(3);
    let mut batch = pin!(executor.run(&dispatcher, gated_calls(&keys), &ctx));

    assert!(poll_once(batch.as_mut()).is_pending());
    assert_eq!(
        gates.started(),
        ["k0", "k1", "k2"],
        "claims follow call order"
    );
    assert_eq!(gates.in_flight(), 3);

    // Release out of order; each release frees one slot that the next call fills at once.
    for (release, expected_started) in [("k1", 4), ("k0", 5), ("k3", 6), ("k2", 7)] {
        assert!(release_and_poll(&gates, release, batch.as_mut()).is_pending());
        assert_eq!(gates.started().len(), expected_started);
        assert_eq!(
            gates.in_flight(),
            3,
            "three calls remain ready, so three run"
        );
    }
    for release in ["k6", "k5"] {
        assert!(release_and_poll(&gates, release, batch.as_mut()).is_pending());
    }
    assert_eq!(gates.in_flight(), 1);
    let Poll::Ready(outcome) = release_and_poll(&gates, "k4", batch.as_mut()) else {
        panic!("every call was released");
    };
    assert_eq!(gates.max_in_flight(), 3);
    let ids: Vec<_> = outcome
        .results
        .iter()
        .map(|r| r.tool_call_id.to_string())
        .collect();
    assert_eq!(ids, keys);
}

#[test]
fn an_exclusive_tool_makes_the_batch_sequential() {
    let keys = ["a", "b", "c"];
    let gates = Gates::new(keys);
    let registry = ToolRegistry::from_iter([gates.tool("wait"), gates.exclusive_tool("lock")]);
    let dispatcher = Dispatcher::builder(registry).build();
    let ctx = ToolExecutionContext::new();
    let mut calls = gated_calls(&keys);
    calls[1].name = "lock".into();
    let executor = BatchExecutor::new(8);
    let mut batch = pin!(executor.run(&dispatcher, calls, &ctx));

    assert!(poll_once(batch.as_mut()).is_pending());
    assert_eq!(gates.started(), ["a"]);
    assert!(release_and_poll(&gates, "a", batch.as_mut()).is_pending());
    assert_eq!(gates.started(), ["a", "b"]);
    assert!(release_and_poll(&gates, "b", batch.as_mut()).is_pending());
    gates.release("c");
    assert!(poll_once(batch.as_mut()).is_ready());
    assert_eq!(gates.max_in_flight(), 1);
}

/// A run's calls execute the tools pinned when it started: a tool the host has since replaced
/// with one that is not exclusive still runs alone, as the pinned tool says.
#[test]
fn exclusivity_is_read_from_the_run_s_pinned_tools() {
    let keys = ["a", "b"];
    let gates = Gates::new(keys);
    let registry = ToolRegistry::from_iter([gates.tool("wait"), gates.exclusive_tool("lock")]);
    let pinned = registry.snapshot();
    registry.remove("lock");
    registry.register(gates.tool("lock")).unwrap();
    let dispatcher = Dispatcher::builder(registry).build();
    let ctx = ToolExecutionContext::new()
        .with_scope(ToolScope::new(ToolGrant::All).with_pinned_tools(pinned));
    let mut calls = gated_calls(&keys);
    calls[0].name = "lock".into();
    let executor = BatchExecutor::new(4);
    let mut batch = pin!(executor.run(&dispatcher, calls, &ctx));

    assert!(poll_once(batch.as_mut()).is_pending());
    assert_eq!(gates.started(), ["a"], "the pinned `lock` is exclusive");
    assert!(release_and_poll(&gates, "a", batch.as_mut()).is_pending());
    assert!(release_and_poll(&gates, "b", batch.as_mut()).is_ready());
    assert_eq!(gates.max_in_flight(), 1);
}

#[test]
fn a_middleware_rename_into_an_exclusive_tool_is_planned_as_exclusive() {
    let keys = ["a", "b"];
    let gates = Gates::new(keys);
    let registry = ToolRegistry::from_iter([gates.tool("wait"), gates.exclusive_tool("lock")]);
    let dispatcher = Dispatcher::builder(registry)
        .middleware(call_middleware(|call| {
            if call.name() == "LOCK" {
                call.set_name("lock");
            }
        }))
        .build();
    let ctx = ToolExecutionContext::new();
    let mut calls = gated_calls(&keys);
    calls[0].name = "LOCK".into();
    let executor = BatchExecutor::new(4);
    let mut batch = pin!(executor.run(&dispatcher, calls, &ctx));

    assert!(poll_once(batch.as_mut()).is_pending());
    assert_eq!(gates.started(), ["a"], "the batch runs one call at a time");
    assert!(release_and_poll(&gates, "a", batch.as_mut()).is_pending());
    let Poll::Ready(outcome) = release_and_poll(&gates, "b", batch.as_mut()) else {
        panic!("every call was released");
    };
    assert_eq!(outcome.results[0].name.as_ref(), "lock");
    assert_eq!(gates.max_in_flight(), 1);
}

#[tokio::test]
async fn a_tripwire_lets_claimed_calls_settle_and_answers_the_rest_not_dispatched() {
    let gates = Gates::new(["a", "b", "c"]);
    let registry = ToolRegistry::from_iter([named("ok"), named("shell"), gates.tool("wait")]);
    let ledger = InMemoryLedger::new();
    let events = CollectingSink::new();
    let dispatcher = Dispatcher::builder(registry)
        .guardrails(
            RulePack::new("safety")
                .rule(GuardrailRule::deny_tools("no-shell", ["shell"]).tripwire()),
        )
        .events(events.clone())
        .ledger(ledger.clone())
        .build();
    let provider = ScriptedProvider::new([ProviderResponse::calls([
        ToolCall::new("c1", "wait", json!({"gate": "a"})),
        ToolCall::new("c2", "wait", json!({"gate": "b", "fail": true})),
        ToolCall::new("c3", "shell", json!({})),
        ToolCall::new("c4", "wait", json!({"gate": "c"})),
        ToolCall::new("c5", "ok", json!({})),
        ToolCall::new("c6", "wait", json!({"gate": "never"})),
    ])]);
    let agent = Agent::new(dispatcher, provider.clone())
        .with_config(AgentConfig::new().tool_concurrency(4));
    let mut session = agent.session("s1");

    let outcome = {
        let mut run = pin!(session.run("go", RunOptions::new()));
        assert!(
            poll_once(run.as_mut()).is_pending(),
            "three claimed calls are still running"
        );
        assert_eq!(gates.started(), ["a", "b", "c"]);
        for key in ["b", "c"] {
            assert!(release_and_poll(&gates, key, run.as_mut()).is_pending());
        }
        gates.release("a");
        match poll_once(run.as_mut()) {
            Poll::Ready(outcome) => outcome,
            Poll::Pending => panic!("every claimed call was released"),
        }
    };
    assert_eq!(
        gates.started(),
        ["a", "b", "c"],
        "nothing was claimed after the tripwire"
    );

    let Err(RunError::Tripwire(tripwire)) = outcome else {
        panic!("the run fails with the tripwire, got {outcome:?}");
    };
    assert_eq!(tripwire.result().tool_call_id.as_str(), "c3");
    let rows = tool_rows(session.transcript());
    let codes: Vec<_> = summary(&rows).into_iter().map(|(_, code)| code).collect();
    assert_eq!(
        codes,
        [
            "ok",
            "tool_error",
            "guardrail_blocked",
            "ok",
            "tool_call_not_dispatched",
            "tool_call_not_dispatched"
        ]
    );
    let ids: Vec<_> = rows.iter().map(|row| row.tool_call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5", "c6"]);

    // Never-started calls have an error row in the ledger and no event.
    let c5 = ledger.records_for_call("c5");
    assert_eq!(c5.len(), 1);
    assert_eq!(c5[0].status.as_str(), "error");
    assert!(
        events
            .events()
            .iter()
            .all(|event| event.tool_call_id.as_str() != "c5")
    );
    assert_eq!(provider.requests().len(), 1, "no turn after the tripwire");
}

#[test]
fn an_abort_stops_claiming_and_claimed_calls_settle_as_cancelled() {
    let keys = ["a", "b", "c", "d"];
    let gates = Gates::new(keys);
    let dispatcher = wait_dispatcher(&gates);
    let token = CancellationToken::new();
    let ctx = ToolExecutionContext::new().with_cancellation(token.clone());
    let executor = BatchExecutor::new(2);
    let mut batch = pin!(executor.run(&dispatcher, gated_calls(&keys), &ctx));

    assert!(poll_once(batch.as_mut()).is_pending());
    assert_eq!(gates.started(), ["a", "b"]);
    token.cancel();
    let Poll::Ready(outcome) = poll_once(batch.as_mut()) else {
        panic!("claimed calls settle once the token fires");
    };
    assert_eq!(outcome.stopped, Some(BatchStop::Cancelled));
    let rows: Vec<_> = outcome.results.iter().collect();
    let codes: Vec<_> = summary(&rows).into_iter().map(|(_, code)| code).collect();
    assert_eq!(
        codes,
        [
            "cancelled",
            "cancelled",
            "tool_call_not_dispatched",
            "tool_call_not_dispatched"
        ]
    );
    assert_eq!(gates.started(), ["a", "b"]);
}

/// A run allowed one tool round: `ok` (call `c1`) in the first, then `second`. Returns the run's
/// error and its transcript.
async fn past_a_one_round_limit<const N: usize>(
    dispatcher: Dispatcher,
    second: [ToolCall; N],
) -> (RunError, Vec<Message>) {
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "ok", json!({}))]),
        ProviderResponse::calls(second),
    ]);
    let agent = Agent::new(dispatcher, provider);
    let mut session = agent.session("s1");
    let error = session
        .run("go", RunOptions::new().max_tool_rounds(1))
        .await
        .unwrap_err();
    (error, session.transcript().to_vec())
}

#[tokio::test]
async fn calls_past_the_tool_round_limit_run_nothing_and_still_get_rows() {
    let gates = Gates::new([]);
    let registry = ToolRegistry::from_iter([named("ok"), gates.tool("wait")]);
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(registry).ledger(ledger.clone()).build();
    let (error, transcript) = past_a_one_round_limit(
        dispatcher,
        [
            ToolCall::new("c2", "wait", json!({"gate": "x"})),
            ToolCall::new("c3", "ok", json!({})),
        ],
    )
    .await;

    assert_eq!(error, RunError::ToolRoundLimit { limit: 1 });
    assert!(
        gates.started().is_empty(),
        "nothing past the limit executes"
    );
    let rows = tool_rows(&transcript);
    assert_eq!(
        summary(&rows),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "tool_round_limit".to_owned()),
            ("c3".to_owned(), "tool_round_limit".to_owned()),
        ]
    );
    assert_eq!(ledger.records_for_call("c2")[0].status.as_str(), "error");
    assert_eq!(
        rows[1].error_info().unwrap().code,
        ErrorCode::ToolRoundLimit
    );
}

#[tokio::test]
async fn a_secret_in_the_name_of_a_call_past_the_limit_is_redacted() {
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([named("ok")]))
        .ledger(ledger.clone())
        .redactor(SecretRedactor::new(["sk-live-42"]))
        .build();
    let (error, transcript) = past_a_one_round_limit(
        dispatcher,
        [ToolCall::new("c2", "leak_sk-live-42", json!({}))],
    )
    .await;

    assert_eq!(error, RunError::ToolRoundLimit { limit: 1 });
    let row = &ledger.records_for_call("c2")[0];
    assert_eq!(&*row.tool_name, "leak_[REDACTED]");
    let stored = serde_json::to_string(&ledger.records()).unwrap();
    assert!(
        !stored.contains("sk-live-42"),
        "no secret in any row: {stored}"
    );
    assert_eq!(&*tool_rows(&transcript)[1].name, "leak_[REDACTED]");
}
