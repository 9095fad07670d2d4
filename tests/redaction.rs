//! Redaction: no known secret leaves the dispatcher in a result, an event, a ledger row or an
//! error message, while tools and guardrails still see the real values.

mod common;

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use common::*;
use prism::call::{BlockReason, ErrorCode, ErrorInfo, ToolOutcome};
use prism::dispatch::{DispatchBuilder, RecordStatus, SecretRedactor, ToolCallRecord};
use prism::guard::{
    GuardrailRule, RulePack, before_execute_fn, call_middleware, permission_fn, trust_fn,
    validator_fn,
};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolError, ToolRegistry, ToolResult};
use serde_json::{Value, json};

const SECRET: &str = "sk-live-51Hx9";
const OTHER: &str = "hunter2-pass";

/// Dispatches `call` with a redactor of both secrets and checks that neither appears in the
/// result, the events or the rows. Returns the result.
async fn dispatch_clean<S, T, P, V>(
    builder: DispatchBuilder<S, T, P, V>,
    call: ToolCall,
) -> (ToolResult, Watch) {
    let watch = Watch::new();
    let dispatcher = watch
        .attach(builder)
        .redactor(SecretRedactor::new([SECRET, OTHER]))
        .build();
    let result = match dispatcher.dispatch(call, &ctx()).await {
        Ok(result) => result,
        Err(tripwire) => tripwire.into_result(),
    };
    let text = format!(
        "{}\n{}",
        serde_json::to_string(&result).unwrap(),
        watch.json_text()
    );
    assert_free_of(&[SECRET, OTHER], &text);
    assert!(
        text.contains("[REDACTED]"),
        "the secret was there to redact: {text}"
    );
    (result, watch)
}

fn registry(tool: ToolDefinition) -> DispatchBuilder {
    Dispatcher::builder(ToolRegistry::from_iter([tool]))
}

#[test]
fn the_redactor_replaces_every_secret_everywhere_in_a_value() {
    let redactor = SecretRedactor::new([SECRET, OTHER, ""]);
    assert!(!redactor.is_empty());
    assert_eq!(
        redactor.redact_str(&format!("{SECRET}/{OTHER}/{SECRET}")),
        "[REDACTED]/[REDACTED]/[REDACTED]"
    );
    let value = json!({"k": [SECRET, {SECRET: format!("x{OTHER}x")}], "n": 5});
    assert_eq!(
        redactor.redact_value(&value).into_owned(),
        json!({"k": ["[REDACTED]", {"[REDACTED]": "x[REDACTED]x"}], "n": 5})
    );
    assert!(matches!(
        redactor.redact_value(&json!({"clean": [1, "a"]})),
        Cow::Borrowed(_)
    ));
    assert!(matches!(redactor.redact_str("clean"), Cow::Borrowed(_)));
    assert!(
        !format!("{redactor:?}").contains(SECRET),
        "Debug never prints secrets"
    );

    assert!(SecretRedactor::new([""]).is_empty());
    let overlapping = SecretRedactor::new(["abc", "abcdef"]);
    assert_eq!(
        overlapping.redact_str("abcdefg abc"),
        "[REDACTED]g [REDACTED]"
    );
}

#[tokio::test]
async fn tool_errors_are_redacted() {
    let tool = ToolDefinition::builder("t")
        .run_sync(|_, _| Err(format!("auth failed for key {SECRET}").into()));
    let (result, _) = dispatch_clean(registry(tool), ToolCall::new("c", "t", json!({}))).await;
    assert_eq!(error_of(&result).message, "auth failed for key [REDACTED]");
}

/// A host that names its secrets in two places (its own, and a library's) must not lose the
/// first ones to the second call.
#[tokio::test]
async fn a_second_redactor_adds_its_secrets_to_the_first() {
    let tool = ToolDefinition::builder("t")
        .run_sync(|_, _| Err(format!("{SECRET} and {OTHER} were refused").into()));
    let dispatcher = registry(tool)
        .redactor(SecretRedactor::new([SECRET]))
        .redactor(SecretRedactor::new([OTHER]))
        .build();
    let result = dispatcher
        .dispatch(ToolCall::new("c", "t", json!({})), &ctx())
        .await
        .unwrap();
    assert_eq!(
        error_of(&result).message,
        "[REDACTED] and [REDACTED] were refused"
    );
}

#[tokio::test]
async fn validator_messages_are_redacted() {
    let builder = registry(echo("t")).validate(validator_fn(|_, args| {
        Err(format!("bad password {}", args["pw"]).into())
    }));
    let (result, _) = dispatch_clean(builder, ToolCall::new("c", "t", json!({"pw": OTHER}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::ValidationFailed));
}

#[tokio::test]
async fn guard_refusals_with_their_own_codes_are_redacted() {
    let builder = registry(echo("t"))
        .trust(trust_fn(|_, _| Ok(())))
        .permission(permission_fn(|_, _, _| {
            Err(ErrorInfo::new(
                ErrorCode::parse("quota"),
                format!("key {SECRET} over quota"),
            )
            .into())
        }));
    let (result, _) = dispatch_clean(builder, ToolCall::new("c", "t", json!({}))).await;
    assert_eq!(error_of(&result).code, ErrorCode::parse("quota"));
    let builder = registry(echo("t")).before_execute(before_execute_fn(|_, _, _| {
        Err(format!("{OTHER} locked").into())
    }));
    dispatch_clean(builder, ToolCall::new("c", "t", json!({}))).await;
}

#[tokio::test]
async fn the_tool_sees_real_arguments_while_observers_see_redacted_ones() {
    let received = Arc::new(Mutex::new(Value::Null));
    let tool = {
        let received = Arc::clone(&received);
        ToolDefinition::builder("login").run_sync(move |args, _| {
            *received.lock().unwrap() = args.clone();
            Ok(json!({"session": "ok", "echo": args["password"].clone()}))
        })
    };
    let (result, watch) = dispatch_clean(
        registry(tool),
        ToolCall::new("c", "login", json!({"password": OTHER})),
    )
    .await;
    assert_eq!(*received.lock().unwrap(), json!({"password": OTHER}));
    assert_eq!(
        result.as_value(),
        Some(&json!({"session": "ok", "echo": "[REDACTED]"}))
    );
    let started = &watch.ledger.records()[0];
    assert_eq!(
        started.arguments.as_ref(),
        Some(&json!({"password": "[REDACTED]"}))
    );
}

#[tokio::test]
async fn progress_is_redacted() {
    let tool = ToolDefinition::builder("t").run_sync(|_, ctx| {
        ctx.progress_with_metadata(
            json!(format!("using {SECRET}")),
            Some(json!({"key": OTHER})),
        );
        Ok(Value::Null)
    });
    let (_, watch) = dispatch_clean(registry(tool), ToolCall::new("c", "t", json!({}))).await;
    assert_eq!(watch.statuses(), ["started", "started", "finished"]);
}

#[tokio::test]
async fn panic_payloads_are_redacted() {
    let tool = ToolDefinition::builder("t")
        .run_sync(|_, _| -> Result<Value, ToolError> { panic!("connecting with {SECRET}") });
    let (result, _) = dispatch_clean(registry(tool), ToolCall::new("c", "t", json!({}))).await;
    assert_eq!(error_of(&result).code, ErrorCode::ToolPanicked);
}

#[tokio::test]
async fn unparsable_argument_text_is_redacted() {
    let call = ToolCall::malformed("c", "t", format!("expected `,` near \"{SECRET}\""));
    let (result, _) = dispatch_clean(registry(echo("t")), call).await;
    assert_eq!(error_of(&result).code, ErrorCode::InvalidJsonArguments);
}

#[tokio::test]
async fn a_secret_used_as_a_tool_name_is_redacted_everywhere() {
    let (result, _) =
        dispatch_clean(registry(echo("t")), ToolCall::new("c", SECRET, json!({}))).await;
    assert_eq!(error_of(&result).message, "Unknown tool: [REDACTED]");

    let renaming =
        registry(echo("t")).middleware(call_middleware(|call| call.set_name(format!("x{OTHER}"))));
    dispatch_clean(renaming, ToolCall::new("c", "t", json!({}))).await;

    let guarded = registry(echo("t"))
        .guardrails(RulePack::new("p").rule(GuardrailRule::on_input("r", |_, _| true)));
    dispatch_clean(guarded, ToolCall::new("c", SECRET, json!({}))).await;
}

#[tokio::test]
async fn error_codes_of_tools_and_guards_are_redacted() {
    let tool = ToolDefinition::builder("t")
        .run_sync(|_, _| Err(ToolError::with_code(format!("{SECRET}-quota"), "failed")));
    let (result, _) = dispatch_clean(registry(tool), ToolCall::new("c", "t", json!({}))).await;
    assert_eq!(error_of(&result).code, ErrorCode::parse("[REDACTED]-quota"));

    let validating = registry(echo("t")).validate(validator_fn(|_, _| {
        Err(ErrorInfo::new(ErrorCode::parse(OTHER), "refused").into())
    }));
    let (result, _) = dispatch_clean(validating, ToolCall::new("c", "t", json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::ValidationFailed));
    assert_eq!(error_of(&result).code, ErrorCode::parse("[REDACTED]"));

    let permitting = registry(echo("t"))
        .trust(trust_fn(|_, _| Ok(())))
        .permission(permission_fn(|_, _, _| {
            Err(ErrorInfo::new(ErrorCode::parse(SECRET), "refused").into())
        }));
    dispatch_clean(permitting, ToolCall::new("c", "t", json!({}))).await;
}

#[test]
fn recorded_rows_have_their_error_codes_redacted() {
    let redactor = SecretRedactor::new([SECRET]);
    let error = ErrorInfo::new(ErrorCode::parse(SECRET), "failed");
    let mut row = ToolCallRecord::new("c".into(), "t".into(), RecordStatus::Error);
    row.outcome = Some(ToolOutcome::Error(error));
    let row = row.redacted(&redactor);
    let text = serde_json::to_string(&row).unwrap();
    assert_free_of(&[SECRET], &text);
}

/// A row's tool name is the name the call asked for, which the model chose: a recorded row that
/// is redacted (to export it, say) has its name redacted too, in the row and in its result.
#[test]
fn recorded_rows_have_their_tool_names_redacted() {
    let redactor = SecretRedactor::new([SECRET]);
    let name = format!("lookup_{SECRET}");
    let error = ErrorInfo::blocked(BlockReason::UnknownTool, "Unknown tool");
    let mut row = ToolCallRecord::new("c".into(), name.as_str().into(), RecordStatus::Blocked);
    row.outcome = Some(ToolOutcome::Blocked(error));
    let row = row.redacted(&redactor);
    let text = serde_json::to_string(&row).unwrap();
    assert_free_of(&[SECRET], &text);
    assert_eq!(&*row.tool_name, "lookup_[REDACTED]");
}

/// A media type is the tool's text like any other: a secret in it is taken out of the result,
/// the events and the rows.
#[tokio::test]
async fn media_types_are_redacted() {
    use prism::call::{ContentBlock, EmbeddedResource, ToolOutput};

    let tool = ToolDefinition::builder("render").run_output_sync(|_, _| {
        Ok(ToolOutput::new(json!({"ok": true})).with_content([
            ContentBlock::image_base64("AAAA", format!("image/png; key={SECRET}")),
            ContentBlock::Resource {
                resource: EmbeddedResource {
                    uri: "mem://report".into(),
                    media_type: Some(format!("text/{OTHER}")),
                    text: Some("report".into()),
                    blob: None,
                },
            },
        ]))
    });
    let (result, _) =
        dispatch_clean(registry(tool), ToolCall::new("c1", "render", json!({}))).await;
    assert_eq!(result.content().len(), 2);
}
