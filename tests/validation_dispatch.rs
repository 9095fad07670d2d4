//! JSON Schema validation through the dispatcher: bad arguments never reach a tool, the model
//! hears about every violation, and the host hears about broken schemas before any call.

#![cfg(feature = "json-schema")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use prism::call::{BlockReason, ErrorCode};
use prism::dispatch::{RegisterError, SecretRedactor};
use prism::guard::{permission_fn, trust_fn};
use prism::registry::MissingParameterSchema;
use prism::validation::{
    JsonSchemaEngine, MissingSchema, SchemaErrorKind, SchemaValidator, normalize_tool,
};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A tool that counts how often its body runs.
fn forecast(runs: &Arc<AtomicUsize>) -> ToolDefinition {
    let runs = Arc::clone(runs);
    ToolDefinition::builder("forecast")
        .parameters(json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "unit": {"enum": ["celsius", "fahrenheit"]}
            },
            "required": ["city", "days"],
            "additionalProperties": false
        }))
        .run_sync(move |_, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(json!("sunny"))
        })
}

fn schema_validator() -> SchemaValidator<JsonSchemaEngine> {
    SchemaValidator::new(JsonSchemaEngine::new())
}

#[test]
fn bad_arguments_never_reach_the_body_and_every_violation_is_named() {
    let runs = Arc::new(AtomicUsize::new(0));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([forecast(&runs)]))
        .validate(schema_validator())
        .redactor(SecretRedactor::new(["sk-live-123"]))
        .try_build()
        .unwrap();
    let ctx = ToolExecutionContext::new();
    runtime().block_on(async {
        let bad = json!({"days": 30, "unit": "kelvin", "sk-live-123": true});
        let result = dispatcher
            .dispatch(ToolCall::new("c1", "forecast", bad), &ctx)
            .await
            .unwrap();
        assert_eq!(result.block_reason(), Some(BlockReason::ValidationFailed));
        let error = result.error_info().unwrap();
        assert_eq!(error.code, ErrorCode::ValidationFailed);
        let message = &error.message;
        assert!(
            message.starts_with("Invalid arguments for tool forecast: 4 schema violations"),
            "{message}"
        );
        for expected in ["at /days:", "at /unit:", "at the root:", "\"city\""] {
            assert!(
                message.contains(expected),
                "{expected} missing from {message}"
            );
        }
        // The unexpected key names a secret: the dispatcher redacts it like any other error.
        assert!(
            !message.contains("sk-live-123") && message.contains("[REDACTED]"),
            "{message}"
        );
        assert_eq!(runs.load(Ordering::SeqCst), 0);

        let good = json!({"city": "Paris", "days": 3});
        let result = dispatcher
            .dispatch(ToolCall::new("c2", "forecast", good), &ctx)
            .await
            .unwrap();
        assert_eq!(result.as_value(), Some(&json!("sunny")));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn forbidden_keys_are_refused_before_the_body() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = ToolDefinition::builder("store")
        .parameters(json!({"type": "object"}))
        .run_sync({
            let runs = Arc::clone(&runs);
            move |_, _| {
                runs.fetch_add(1, Ordering::SeqCst);
                Ok(Value::Null)
            }
        });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .validate(schema_validator())
        .build();
    let result = runtime()
        .block_on(dispatcher.dispatch(
            ToolCall::new(
                "c1",
                "store",
                json!({"doc": {"__proto__": {"admin": true}}}),
            ),
            &ToolExecutionContext::new(),
        ))
        .unwrap();
    let error = result.error_info().unwrap();
    assert_eq!(error.code, ErrorCode::ValidationFailed);
    assert!(
        error.message.contains("\"__proto__\" is not accepted"),
        "{}",
        error.message
    );
    assert!(error.message.contains("/doc"), "{}", error.message);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

fn tool_with(name: &str, schema: Value) -> ToolDefinition {
    ToolDefinition::builder(name)
        .parameters(schema)
        .run_sync(|_, _| Ok(Value::Null))
}

#[test]
fn broken_schemas_fail_the_build_with_tool_and_pointer() {
    let registry = ToolRegistry::from_iter([
        tool_with("fine", json!({"type": "object"})),
        tool_with("typo", json!({"properties": {"n": {"type": "int"}}})),
        tool_with("remote", json!({"$ref": "https://example.com/schema.json"})),
    ]);
    let error = Dispatcher::builder(registry)
        .validate(schema_validator())
        .try_build()
        .unwrap_err();
    let found: Vec<(&str, SchemaErrorKind, &str)> = error
        .invalid_schemas
        .iter()
        .map(|e| (e.tool.as_str(), e.error.kind, e.error.pointer.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("typo", SchemaErrorKind::Invalid, "/properties/n/type"),
            ("remote", SchemaErrorKind::RemoteRef, "/$ref"),
        ]
    );
    let text = error.to_string();
    assert!(
        text.contains("tool typo: invalid at /properties/n/type"),
        "{text}"
    );
}

#[test]
fn every_bad_keyword_of_a_schema_is_reported_with_its_pointer_and_a_hint() {
    let registry = ToolRegistry::from_iter([tool_with(
        "lookup",
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "int"},
                "ratio": {"type": ["float", "null"]},
                "when": {"type": "datetime"},
                "flag": {"type": "boolean", "required": true},
                "both": {"type": ["int", "datetime"]}
            }
        }),
    )]);
    let error = Dispatcher::builder(registry)
        .validate(schema_validator())
        .try_build()
        .unwrap_err();
    assert_eq!(error.invalid_schemas.len(), 1);
    let text = error.to_string();
    for expected in [
        "/properties/id/type: \"int\" is not a JSON Schema type (normalize_tool rewrites it to \"integer\")",
        "/properties/ratio/type: [\"float\",\"null\"] is not a JSON Schema type (normalize_tool rewrites it to [\"number\",\"null\"])",
        "/properties/when/type: \"datetime\" is not a JSON Schema type (the types are array, boolean,",
        "/properties/flag/required: true is not of type \"array\" (normalize_tool moves it into the parent's \"required\" list)",
        "/properties/both/type: [\"int\",\"datetime\"] is not a JSON Schema type (the types are",
    ] {
        assert!(text.contains(expected), "{expected}\nnot in\n{text}");
    }
    assert!(!text.contains("anyOf"), "{text}");
}

#[test]
fn build_secure_names_tools_without_a_schema_and_with_a_broken_one() {
    let registry = ToolRegistry::from_iter([
        ToolDefinition::builder("bare").run_sync(|_, _| Ok(Value::Null)),
        tool_with("loop", json!({"$ref": "#"})),
    ]);
    let error = Dispatcher::builder(registry)
        .trust(trust_fn(|_, _| Ok(())))
        .permission(permission_fn(|_, _, _| Ok(())))
        .validate(schema_validator().missing_schema(MissingSchema::Reject))
        .build_secure()
        .unwrap_err();
    assert_eq!(
        error.missing_schemas,
        [MissingParameterSchema("bare".into())]
    );
    assert_eq!(error.invalid_schemas.len(), 1);
    assert_eq!(error.invalid_schemas[0].tool, "loop");
    assert_eq!(
        error.invalid_schemas[0].error.kind,
        SchemaErrorKind::RefCycle
    );
}

#[test]
fn tools_registered_later_are_checked_at_registration_and_at_dispatch() {
    let registry = ToolRegistry::new();
    let dispatcher = Dispatcher::builder(registry.clone())
        .validate(schema_validator())
        .try_build()
        .unwrap();
    let broken = || tool_with("later", json!({"type": "object", "required": "city"}));
    match dispatcher.register(broken()) {
        Err(RegisterError::InvalidSchema(error)) => {
            assert_eq!(
                (error.tool.as_str(), error.error.pointer.as_str()),
                ("later", "/required")
            );
        }
        other => panic!("expected an invalid schema, got {other:?}"),
    }
    assert!(!registry.contains("later"));

    // Registered behind the dispatcher's back, the tool is refused at each call with the host's
    // error code, distinct from the model's `validation_failed`.
    registry.register(broken()).unwrap();
    let result = runtime()
        .block_on(dispatcher.dispatch(
            ToolCall::new("c1", "later", json!({"city": "Paris"})),
            &ToolExecutionContext::new(),
        ))
        .unwrap();
    let error = result.error_info().unwrap();
    assert_eq!(error.code, ErrorCode::InvalidToolSchema);
    assert_eq!(error.reason, Some(BlockReason::ValidationFailed));
    assert!(error.message.contains("at /required"), "{}", error.message);
}

#[test]
fn a_python_style_catalogue_works_once_normalised() {
    let catalogue = tool_with(
        "book_flight",
        json!({
            "type": "dict",
            "properties": {
                "origin": {"type": "String"},
                "passengers": {"type": "long"},
                "budget": {"type": "float", "optional": true},
                "preferences": {"type": "HashMap"},
                "extras": {"type": "any"}
            },
            "required": ["origin", "passengers", "budget"]
        }),
    );
    let error = Dispatcher::builder(ToolRegistry::from_iter([catalogue.clone()]))
        .validate(schema_validator())
        .try_build()
        .unwrap_err();
    assert_eq!(
        error.invalid_schemas[0].error.kind,
        SchemaErrorKind::Invalid
    );

    let (normalised, report) = normalize_tool(&catalogue);
    assert_eq!(report.rewrites.len(), 8, "{report}");
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([normalised]))
        .validate(schema_validator())
        .try_build()
        .unwrap();
    let ctx = ToolExecutionContext::new();
    runtime().block_on(async {
        let ok = json!({"origin": "CDG", "passengers": 2, "preferences": {}, "extras": [1]});
        let result = dispatcher
            .dispatch(ToolCall::new("c1", "book_flight", ok), &ctx)
            .await
            .unwrap();
        assert!(result.as_value().is_some(), "{result:?}");
        let bad = json!({"origin": "CDG", "passengers": 2.5});
        let result = dispatcher
            .dispatch(ToolCall::new("c2", "book_flight", bad), &ctx)
            .await
            .unwrap();
        assert_eq!(
            result.error_info().unwrap().code,
            ErrorCode::ValidationFailed
        );
    });
}
