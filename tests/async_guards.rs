//! Guards that answer after an `await`: trust, permission, validators and the execution policy
//! asking a service (here a task answering over channels), in a dispatcher and in a run; panics
//! inside a pending check; the fixed `AllowAll` and `DenyAll` answers.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Runs, counted, object_schema};
use prism::call::BlockReason;
use prism::definition::Refusal;
use prism::dispatch::{InMemoryLedger, RecordStatus};
use prism::guard::{
    AllowAll, DenyAll, PermissionPolicy, Verdict, before_execute_fn, permission_fn, trust_fn,
    validator_fn,
};
use prism::run::ScriptedProvider;
use prism::{
    Agent, Dispatcher, ProviderResponse, RunOptions, ToolCall, ToolDefinition,
    ToolExecutionContext, ToolRegistry, ToolResult,
};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// A stand-in for an authorisation service: a task that answers each question over a oneshot
/// channel, allowing every tool but `delete`. It counts the questions it was asked.
#[derive(Clone)]
struct Authoriser {
    questions: mpsc::UnboundedSender<(String, oneshot::Sender<bool>)>,
    asked: Arc<AtomicUsize>,
}

impl Authoriser {
    fn start() -> Self {
        let (questions, mut incoming) =
            mpsc::unbounded_channel::<(String, oneshot::Sender<bool>)>();
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&asked);
        tokio::spawn(async move {
            while let Some((tool, answer)) = incoming.recv().await {
                counter.fetch_add(1, Ordering::SeqCst);
                // Yield once so the answer really arrives later than the question.
                tokio::task::yield_now().await;
                let _ = answer.send(tool != "delete");
            }
        });
        Self { questions, asked }
    }

    /// Asks about `tool`; the returned verdict is pending until the service answers.
    fn ask(&self, tool: &str) -> Verdict<'static> {
        let (answer, reply) = oneshot::channel();
        let sent = self.questions.send((tool.to_owned(), answer)).is_ok();
        let tool = tool.to_owned();
        Verdict::pending(async move {
            match (sent, reply.await) {
                (true, Ok(true)) => Ok(()),
                (true, Ok(false)) => Err(format!("the service refuses {tool}").into()),
                _ => Err("the authorisation service did not answer".into()),
            }
        })
    }

    fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }
}

fn registry(runs: &Runs) -> ToolRegistry {
    ToolRegistry::from_iter([counted("read", runs), counted("delete", runs)])
}

async fn dispatch(dispatcher: &Dispatcher, name: &str) -> ToolResult {
    dispatcher
        .dispatch(
            ToolCall::new("c1", name, json!({})),
            &ToolExecutionContext::new(),
        )
        .await
        .expect("no guardrail trips here")
}

fn assert_blocked(result: &ToolResult, reason: BlockReason, mentions: &str) {
    assert_eq!(result.block_reason(), Some(reason), "{result:?}");
    let message = &result
        .error_info()
        .expect("a blocked result has an error")
        .message;
    assert!(
        message.contains(mentions),
        "{message:?} should mention {mentions:?}"
    );
}

#[tokio::test]
async fn a_permission_check_that_awaits_a_oneshot_answer_decides_the_call() {
    let service = Authoriser::start();
    let asking = service.clone();
    let runs = Runs::new();
    let dispatcher = Dispatcher::builder(registry(&runs))
        .permission(permission_fn(move |tool, _args, _ctx| {
            asking.ask(tool.name())
        }))
        .build();

    let result = dispatch(&dispatcher, "read").await;
    assert!(result.as_value().is_some(), "{result:?}");
    assert_eq!(runs.count(), 1);

    let result = dispatch(&dispatcher, "delete").await;
    assert_blocked(
        &result,
        BlockReason::PermissionDenied,
        "the service refuses delete",
    );
    assert_eq!(runs.count(), 1, "a refused call never runs");
    assert_eq!(service.asked(), 2);
}

#[tokio::test]
async fn every_guard_kind_may_answer_later_and_refusals_keep_their_reason() {
    let service = Authoriser::start();
    let runs = Runs::new();
    let (trust, permission, validate, policy) = (
        service.clone(),
        service.clone(),
        service.clone(),
        service.clone(),
    );
    let dispatcher = Dispatcher::builder(registry(&runs))
        .trust(trust_fn(move |tool, _| trust.ask(tool.name())))
        .permission(permission_fn(move |tool, _, _| permission.ask(tool.name())))
        .validate(validator_fn(move |tool, _| validate.ask(tool.name())))
        .before_execute(before_execute_fn(move |tool, _, _| policy.ask(tool.name())))
        .build();
    let result = dispatch(&dispatcher, "read").await;
    assert!(result.as_value().is_some(), "{result:?}");
    assert_eq!(service.asked(), 4, "each of the four guards asked once");

    // Each stage alone refusing `delete` gives that stage's reason.
    let stages: [(&str, BlockReason); 4] = [
        ("trust", BlockReason::PermissionDenied),
        ("permission", BlockReason::PermissionDenied),
        ("validator", BlockReason::ValidationFailed),
        ("policy", BlockReason::ExecutionDenied),
    ];
    for (stage, reason) in stages {
        let s = service.clone();
        let builder = Dispatcher::builder(registry(&runs));
        let dispatcher = match stage {
            "trust" => builder.trust(trust_fn(move |t, _| s.ask(t.name()))).build(),
            "permission" => builder
                .permission(permission_fn(move |t, _, _| s.ask(t.name())))
                .build(),
            "validator" => builder
                .validate(validator_fn(move |t, _| s.ask(t.name())))
                .build(),
            _ => builder
                .before_execute(before_execute_fn(move |t, _, _| s.ask(t.name())))
                .build(),
        };
        let result = dispatch(&dispatcher, "delete").await;
        assert_blocked(&result, reason, "the service refuses delete");
    }
    assert_eq!(runs.count(), 1, "only the allowed call ran");
}

/// A hand-written policy whose pending check borrows the arguments and the tool.
struct AmountLimit {
    service: Authoriser,
}

impl PermissionPolicy for AmountLimit {
    fn check<'a>(
        &'a self,
        tool: &'a ToolDefinition,
        arguments: &'a Value,
        _ctx: &'a ToolExecutionContext,
    ) -> Verdict<'a> {
        if arguments.get("amount").and_then(Value::as_i64).unwrap_or(0) <= 100 {
            return Verdict::allow();
        }
        let asked = self.service.ask(tool.name());
        Verdict::pending(async move {
            asked.resolve().await?;
            let amount = &arguments["amount"];
            Err(Refusal::new(format!(
                "{} of {amount} needs a second approver",
                tool.name()
            )))
        })
    }
}

#[tokio::test]
async fn a_hand_written_pending_check_may_borrow_the_call() {
    let runs = Runs::new();
    let service = Authoriser::start();
    let dispatcher = Dispatcher::builder(registry(&runs))
        .permission(AmountLimit {
            service: service.clone(),
        })
        .build();
    let ctx = ToolExecutionContext::new();
    let small = ToolCall::new("c1", "read", json!({"amount": 5}));
    let result = dispatcher.dispatch(small, &ctx).await.unwrap();
    assert!(result.as_value().is_some());
    assert_eq!(service.asked(), 0, "an answer known at once asks nobody");

    let large = ToolCall::new("c2", "read", json!({"amount": 500}));
    let result = dispatcher.dispatch(large, &ctx).await.unwrap();
    assert_blocked(&result, BlockReason::PermissionDenied, "read of 500 needs");
    assert_eq!(service.asked(), 1);
}

#[tokio::test]
async fn a_pending_check_that_panics_refuses_the_call_and_writes_no_started_row() {
    let runs = Runs::new();
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(registry(&runs))
        .permission(permission_fn(|_, _, _| {
            Verdict::pending(async {
                tokio::task::yield_now().await;
                panic!("the service client broke")
            })
        }))
        .ledger(ledger.clone())
        .build();
    let result = dispatch(&dispatcher, "read").await;
    assert_blocked(
        &result,
        BlockReason::PermissionDenied,
        "permission policy panicked",
    );
    assert!(
        result
            .error_info()
            .unwrap()
            .message
            .contains("the service client broke")
    );
    assert_eq!(runs.count(), 0);
    let statuses: Vec<_> = ledger.records().into_iter().map(|row| row.status).collect();
    assert_eq!(statuses, [RecordStatus::Blocked], "no started row");
}

#[tokio::test]
async fn a_run_waits_for_an_async_permission_check_and_goes_on() {
    let service = Authoriser::start();
    let asking = service.clone();
    let runs = Runs::new();
    let dispatcher = Dispatcher::builder(registry(&runs))
        .permission(permission_fn(move |tool, _, _| asking.ask(tool.name())))
        .build();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "read", json!({})),
            ToolCall::new("c2", "delete", json!({})),
        ]),
        ProviderResponse::text("done"),
    ]);
    let agent = Agent::new(dispatcher, provider.clone());
    let mut session = agent.session("s");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    assert!(format!("{outcome:?}").contains("done"), "{outcome:?}");
    assert_eq!(service.asked(), 2);
    assert_eq!(runs.count(), 1, "only read ran");

    // The second provider turn saw both results: read's value and delete's refusal.
    let transcript = format!("{:?}", provider.requests()[1].transcript);
    assert!(
        transcript.contains("the service refuses delete"),
        "{transcript}"
    );
}

#[tokio::test]
async fn allow_all_and_deny_all_fill_every_guard_slot() {
    let runs = Runs::new();
    let secure = Dispatcher::builder(registry(&runs))
        .trust(AllowAll)
        .permission(AllowAll)
        .validate(AllowAll)
        .before_execute(AllowAll)
        .build_secure()
        .expect("every tool declares a schema");
    let result = dispatch(secure.as_dispatcher(), "read").await;
    assert!(result.as_value().is_some(), "{result:?}");

    let closed = DenyAll::new("maintenance window");
    let cases: [(Dispatcher, BlockReason); 4] = [
        (
            Dispatcher::builder(registry(&runs))
                .trust(closed.clone())
                .build(),
            BlockReason::PermissionDenied,
        ),
        (
            Dispatcher::builder(registry(&runs))
                .permission(closed.clone())
                .build(),
            BlockReason::PermissionDenied,
        ),
        (
            Dispatcher::builder(registry(&runs))
                .validate(closed.clone())
                .build(),
            BlockReason::ValidationFailed,
        ),
        (
            Dispatcher::builder(registry(&runs))
                .before_execute(closed.clone())
                .build(),
            BlockReason::ExecutionDenied,
        ),
    ];
    for (dispatcher, reason) in cases {
        assert_blocked(
            &dispatch(&dispatcher, "read").await,
            reason,
            "maintenance window",
        );
    }
    assert_eq!(runs.count(), 1);
}

#[test]
fn guard_closures_that_return_ok_need_no_annotation() {
    // These are the closures that once needed `Ok(())`.
    let _ = validator_fn(|_, _| Ok(()));
    let _ = trust_fn(|_, _| Ok(()));
    let _ = permission_fn(|_, _, _| Ok(()));
    let _ = before_execute_fn(|_, _, _| Ok(()));
    let _ = Dispatcher::builder(ToolRegistry::from_iter([ToolDefinition::builder("t")
        .parameters(object_schema())
        .run_sync(|_, _| Ok(Value::Null))]))
    .trust(trust_fn(|_, _| Ok(())))
    .permission(permission_fn(|_, _, _| Ok(())))
    .validate(validator_fn(|_, _| Ok(())))
    .build_secure()
    .expect("the tool declares a schema");
}
