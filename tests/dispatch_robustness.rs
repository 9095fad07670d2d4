//! The pipeline under hostile tools and guards: values too deep for recursive code on a small
//! stack, guards that panic at length or never answer, closures that do work before returning
//! their future, error codes of any size. Each call still ends with one bounded result.

mod common;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};

use common::*;
use prism::call::{BlockReason, ContentBlock, ErrorCode, ToolOutput};
use prism::context::CancellationToken;
use prism::definition::Refusal;
use prism::dispatch::Limits;
use prism::guard::{Verdict, before_execute_fn, permission_fn, trust_fn};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolError, ToolRegistry, ToolResult};
use serde_json::{Value, json};

/// Runs `work` on a thread with a 2 MiB stack, as much as a Tokio worker has.
fn on_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(work)
        .unwrap()
        .join()
        .expect("the work finished without overflowing its stack")
}

/// Runs the `#[ignore]`d test `name` of this binary in a child process (a stack overflow aborts
/// the whole process, so it cannot be caught in-process) and asserts that it passed.
fn passes_in_child(name: &str) {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(exe)
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
    assert!(
        output.status.success(),
        "the dispatch crashed the process ({:?}): {tail}",
        output.status
    );
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, _| Value::Array(vec![inner]))
}

// ---------------------------------------------------------------------------------------------
// 1. Output over the byte bound because of its content blocks, with a deeply nested value: the
//    value is dropped with serde_json's recursive destructor and overflows the stack.

#[test]
#[ignore = "run in a child process by output_over_bytes_by_content_with_deep_value_does_not_crash"]
fn child_output_over_bytes_by_content_with_deep_value() {
    let tool = ToolDefinition::builder("deep").run_output(|_, _| async {
        Ok(ToolOutput::new(nested(100_000)).with_content([ContentBlock::text("x".repeat(200))]))
    });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .limits(Limits {
            max_output_bytes: 100,
            ..Limits::default()
        })
        .build();
    let code = on_small_stack(move || {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(async {
                let result = run(&dispatcher, ToolCall::new("c", "deep", json!({}))).await;
                error_of(&result).code.clone()
            })
    });
    assert_eq!(code, ErrorCode::OutputTooLarge);
}

#[test]
fn output_over_bytes_by_content_with_deep_value_does_not_crash() {
    passes_in_child("child_output_over_bytes_by_content_with_deep_value");
}

// ---------------------------------------------------------------------------------------------
// 2. A guard that panics with a long message: the refusal message is not bounded, although
//    MESSAGE_LIMIT ("Bound on guardrail and panic messages") promises 200 bytes.

#[tokio::test]
async fn a_guard_panic_message_is_bounded_like_every_other_panic_message() {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .trust(trust_fn(|_, _| -> Result<(), Refusal> {
            panic!("{}", "state dump ".repeat(100))
        }))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::PermissionDenied));
    let len = error_of(&result).message.len();
    assert!(len <= 220, "a guard's panic message is {len} bytes long");
}

// ---------------------------------------------------------------------------------------------
// 3. A `run` closure is called in `prepare`, before before_execute: code in it runs for a
//    call the execution policy refuses.

#[tokio::test]
async fn a_run_closure_does_not_run_for_a_call_before_execute_refuses() {
    let runs = Runs::new();
    let counted_runs = runs.clone();
    let tool = ToolDefinition::builder("spawner").run(move |_args: Value, _ctx| {
        // e.g. spawning the work, or opening a connection, before returning the future.
        counted_runs.hit();
        async move { Ok(json!("done")) }
    });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .before_execute(before_execute_fn(|_, _, _| -> Result<(), Refusal> {
            Err("maintenance window".into())
        }))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "spawner", json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::ExecutionDenied));
    assert_eq!(runs.count(), 0, "the tool's closure ran for a refused call");
}

// ---------------------------------------------------------------------------------------------
// 4. Cancellation is not watched while a guard's pending verdict is awaited: a cancelled call
//    waits forever for the guard instead of ending `cancelled`.

#[test]
fn cancelling_a_call_whose_permission_check_is_pending_ends_it() {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .permission(permission_fn(|_, _, _| {
            // An approval service that has not answered (yet).
            Verdict::pending(std::future::pending())
        }))
        .build();
    let token = CancellationToken::new();
    let context = ctx().with_cancellation(token.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let mut dispatch = pin!(dispatcher.dispatch(ToolCall::new("c", "e", json!({})), &context));
    let waker = std::task::Waker::noop();
    let mut cx = Context::from_waker(waker);
    assert!(
        dispatch.as_mut().poll(&mut cx).is_pending(),
        "the check is pending"
    );
    token.cancel();
    let polled = dispatch.as_mut().poll(&mut cx);
    let Poll::Ready(result) = polled else {
        panic!("the call was cancelled but still waits for its permission check");
    };
    let result: ToolResult = result.unwrap();
    assert_eq!(error_of(&result).code, ErrorCode::Cancelled);
}

// ---------------------------------------------------------------------------------------------
// 5. A tool error's custom code is not bounded (its message is, to 16 KiB).

#[tokio::test]
async fn a_tool_error_code_is_bounded_like_its_message() {
    let tool = ToolDefinition::builder("t").run_sync(|_, _| -> Result<Value, ToolError> {
        Err(ToolError::with_code("e".repeat(1 << 20), "failed"))
    });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    let result = run(&dispatcher, ToolCall::new("c", "t", json!({}))).await;
    let json = serde_json::to_string(&result).unwrap();
    assert!(
        json.len() < 64 * 1024,
        "the error result is {} bytes",
        json.len()
    );
}

// ---------------------------------------------------------------------------------------------
// 6. With GenAI content capture on (the CONTENT_TARGET at TRACE), the call's span serialises
//    the arguments before step 2 checks their depth and size: arguments nested past the limit,
//    which the dispatcher refuses on a small stack without a subscriber, overflow the stack.

/// Why a call whose arguments nest 100 000 deep is blocked, dispatched on a small stack.
fn deep_arguments_block_reason() -> Option<BlockReason> {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")])).build();
    on_small_stack(move || {
        let arguments = Value::Object([("a".to_owned(), nested(100_000))].into_iter().collect());
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(async {
                run(&dispatcher, ToolCall::new("c", "e", arguments))
                    .await
                    .block_reason()
            })
    })
}

#[test]
#[ignore = "run in a child process by deep_arguments_are_refused_with_content_capture_on"]
fn child_deep_arguments_with_content_capture() {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::SubscriberExt;
    let filter = Targets::new()
        .with_target("prism_tools", tracing::Level::INFO)
        .with_target(prism::semconv::CONTENT_TARGET, tracing::Level::TRACE);
    tracing::subscriber::set_global_default(tracing_subscriber::Registry::default().with(filter))
        .unwrap();
    assert_eq!(
        deep_arguments_block_reason(),
        Some(BlockReason::InvalidArguments)
    );
}

#[test]
fn deep_arguments_are_refused_with_content_capture_on() {
    passes_in_child("child_deep_arguments_with_content_capture");
}

/// The control for 6: without a subscriber the same call is refused on the same small stack.
#[test]
fn control_deep_arguments_are_refused_without_a_subscriber() {
    assert_eq!(
        deep_arguments_block_reason(),
        Some(BlockReason::InvalidArguments)
    );
}

/// A `tool_result` middleware's rewrite is held to the output bounds too: a value it nests past
/// them would otherwise reach events, rows and the effect store, which could not read it back.
#[tokio::test]
async fn what_result_middleware_makes_is_held_to_the_output_bounds() {
    let ledger = prism::dispatch::InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .middleware(prism::guard::result_middleware(|result| {
            let value = result.value_mut().take();
            *result.value_mut() = (0..200).fold(value, |inner, _| Value::Array(vec![inner]));
        }))
        .ledger(ledger.clone())
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({"a": 1}))).await;
    let error = error_of(&result);
    assert_eq!(error.code, ErrorCode::OutputTooLarge);
    assert!(
        error.message.contains("after tool_result middleware"),
        "{}",
        error.message
    );
    // Every row can be written out and read back.
    for row in ledger.records() {
        let text = serde_json::to_string(&row).unwrap();
        serde_json::from_str::<Value>(&text).expect("a row reads back");
    }
}
