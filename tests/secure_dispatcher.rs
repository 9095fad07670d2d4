//! The secure dispatcher: trust, permission and a validator guaranteed by its type, and no tool
//! without a parameter schema, whether registered before it was built or after.

mod common;

use common::*;
use prism::call::BlockReason;
use prism::dispatch::{RegisterError, SecureBuildError, SecureDispatcher};
use prism::guard::{permission_fn, trust_fn, validator_fn};
use prism::registry::{
    MissingParameterSchema, RegistryError, RegistrySnapshot, ToolGrant, ToolScope,
};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolRegistry};
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

fn with_schema(name: &str, schema: Value) -> ToolDefinition {
    ToolDefinition::builder(name)
        .parameters(schema)
        .run_sync(|_, _| Ok(Value::Null))
}

#[test]
fn a_schema_that_constrains_nothing_is_no_schema() {
    assert!(echo("typed").declares_parameters());
    assert!(with_schema("f", json!(false)).declares_parameters());
    for tool in [
        schemaless("none", &Runs::new()),
        with_schema("empty", json!({})),
        with_schema("true", json!(true)),
    ] {
        assert!(!tool.declares_parameters(), "{}", tool.name());
    }
}

#[test]
fn build_secure_names_every_tool_without_a_schema() {
    let runs = Runs::new();
    let registry = ToolRegistry::from_iter([
        schemaless("a", &runs),
        echo("b"),
        with_schema("c", json!({})),
        with_schema("d", json!(true)),
    ]);
    let error = secure(registry.clone()).unwrap_err();
    let missing = |name: &str| MissingParameterSchema(name.to_owned());
    assert_eq!(
        error.missing_schemas,
        [missing("a"), missing("c"), missing("d")]
    );
    assert_eq!(
        error.to_string(),
        "Tool a declares no parameter schema (`{}` and `true` constrain nothing), and this \
         dispatcher runs only tools that declare one; Tool c declares no parameter schema (`{}` \
         and `true` constrain nothing), and this dispatcher runs only tools that declare one; \
         Tool d declares no parameter schema (`{}` and `true` constrain nothing), and this \
         dispatcher runs only tools that declare one"
    );
    assert!(
        !registry.requires_parameters(),
        "a failed build leaves the registry's rule alone"
    );
    registry.register(with_schema("e", json!({}))).unwrap();
}

#[tokio::test]
async fn tools_without_a_schema_are_refused_at_registration_however_they_are_registered() {
    let runs = Runs::new();
    let registry = ToolRegistry::from_iter([echo("typed")]);
    let dispatcher = secure(registry.clone()).unwrap();
    assert!(registry.requires_parameters());
    let other_clone = dispatcher.as_dispatcher().registry().clone();
    for tool in [schemaless("late", &runs), with_schema("late", json!({}))] {
        let refused = RegistryError::MissingSchema(MissingParameterSchema("late".into()));
        assert_eq!(registry.register(tool.clone()).unwrap_err(), refused);
        assert_eq!(other_clone.register(tool.clone()).unwrap_err(), refused);
        assert_eq!(
            dispatcher.register(tool.clone()).unwrap_err(),
            RegisterError::MissingSchema(MissingParameterSchema("late".into()))
        );
        assert_eq!(
            dispatcher.as_dispatcher().register(tool).unwrap_err(),
            RegisterError::MissingSchema(MissingParameterSchema("late".into()))
        );
    }
    assert!(!registry.contains("late"));
    dispatcher.register(echo("later")).unwrap();
    assert!(registry.contains("later"));

    let typed = dispatcher
        .dispatch(ToolCall::new("e", "typed", json!({"x": 1})), &ctx())
        .await
        .unwrap();
    assert_eq!(typed.as_value(), Some(&json!({"x": 1})));
}

#[tokio::test]
async fn a_schemaless_definition_that_reaches_dispatch_another_way_is_refused_there() {
    let runs = Runs::new();
    let dispatcher = secure(ToolRegistry::from_iter([echo("typed")])).unwrap();
    // A run pins the definitions its calls resolve to; a pinned one without a schema is still
    // refused before it runs.
    let counted = runs.clone();
    let loose = ToolDefinition::builder("typed")
        .parameters(json!({}))
        .run_sync(move |_, _| {
            counted.hit();
            Ok(Value::Null)
        });
    let pinned = RegistrySnapshot::from_tools([loose]);
    let scope = ToolScope::new(ToolGrant::All).with_pinned_tools(std::sync::Arc::new(pinned));
    let result = dispatcher
        .dispatch(
            ToolCall::new("c", "typed", json!({})),
            &ctx().with_scope(scope),
        )
        .await
        .unwrap();
    assert_eq!(result.block_reason(), Some(BlockReason::ValidationFailed));
    assert_eq!(
        error_of(&result).message,
        MissingParameterSchema("typed".into()).to_string()
    );
    assert_eq!(runs.count(), 0);
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
