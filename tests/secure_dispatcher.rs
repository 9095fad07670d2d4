//! The secure dispatcher: trust, permission and a validator guaranteed by its type, and no tool
//! without a parameter schema, whether registered before it was built or after.

mod common;

use common::*;
use prism::*;
use serde_json::{Value, json};

fn schemaless(name: &str, runs: &Runs) -> ToolDefinition {
    let runs = runs.clone();
    ToolDefinition::builder(name).run_sync(move |_, _| {
        runs.hit();
        Ok(Value::Null)
    })
}

fn secure(registry: ToolRegistry) -> Result<SecureDispatcher, SecureBuildError> {
    Dispatcher::builder(registry)
        .trust(trust_fn(|_, ctx| match ctx.metadata().get("untrusted") {
            Some(_) => Err("untrusted session".into()),
            None => Ok(()),
        }))
        .permission(permission_fn(|_, _, _| Ok(())))
        .validate(validator_fn(|_, _| Ok(())))
        .build_secure()
}

#[test]
fn build_secure_names_every_tool_without_a_schema() {
    let runs = Runs::new();
    let registry =
        ToolRegistry::from_iter([schemaless("a", &runs), echo("b"), schemaless("c", &runs)]);
    let error = secure(registry).unwrap_err();
    assert_eq!(error.tools, ["a", "c"]);
    assert_eq!(
        error.to_string(),
        "a secure dispatcher needs a parameter schema on every tool; missing on: a, c"
    );
}

#[tokio::test]
async fn tools_registered_later_without_a_schema_are_refused_at_dispatch() {
    let runs = Runs::new();
    let registry = ToolRegistry::from_iter([echo("typed")]);
    let dispatcher = secure(registry.clone()).unwrap();
    registry.register(schemaless("late", &runs)).unwrap();

    let result = dispatcher
        .dispatch(ToolCall::new("c", "late", json!({})), &ctx())
        .await
        .unwrap();
    assert_eq!(result.block_reason(), Some(BlockReason::ValidationFailed));
    assert!(
        error_of(&result).message.contains("no parameter schema"),
        "{result:?}"
    );
    let through_inner = run(
        dispatcher.as_dispatcher(),
        ToolCall::new("d", "late", json!({})),
    )
    .await;
    assert_eq!(
        through_inner.block_reason(),
        Some(BlockReason::ValidationFailed)
    );
    assert_eq!(runs.count(), 0);

    let typed = dispatcher
        .dispatch(ToolCall::new("e", "typed", json!({"x": 1})), &ctx())
        .await
        .unwrap();
    assert_eq!(typed.as_value(), Some(&json!({"x": 1})));
}

#[tokio::test]
async fn the_secure_dispatcher_still_runs_its_guards() {
    let dispatcher = secure(ToolRegistry::from_iter([echo("typed")])).unwrap();
    let ctx = ctx().with_metadata("untrusted", json!(true));
    let result = dispatcher
        .dispatch(ToolCall::new("c", "typed", json!({})), &ctx)
        .await
        .unwrap();
    assert_eq!(result.block_reason(), Some(BlockReason::PermissionDenied));
}

#[tokio::test]
async fn a_plain_dispatcher_runs_schemaless_tools() {
    let runs = Runs::new();
    let dispatcher =
        Dispatcher::builder(ToolRegistry::from_iter([schemaless("free", &runs)])).build();
    assert!(
        run(&dispatcher, ToolCall::new("c", "free", json!({})))
            .await
            .is_success()
    );
    assert_eq!(runs.count(), 1);
}

#[test]
fn dispatchers_can_be_shared_across_threads() {
    fn shareable<T: Clone + Send + Sync + 'static>() {}
    shareable::<Dispatcher>();
    shareable::<SecureDispatcher>();
}
