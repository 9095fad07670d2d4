//! Middleware: rewrites calls before every check and successful results after the tool, and can
//! neither grant access by renaming nor change the call id.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use prism::call::{BlockReason, ErrorCode, ToolOutcome};
use prism::guard::{
    GuardrailRule, RulePack, ToolMiddleware, call_middleware, permission_fn, result_middleware,
    trust_fn, validator_fn,
};
use prism::registry::{ToolFilter, ToolGrant, ToolScope};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolError, ToolRegistry};
use serde_json::{Value, json};

fn rename_to(target: &'static str) -> impl ToolMiddleware {
    call_middleware(move |call| call.set_name(target))
}

#[tokio::test]
async fn renaming_points_the_call_at_another_registered_tool() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let normalise = {
        let seen = Arc::clone(&seen);
        call_middleware(move |call| {
            seen.lock()
                .unwrap()
                .push((call.id().to_string(), call.name().to_owned()));
            let lower = call.name().to_ascii_lowercase();
            call.set_name(lower);
        })
    };
    let watch = Watch::new();
    let dispatcher = watch
        .attach(
            Dispatcher::builder(ToolRegistry::from_iter([echo("search")])).middleware(normalise),
        )
        .build();
    let result = run(
        &dispatcher,
        ToolCall::new("call-9", "SEARCH", json!({"q": "x"})),
    )
    .await;
    assert_eq!(result.as_value(), Some(&json!({"q": "x"})));
    assert_eq!(&*result.name, "search");
    assert_eq!(result.tool_call_id.as_str(), "call-9");
    assert_eq!(
        *seen.lock().unwrap(),
        [("call-9".to_owned(), "SEARCH".to_owned())]
    );
}

#[tokio::test]
async fn renaming_cannot_pass_a_filter() {
    let runs = Runs::new();
    let registry = ToolRegistry::from_iter([counted("safe", &runs), counted("admin", &runs)]);
    let dispatcher = Dispatcher::builder(registry)
        .middleware(rename_to("admin"))
        .filter(ToolFilter::allow(["safe"]))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "safe", json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::ToolDenied));
    assert_eq!(&*result.name, "admin");
    assert_eq!(
        runs.count(),
        0,
        "neither the renamed nor the original tool ran"
    );
}

#[tokio::test]
async fn renaming_cannot_leave_the_run_grant() {
    let runs = Runs::new();
    let registry = ToolRegistry::from_iter([counted("safe", &runs), counted("admin", &runs)]);
    let dispatcher = Dispatcher::builder(registry)
        .middleware(rename_to("admin"))
        .build();
    let ctx = ctx().with_scope(ToolScope::new(ToolGrant::only(["safe"])));
    let result = run_in(&dispatcher, ToolCall::new("c", "safe", json!({})), &ctx).await;
    assert_eq!(result.block_reason(), Some(BlockReason::ToolDenied));
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn renaming_to_an_unregistered_name_is_an_unknown_tool() {
    let runs = Runs::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([counted("safe", &runs)]))
        .middleware(rename_to("shell"))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "safe", json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::UnknownTool));
    assert_eq!(error_of(&result).message, "Unknown tool: shell");
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn trust_and_permission_judge_the_renamed_tool() {
    let runs = Runs::new();
    let registry = ToolRegistry::from_iter([counted("safe", &runs), counted("admin", &runs)]);
    let judged = Arc::new(Mutex::new(Vec::new()));
    let (trust_seen, permission_seen) = (Arc::clone(&judged), Arc::clone(&judged));
    let dispatcher = Dispatcher::builder(registry)
        .middleware(rename_to("admin"))
        .trust(trust_fn(move |tool, _| {
            trust_seen
                .lock()
                .unwrap()
                .push(format!("trust:{}", tool.name()));
            Ok(())
        }))
        .permission(permission_fn(move |tool, _, _| {
            permission_seen
                .lock()
                .unwrap()
                .push(format!("permission:{}", tool.name()));
            if tool.name() == "admin" {
                Err("admin needs approval".into())
            } else {
                Ok(())
            }
        }))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "safe", json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::PermissionDenied));
    assert_eq!(*judged.lock().unwrap(), ["trust:admin", "permission:admin"]);
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn the_call_id_survives_every_rewrite() {
    let watch = Watch::new();
    let rewrite = call_middleware(|call| {
        call.set_name("target");
        *call.arguments_mut() = json!({"rewritten": call.id().as_str()});
    });
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([echo("target")])).middleware(rewrite))
        .build();
    let result = run(
        &dispatcher,
        ToolCall::new("original-id", "anything", json!({})),
    )
    .await;
    assert_eq!(result.tool_call_id.as_str(), "original-id");
    assert_eq!(
        result.as_value(),
        Some(&json!({"rewritten": "original-id"}))
    );
    assert!(
        watch
            .events
            .events()
            .iter()
            .all(|event| event.tool_call_id.as_str() == "original-id")
    );
    assert!(
        watch
            .ledger
            .records()
            .iter()
            .all(|row| row.tool_call_id.as_str() == "original-id")
    );
}

#[tokio::test]
async fn rewritten_arguments_are_checked_again() {
    let runs = Runs::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([counted("e", &runs)]))
        .middleware(call_middleware(|call| {
            *call.arguments_mut() = json!("not an object")
        }))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({"fine": true}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::InvalidArguments));
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn middleware_cannot_repair_unparsable_argument_text() {
    let runs = Runs::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([counted("e", &runs)]))
        .middleware(call_middleware(|call| {
            *call.arguments_mut() = json!({"patched": true})
        }))
        .build();
    let result = run(
        &dispatcher,
        ToolCall::malformed("c", "e", "unexpected end of input"),
    )
    .await;
    assert_eq!(error_of(&result).code, ErrorCode::InvalidJsonArguments);
    assert_eq!(runs.count(), 0);
}

/// Counts `tool_result` middleware calls and wraps each value it sees.
fn wrapping(seen: &Arc<Mutex<Vec<String>>>) -> impl ToolMiddleware {
    let seen = Arc::clone(seen);
    result_middleware(move |result| {
        seen.lock()
            .unwrap()
            .push(format!("{}:{}", result.id(), result.name()));
        let value = result.value_mut().take();
        *result.value_mut() = json!({"data": value});
    })
}

#[tokio::test]
async fn tool_result_middleware_rewrites_successful_results_everywhere() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let watch = Watch::new();
    let dispatcher = watch
        .attach(
            Dispatcher::builder(ToolRegistry::from_iter([echo("e")])).middleware(wrapping(&seen)),
        )
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({"x": 1}))).await;
    let wrapped = json!({"data": {"x": 1}});
    assert_eq!(result.as_value(), Some(&wrapped));
    assert_eq!(*seen.lock().unwrap(), ["c:e"]);
    let finished_row = watch.ledger.records().pop().unwrap();
    assert_eq!(finished_row.outcome, Some(ToolOutcome::Value(wrapped)));
}

#[tokio::test]
async fn tool_result_middleware_skips_everything_but_success() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let registry = ToolRegistry::from_iter([
        echo("e"),
        ToolDefinition::builder("fails").run_sync(|_, _| Err("no".into())),
        ToolDefinition::builder("panics")
            .run_sync(|_, _| -> Result<Value, ToolError> { panic!("boom") }),
        ToolDefinition::builder("leaks").run_sync(|_, _| Ok(json!("forbidden words"))),
    ]);
    let pack =
        RulePack::new("words").rule(GuardrailRule::output_contains("forbidden", ["forbidden"]));
    let dispatcher = Dispatcher::builder(registry)
        .middleware(wrapping(&seen))
        .guardrails(pack)
        .validate(validator_fn(|_, args| match args.get("reject") {
            Some(_) => Err("rejected".into()),
            None => Ok(()),
        }))
        .build();
    for (name, arguments) in [
        ("fails", json!({})),
        ("panics", json!({})),
        ("leaks", json!({})),
        ("ghost", json!({})),
        ("e", json!({"reject": true})),
    ] {
        let result = run(&dispatcher, ToolCall::new("c", name, arguments)).await;
        assert!(!result.is_success(), "{name}");
    }
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );
}
