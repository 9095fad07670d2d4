//! Approvals (suspend, store, resume), the round gate and the secure agent.

mod run_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use prism::call::{BlockReason, ErrorCode, ErrorInfo};
use prism::guard::{before_execute_fn, permission_fn, trust_fn, validator_fn};
use prism::registry::{MissingParameterSchema, RegistryError};
use prism::run::{
    AgentConfig, ApprovalDecision, ApprovalKey, ApprovalRecord, ApprovalState, ApprovalStore,
    ApprovalStoreError, InMemoryApprovalStore, RunEnd, ScriptedProvider, SessionState, approval_fn,
    round_gate_fn,
};
use prism::{
    Agent, Dispatcher, Message, ProviderResponse, RunError, RunOptions, ToolCall, ToolDefinition,
    ToolExecutionContext, ToolRegistry, ToolResult,
};
use run_support::{named, summary, tool_rows, wipe};
use serde_json::{Value, json};

struct Fixture {
    registry: ToolRegistry,
    store: InMemoryApprovalStore,
    wipes: Arc<AtomicUsize>,
}

impl Fixture {
    fn new() -> Self {
        let wipes = Arc::new(AtomicUsize::new(0));
        Self {
            registry: ToolRegistry::from_iter([named("read"), wipe(&wipes)]),
            store: InMemoryApprovalStore::new(),
            wipes,
        }
    }

    fn agent(&self, provider: &ScriptedProvider) -> Agent {
        Agent::new(
            Dispatcher::builder(self.registry.clone()).build(),
            provider.clone(),
        )
        .with_approvals(self.store.clone())
        .with_approval_policy(approval_fn(|tool, _args| {
            tool.annotations().destructive == Some(true)
        }))
    }

    fn wipes(&self) -> usize {
        self.wipes.load(Ordering::SeqCst)
    }
}

fn wipe_call(id: &str, path: &str) -> ToolCall {
    ToolCall::new(id, "wipe", json!({ "path": path }))
}

#[tokio::test]
async fn a_run_suspends_is_stored_and_resumes_with_an_approval() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "read", json!({})),
            wipe_call("c2", "/tmp/cache"),
        ]),
        ProviderResponse::text("cleaned"),
    ]);
    let mut session = fixture.agent(&provider).session("s1");
    let outcome = session.run("clean up", RunOptions::new()).await.unwrap();

    assert!(outcome.is_suspended());
    let pending = outcome.pending_approvals().to_vec();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].key.call_id.as_str(), "c2");
    assert_eq!(pending[0].arguments, json!({"path": "/tmp/cache"}));
    assert_eq!(fixture.wipes(), 0, "suspended before the side effect");
    assert!(
        tool_rows(session.transcript()).is_empty(),
        "rows are held until resume"
    );
    assert_eq!(fixture.store.pending("s1").await.unwrap(), pending);

    // Store the session, restore it elsewhere with the same approval store, approve, resume.
    let stored = serde_json::to_string(&session.state()).unwrap();
    let state: SessionState = serde_json::from_str(&stored).unwrap();
    let mut restored = fixture.agent(&provider).restore(state);
    let outcome = restored
        .resume([ApprovalDecision::approve(&pending[0].key)])
        .await
        .unwrap();

    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.summary().text, "cleaned");
    assert_eq!(fixture.wipes(), 1);
    assert_eq!(
        summary(&tool_rows(restored.transcript())),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "ok".to_owned())
        ]
    );
    assert!(restored.suspended().is_none());
    assert_eq!(
        restored.resume([]).await.unwrap_err(),
        RunError::NotSuspended
    );
}

#[tokio::test]
async fn changed_arguments_need_a_new_approval() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("c1", "/tmp/cache")]),
        ProviderResponse::text("done"),
    ]);
    let mut session = fixture.agent(&provider).session("s1");
    session.run("clean up", RunOptions::new()).await.unwrap();

    let other_arguments = ApprovalKey::new("s1", "c1".into(), "wipe", &json!({"path": "/"}));
    let error = session
        .resume([ApprovalDecision::approve(&other_arguments)])
        .await
        .unwrap_err();
    assert_eq!(error, RunError::Approval(ApprovalStoreError::KeyMismatch));
    assert_eq!(fixture.wipes(), 0);
    assert!(session.suspended().is_some(), "still waiting");
    assert_eq!(
        session
            .run("something else", RunOptions::new())
            .await
            .unwrap_err(),
        RunError::Suspended,
        "a suspended run is finished before another starts"
    );

    let exact = ApprovalKey::new("s1", "c1".into(), "wipe", &json!({"path": "/tmp/cache"}));
    session
        .resume([ApprovalDecision::approve(&exact)])
        .await
        .unwrap();
    assert_eq!(fixture.wipes(), 1);
}

#[tokio::test]
async fn an_approval_for_one_call_does_not_cover_another_call_of_the_same_tool() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("c1", "/tmp/a"), wipe_call("c2", "/tmp/a")]),
        ProviderResponse::text("done"),
    ]);
    let mut session = fixture.agent(&provider).session("s1");
    let outcome = session.run("clean up", RunOptions::new()).await.unwrap();
    let first = outcome.pending_approvals()[0].key.clone();
    assert_eq!(
        outcome.pending_approvals().len(),
        1,
        "one call at a time: the second is asked about when it would run"
    );
    assert_eq!(first.call_id.as_str(), "c1");

    let outcome = session
        .resume([ApprovalDecision::approve(&first)])
        .await
        .unwrap();
    assert_eq!(fixture.wipes(), 1, "the approved call ran");
    let second = outcome.pending_approvals()[0].key.clone();
    assert_eq!(
        second.call_id.as_str(),
        "c2",
        "same tool, same arguments, another call: another approval"
    );
    assert_ne!(second, first);

    // Deciding the first call again is refused; the second is refused by the person.
    let again = session.resume([ApprovalDecision::approve(&first)]).await;
    assert_eq!(
        again.unwrap_err(),
        RunError::Approval(ApprovalStoreError::AlreadyConsumed)
    );
    let outcome = session
        .resume([ApprovalDecision::refuse(&second, "not twice")])
        .await
        .unwrap();
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(fixture.wipes(), 1);
    let rows = tool_rows(session.transcript());
    assert!(rows[0].is_success());
    assert_eq!(rows[1].block_reason(), Some(BlockReason::PermissionDenied));
    assert_eq!(
        rows[1].error_info().unwrap().message,
        "The call was not approved: not twice"
    );
    // The model saw the refusal on its next turn.
    let last_request = provider.requests().pop().unwrap();
    assert!(matches!(
        last_request.transcript.last(),
        Some(Message::Tool { result }) if result.tool_call_id.as_str() == "c2"
    ));

    // A decision is consumed once: it cannot run its call a second time.
    assert_eq!(
        fixture.store.consume(&first).await.unwrap_err(),
        ApprovalStoreError::AlreadyConsumed
    );
}

#[tokio::test]
async fn calls_after_a_waiting_call_run_when_the_run_resumes() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "read", json!({})),
            wipe_call("c2", "/a"),
            ToolCall::new("c3", "read", json!({})),
            wipe_call("c4", "/b"),
        ]),
        ProviderResponse::text("done"),
    ]);
    let agent = fixture
        .agent(&provider)
        .with_config(AgentConfig::new().tool_concurrency(4));
    let mut session = agent.session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    let keys: Vec<_> = outcome
        .pending_approvals()
        .iter()
        .map(|pending| pending.key.clone())
        .collect();
    assert_eq!(keys.len(), 2, "both wipes were claimed together");

    session
        .resume(keys.iter().map(ApprovalDecision::approve))
        .await
        .unwrap();
    assert_eq!(
        summary(&tool_rows(session.transcript())),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "ok".to_owned()),
            ("c3".to_owned(), "ok".to_owned()),
            ("c4".to_owned(), "ok".to_owned()),
        ]
    );
    assert_eq!(fixture.wipes(), 2);
}

#[tokio::test]
async fn a_sequential_batch_resumes_its_unstarted_calls_in_call_order_after_a_restore() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            wipe_call("c1", "/a"),
            ToolCall::new("c2", "read", json!({})),
            ToolCall::new("c3", "read", json!({})),
        ]),
        ProviderResponse::text("done"),
    ]);
    let mut session = fixture.agent(&provider).session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();
    assert!(tool_rows(session.transcript()).is_empty());

    // The calls that never started travel with the stored state.
    let stored = serde_json::to_string(&session.state()).unwrap();
    let state: SessionState = serde_json::from_str(&stored).unwrap();
    let mut restored = fixture.agent(&provider).restore(state);
    let outcome = restored
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();

    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(fixture.wipes(), 1);
    assert_eq!(
        summary(&tool_rows(restored.transcript())),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "ok".to_owned()),
            ("c3".to_owned(), "ok".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_state_stored_with_not_dispatched_rows_for_unstarted_calls_still_resumes() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            wipe_call("c1", "/a"),
            ToolCall::new("c2", "read", json!({})),
        ]),
        ProviderResponse::text("done"),
    ]);
    let mut session = fixture.agent(&provider).session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();

    // Earlier versions stored a call after the waiting one as a settled not-dispatched row.
    let mut state = serde_json::to_value(session.state()).unwrap();
    let held = &mut state["suspended"]["calls"][1];
    assert_eq!(held["status"], "unstarted");
    let row = ToolResult::error(
        "c2".into(),
        "read",
        ErrorInfo::new(
            ErrorCode::ToolCallNotDispatched,
            "The batch stopped at a call waiting for approval before this call started; it did not run",
        ),
    );
    *held = json!({"status": "settled", "result": row});
    let state: SessionState = serde_json::from_value(state).unwrap();

    let mut restored = fixture.agent(&provider).restore(state);
    let outcome = restored
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(
        summary(&tool_rows(restored.transcript())),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "tool_call_not_dispatched".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_call_that_policy_refuses_gets_its_refusal_and_no_pending_approval() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            wipe_call("c1", "/"),
            wipe_call("c2", "/etc"),
            wipe_call("c3", "/tmp"),
        ]),
        ProviderResponse::text("done"),
    ]);
    let dispatcher = Dispatcher::builder(fixture.registry.clone())
        .permission(permission_fn(
            |_tool, args: &Value, _ctx| match args["path"].as_str() {
                Some("/") => Err("not the root".to_owned().into()),
                _ => Ok(()),
            },
        ))
        .before_execute(before_execute_fn(|_tool, args: &Value, _ctx| {
            match args["path"].as_str() {
                Some("/etc") => Err("not the system".to_owned().into()),
                _ => Ok(()),
            }
        }))
        .build();
    let agent = Agent::new(dispatcher, provider)
        .with_approvals(fixture.store.clone())
        .with_approval_policy(approval_fn(|tool, _| tool.name() == "wipe"));
    let mut session = agent.session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();

    let asked: Vec<_> = outcome
        .pending_approvals()
        .iter()
        .map(|pending| pending.key.call_id.as_str().to_owned())
        .collect();
    assert_eq!(asked, ["c3"], "only the call that would run is asked about");
    assert_eq!(fixture.store.pending("s1").await.unwrap().len(), 1);

    let key = outcome.pending_approvals()[0].key.clone();
    session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::PermissionDenied));
    assert_eq!(rows[0].error_info().unwrap().message, "not the root");
    assert_eq!(rows[1].block_reason(), Some(BlockReason::ExecutionDenied));
    assert!(rows[2].is_success());
    assert_eq!(fixture.wipes(), 1);
}

#[tokio::test]
async fn an_approved_call_is_checked_again_when_the_run_resumes() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("c1", "/tmp")]),
        ProviderResponse::text("done"),
    ]);
    let allowed = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let dispatcher = Dispatcher::builder(fixture.registry.clone())
        .permission(permission_fn({
            let allowed = Arc::clone(&allowed);
            move |_tool, _args: &Value, _ctx| {
                if allowed.load(Ordering::SeqCst) {
                    Ok(())
                } else {
                    Err("wiping was switched off".to_owned().into())
                }
            }
        }))
        .build();
    let agent = Agent::new(dispatcher, provider)
        .with_approvals(fixture.store.clone())
        .with_approval_policy(approval_fn(|tool, _| tool.name() == "wipe"));
    let mut session = agent.session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();

    allowed.store(false, Ordering::SeqCst);
    let outcome = session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(
        fixture.wipes(),
        0,
        "the policy changed while the call waited"
    );
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::PermissionDenied));
}

#[tokio::test]
async fn without_an_approval_store_a_call_needing_approval_is_refused() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("c1", "/"), ToolCall::new("c2", "read", json!({}))]),
        ProviderResponse::text("done"),
    ]);
    let agent = Agent::new(
        Dispatcher::builder(fixture.registry.clone()).build(),
        provider,
    )
    .with_approval_policy(approval_fn(|tool, _| tool.name() == "wipe"));
    let mut session = agent.session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    assert_eq!(outcome.end, RunEnd::Completed);
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::PermissionDenied));
    assert!(rows[1].is_success());
    assert_eq!(fixture.wipes(), 0);
}

#[tokio::test]
async fn a_tool_can_require_approval_itself() {
    let store = Arc::new(InMemoryApprovalStore::new());
    let pay = ToolDefinition::builder("pay")
        .parameters(json!({"type": "object"}))
        .requires_approval(true)
        .run_sync(|_, _| Ok(json!("paid")));
    let provider = ScriptedProvider::new([ProviderResponse::calls([ToolCall::new(
        "c1",
        "pay",
        json!({"cents": 100}),
    )])]);
    let agent = Agent::new(
        Dispatcher::builder(ToolRegistry::from_iter([pay])).build(),
        provider,
    )
    .with_approvals(Arc::clone(&store));
    let outcome = agent
        .session("s1")
        .run("pay", RunOptions::new())
        .await
        .unwrap();
    assert_eq!(outcome.pending_approvals()[0].key.tool, "pay");
}

#[tokio::test]
async fn the_round_gate_runs_before_any_worker_and_a_refusal_stops_cleanly() {
    let fixture = Fixture::new();
    let charged: Arc<Mutex<Vec<(u32, usize, usize)>>> = Arc::default();
    let gate = {
        let charged = Arc::clone(&charged);
        let wipes = Arc::clone(&fixture.wipes);
        round_gate_fn(move |round| {
            charged.lock().unwrap().push((
                round.round,
                round.calls.len(),
                wipes.load(Ordering::SeqCst),
            ));
            if round.round == 2 {
                Err("budget spent")
            } else {
                Ok(())
            }
        })
    };
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "read", json!({}))]),
        ProviderResponse::calls([
            ToolCall::new("c2", "read", json!({})),
            ToolCall::new("c3", "read", json!({})),
        ]),
        ProviderResponse::text("never asked"),
    ]);
    let agent = Agent::new(
        Dispatcher::builder(fixture.registry.clone()).build(),
        provider.clone(),
    );
    let mut session = agent.session("s1");
    let outcome = session
        .run(
            "go",
            RunOptions::new()
                .charge_tool_round(gate)
                .tool_concurrency(4),
        )
        .await
        .unwrap();

    assert_eq!(
        outcome.end,
        RunEnd::Stopped {
            reason: "budget spent".into()
        }
    );
    assert_eq!(*charged.lock().unwrap(), [(1, 1, 0), (2, 2, 0)]);
    let rows = tool_rows(session.transcript());
    assert_eq!(
        summary(&rows),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "tool_call_not_dispatched".to_owned()),
            ("c3".to_owned(), "tool_call_not_dispatched".to_owned()),
        ]
    );
    assert!(
        rows[1]
            .error_info()
            .unwrap()
            .message
            .contains("budget spent")
    );
    assert_eq!(
        provider.requests().len(),
        2,
        "the run ended after the refusal"
    );
}

#[tokio::test]
async fn a_refusing_gate_executes_nothing_even_when_approvals_would_be_needed() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([ProviderResponse::calls([
        ToolCall::new("c1", "read", json!({})),
        wipe_call("c2", "/"),
    ])]);
    let mut session = fixture.agent(&provider).session("s1");
    let outcome = session
        .run(
            "go",
            RunOptions::new().charge_tool_round(round_gate_fn(|_| Err("no"))),
        )
        .await
        .unwrap();
    assert!(matches!(outcome.end, RunEnd::Stopped { .. }));
    assert!(fixture.store.pending("s1").await.unwrap().is_empty());
    let rows = tool_rows(session.transcript());
    assert!(rows.iter().all(|row| !row.is_success()));
}

fn secure_dispatcher(registry: ToolRegistry) -> prism::dispatch::SecureDispatcher {
    Dispatcher::builder(registry)
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .build_secure()
        .unwrap()
}

#[tokio::test]
async fn the_secure_agent_demands_schemas_and_asks_before_destructive_tools() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("c1", "/")]),
        ProviderResponse::text("never"),
    ]);
    let agent = Agent::secure(
        secure_dispatcher(fixture.registry.clone()),
        provider.clone(),
        fixture.store.clone(),
    );
    assert!(agent.is_secure());
    let outcome = agent
        .session("s1")
        .run("go", RunOptions::new())
        .await
        .unwrap();
    assert!(
        outcome.is_suspended(),
        "destructive tools wait for a decision by default"
    );
    assert_eq!(fixture.wipes(), 0);

    // A tool with a schema that constrains nothing cannot join the registry afterwards, however
    // it is registered, and no secure dispatcher (so no secure agent) is built over one that has it.
    let loose = ToolDefinition::builder("loose")
        .parameters(json!({}))
        .run_sync(|_, _| Ok(Value::Null));
    assert_eq!(
        fixture.registry.register(loose.clone()).unwrap_err(),
        RegistryError::MissingSchema(MissingParameterSchema("loose".into()))
    );
    assert!(!fixture.registry.contains("loose"));
    let error = Dispatcher::builder(ToolRegistry::from_iter([loose]))
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .build_secure()
        .unwrap_err();
    assert_eq!(
        error.missing_schemas,
        [MissingParameterSchema("loose".into())]
    );
}

#[tokio::test]
async fn arguments_over_the_limits_are_refused_without_asking_for_approval() {
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("c1", &"x".repeat(2 * 1024 * 1024))]),
        ProviderResponse::text("done"),
    ]);
    let mut session = fixture.agent(&provider).session("s1");
    let outcome = session.run("clean up", RunOptions::new()).await.unwrap();

    assert!(!outcome.is_suspended(), "nothing to approve");
    assert!(fixture.store.pending("s1").await.unwrap().is_empty());
    assert_eq!(
        summary(&tool_rows(session.transcript())),
        [("c1".to_owned(), "invalid_arguments".to_owned())]
    );
    assert_eq!(fixture.wipes(), 0);
}

#[tokio::test]
async fn clones_of_an_in_memory_approval_store_share_their_approvals() {
    let fixture = Fixture::new();
    let review = fixture.store.clone();
    let provider = ScriptedProvider::new([ProviderResponse::calls([wipe_call("c1", "/tmp")])]);
    let mut session = fixture.agent(&provider).session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    assert!(outcome.is_suspended());
    let pending = review.pending("s1").await.unwrap();
    assert_eq!(pending.len(), 1);
    review
        .decide(&ApprovalDecision::approve(&pending[0].key))
        .await
        .unwrap();
    assert!(matches!(
        fixture.store.get(&pending[0].key).await,
        Ok(Some(ApprovalRecord {
            state: ApprovalState::Decided { .. },
            ..
        }))
    ));
}

#[tokio::test]
async fn a_later_run_that_reuses_a_call_id_is_asked_about_and_runs_once_approved() {
    // Providers that send calls without ids get synthetic ones (`call_0`, `gemini-call-0`), so
    // one session's runs can repeat an id, with the same arguments or with others.
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("call_0", "/tmp/a")]),
        ProviderResponse::text("first"),
        ProviderResponse::calls([wipe_call("call_0", "/tmp/a")]),
        ProviderResponse::text("second"),
        ProviderResponse::calls([wipe_call("call_0", "/tmp/b")]),
        ProviderResponse::text("third"),
    ]);
    let mut session = fixture.agent(&provider).session("s1");
    for (turn, text) in ["first", "second", "third"].into_iter().enumerate() {
        let outcome = session.run(text, RunOptions::new()).await.unwrap();
        let pending = outcome.pending_approvals().to_vec();
        assert_eq!(pending.len(), 1, "run {text}");
        assert_eq!(
            fixture.store.pending("s1").await.unwrap(),
            pending,
            "run {text}: whoever decides sees the call"
        );
        assert_eq!(
            fixture.wipes(),
            turn,
            "run {text}: nothing ran before the approval"
        );
        let outcome = session
            .resume([ApprovalDecision::approve(&pending[0].key)])
            .await
            .unwrap();
        assert_eq!(outcome.end, RunEnd::Completed, "run {text}");
        assert_eq!(outcome.summary().text, text);
        assert_eq!(
            fixture.wipes(),
            turn + 1,
            "run {text}: the approved call ran once"
        );
    }
}

#[tokio::test]
async fn a_nested_call_of_a_tool_the_policy_asks_about_is_refused_not_run_unapproved() {
    // `outer` dispatches the model's nested calls itself, with its own context: nobody can be
    // asked there, so a call the agent's policy wants approved must not run.
    let fixture = Fixture::new();
    let dispatcher_slot: Arc<OnceLock<Dispatcher>> = Arc::default();
    let nested: Arc<Mutex<Vec<ToolResult>>> = Arc::default();
    let outer = {
        let slot = Arc::clone(&dispatcher_slot);
        let nested = Arc::clone(&nested);
        ToolDefinition::builder("outer").run(move |_args, ctx: ToolExecutionContext| {
            let slot = Arc::clone(&slot);
            let nested = Arc::clone(&nested);
            async move {
                let dispatcher = slot.get().expect("set before the run").clone();
                let call = wipe_call("n1", "/");
                let result = dispatcher
                    .dispatch(call, &ctx)
                    .await
                    .map_err(|tripwire| tripwire.to_string())?;
                nested.lock().unwrap().push(result);
                Ok(json!("nested call made"))
            }
        })
    };
    fixture.registry.register(outer).unwrap();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "outer", json!({}))]),
        ProviderResponse::text("done"),
    ]);
    let agent = fixture.agent(&provider);
    dispatcher_slot.set(agent.dispatcher().clone()).unwrap();
    let mut session = agent.session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();

    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(fixture.wipes(), 0, "the nested wipe did not run");
    let nested = nested.lock().unwrap();
    let error = nested[0].error_info().expect("the nested call was refused");
    assert_eq!(error.code, ErrorCode::PermissionDenied);
}

#[tokio::test]
async fn a_resume_refuses_decisions_on_calls_its_run_does_not_wait_for() {
    // Two sessions share the store; a decision handed to the wrong session must not decide the
    // other session's call.
    let fixture = Fixture::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("c1", "/tmp/a")]),
        ProviderResponse::calls([wipe_call("c1", "/tmp/b")]),
    ]);
    let agent = fixture.agent(&provider);
    let mut first = agent.session("s1");
    let mut second = agent.session("s2");
    first.run("clean a", RunOptions::new()).await.unwrap();
    let outcome = second.run("clean b", RunOptions::new()).await.unwrap();
    let others = outcome.pending_approvals()[0].key.clone();

    let error = first
        .resume([ApprovalDecision::approve(&others)])
        .await
        .unwrap_err();
    assert_eq!(error, RunError::Approval(ApprovalStoreError::NotFound));
    assert_eq!(
        fixture.store.get(&others).await.unwrap().unwrap().state,
        ApprovalState::Pending,
        "the other session's call is still undecided"
    );
    assert!(first.suspended().is_some());
    assert_eq!(fixture.wipes(), 0);
}
