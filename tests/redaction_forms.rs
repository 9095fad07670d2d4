//! Redaction of the messages the dispatcher writes: a secret is removed before any message is
//! cut to its bound, and in every form a message may write it (as a JSON pointer segment, inside
//! a JSON string, through Rust's `{:?}`), whether the model sent it as an argument key or value.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::*;
use prism::dispatch::SecretRedactor;
use prism::guard::ArgumentValidator;
use prism::{
    Dispatcher, Tool, ToolCall, ToolDefinition, ToolError, ToolExecutionContext, ToolRegistry,
    ToolResult,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Secrets holding every character that some message escapes: `/` and `~` (JSON pointers),
/// `"` and `\` (JSON and `{:?}`), a zero-width joiner and a combining accent (`{:?}`).
const SECRETS: [&str; 4] = [
    "Tk/ab~Zq9-secret-slash-tilde",
    "Pw\"quote\\back-secret-7731",
    "Zw\u{200D}joiner-secret-4410",
    "Ce\u{301}combining-secret-8832",
];

/// Every form of `secret` a message could hold: as is, as a JSON pointer segment, inside a JSON
/// string, through `{:?}`, and those escapes applied to the pointer form.
fn written_forms(secret: &str) -> Vec<String> {
    let pointer = secret.replace('~', "~0").replace('/', "~1");
    let json = |text: &str| {
        serde_json::to_string(text)
            .unwrap()
            .trim_matches('"')
            .to_owned()
    };
    let debug = |text: &str| {
        let quoted = format!("{text:?}");
        quoted[1..quoted.len() - 1].to_owned()
    };
    vec![
        secret.to_owned(),
        json(secret),
        debug(secret),
        json(&pointer),
        debug(&pointer),
        pointer,
    ]
}

/// Every string and key in `value`, one per line.
fn strings_of(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|item| strings_of(item, out)),
        Value::Object(map) => {
            for (key, item) in map {
                out.push_str(key);
                out.push('\n');
                strings_of(item, out);
            }
        }
        _ => {}
    }
}

/// Asserts that no secret, in any written form, nor any prefix of 8 bytes or more of one,
/// appears in the result, the events or the ledger rows.
fn assert_no_secret(secrets: &[&str], result: &ToolResult, watch: &Watch) {
    let mut text = String::new();
    strings_of(&serde_json::to_value(result).unwrap(), &mut text);
    strings_of(
        &serde_json::to_value(watch.events.events()).unwrap(),
        &mut text,
    );
    strings_of(
        &serde_json::to_value(watch.ledger.records()).unwrap(),
        &mut text,
    );
    for secret in secrets {
        for form in written_forms(secret) {
            for end in (8..=form.len()).filter(|&end| form.is_char_boundary(end)) {
                let prefix = &form[..end];
                assert!(
                    !text.contains(prefix),
                    "{prefix:?}, part of secret {secret:?}, leaked into:\n{text}"
                );
            }
        }
    }
}

/// Dispatches `arguments` to `tool`, checked by `validator`, with `secrets` known to the
/// redactor; asserts the call was refused and that no secret left in any form.
async fn refused(
    secrets: &[&str],
    tool: ToolDefinition,
    validator: Option<Arc<dyn ArgumentValidator>>,
    arguments: Value,
) -> ToolResult {
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([tool])).validate(validator))
        .redactor(SecretRedactor::new(secrets))
        .build();
    let call = ToolCall::new("c", "t", arguments);
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    assert!(result.block_reason().is_some(), "refused: {result:?}");
    assert_no_secret(secrets, &result, &watch);
    result
}

#[test]
fn the_redactor_finds_a_secret_in_every_form_a_message_writes() {
    let redactor = SecretRedactor::new(SECRETS);
    for secret in SECRETS {
        for form in written_forms(secret) {
            let text = format!("at /{form}: bad");
            assert_eq!(
                redactor.redact_str(&text),
                "at /[REDACTED]: bad",
                "{form:?}"
            );
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "only decoding these arguments matters")]
struct Typed {
    count: Option<u32>,
    mode: Option<Mode>,
    limits: Option<BTreeMap<String, u32>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
enum Mode {
    Fast,
}

/// A typed tool, so that its arguments are decoded by serde.
#[derive(Clone)]
struct TypedTool;

impl Tool for TypedTool {
    const NAME: &'static str = "t";
    type Args = Typed;
    type Output = Value;
    type Error = ToolError;

    async fn call(self, _: Typed, _: ToolExecutionContext) -> Result<Value, ToolError> {
        Ok(Value::Null)
    }
}

#[tokio::test]
async fn typed_decoding_messages_hold_no_secret_in_any_form() {
    let typed = || ToolDefinition::from_tool(TypedTool);
    for secret in SECRETS {
        // A value quoted with `{:?}`, an unknown variant, an unknown field, a map key in the path.
        for arguments in [
            json!({"count": secret}),
            json!({"mode": secret}),
            json!({secret: 1}),
            json!({"limits": {secret: "x"}}),
        ] {
            refused(&SECRETS, typed(), None, arguments).await;
        }
    }
}

#[cfg(feature = "json-schema")]
mod json_schema {
    use super::*;
    use prism::validation::{JsonSchemaEngine, SchemaValidator};

    fn checked(schema: Value) -> (ToolDefinition, Option<Arc<dyn ArgumentValidator>>) {
        let tool = ToolDefinition::builder("t")
            .parameters(schema)
            .run_sync(|_, _| Ok(Value::Null));
        let validator = SchemaValidator::new(JsonSchemaEngine::new());
        (tool, Some(Arc::new(validator)))
    }

    #[tokio::test]
    async fn a_secret_key_is_redacted_before_its_violation_is_cut() {
        // Three long keys, then the secret: a violation listing the keys reaches its bound in
        // the middle of the secret.
        let secret = "zz-secret-key-0123456789ab";
        let arguments = json!({
            "a".repeat(40): 1,
            "b".repeat(44): 2,
            "c".repeat(48): 3,
            secret: 4,
        });
        for schema in [
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({"type": "object", "unevaluatedProperties": false}),
            json!({"type": "object", "propertyNames": {"maxLength": 8}}),
        ] {
            let (tool, validator) = checked(schema);
            refused(&[secret], tool, validator, arguments.clone()).await;
        }
        // A long key ending in the secret: the message quoting it reaches its bound inside it.
        let long = format!("{}{secret}", "k".repeat(180));
        for schema in [
            json!({"type": "object", "additionalProperties": false}),
            json!({"type": "object", "propertyNames": {"pattern": "^[a-k]*$"}}),
        ] {
            let (tool, validator) = checked(schema);
            refused(&[secret], tool, validator, json!({long.clone(): 1})).await;
        }
    }

    #[tokio::test]
    async fn schema_violations_hold_no_secret_in_any_form() {
        let schemas = [
            // The key listed as unexpected.
            json!({"type": "object", "additionalProperties": false}),
            // The key JSON-escaped in the message.
            json!({"type": "object", "propertyNames": {"pattern": "^[a-z]*$"}}),
            // The key as a JSON pointer in the violation's path.
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        ];
        for secret in SECRETS {
            for schema in &schemas {
                let (tool, validator) = checked(schema.clone());
                refused(&SECRETS, tool, validator, json!({secret: "x"})).await;
            }
            // As a value, under a key that is a secret too.
            let (tool, validator) =
                checked(json!({"type": "object", "additionalProperties": {"enum": [1]}}));
            refused(&SECRETS, tool, validator, json!({secret: {"deep": secret}})).await;
            // Under a forbidden key's path.
            let (tool, validator) = checked(json!({"type": "object"}));
            refused(
                &SECRETS,
                tool,
                validator,
                json!({secret: {"__proto__": secret}}),
            )
            .await;
        }
    }
}

/// A tool's error message is cut to 16 KiB only after redaction: a secret that runs across the
/// cut leaves no part of itself behind.
#[tokio::test]
async fn a_long_tool_error_is_redacted_before_it_is_cut() {
    let secret = SECRETS[0];
    let message = format!("{}{secret} and more", "x".repeat(16 * 1024 - 10));
    let tool = ToolDefinition::builder("t")
        .parameters(json!({"type": "object"}))
        .run_sync(move |_, _| Err(ToolError::new(message.clone())));
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([tool])))
        .redactor(SecretRedactor::new([secret]))
        .build();
    let result = dispatcher
        .dispatch(
            ToolCall::new("c", "t", json!({})),
            &ToolExecutionContext::new(),
        )
        .await
        .unwrap();
    let message = &result.error_info().expect("the tool failed").message;
    assert!(
        message.ends_with("[REDACTED]… [cut]"),
        "{}",
        &message[message.len() - 40..]
    );
    assert!(message.len() <= 16 * 1024 + "… [cut]".len());
    assert_no_secret(&[secret], &result, &watch);
}
