//! The tools the MCP conformance suite calls, as ordinary Prism tools: they reach the client
//! (sampling, elicitation, logging) through `ServedRequest::current()`, and report progress
//! through their context like any other tool.

// The suite still exercises logging and sampling, which the 2026-07-28 revision deprecates.
#![allow(deprecated)]

use std::time::Duration;

use prism::call::{ContentBlock, ToolOutput};
use prism::mcp::ServedRequest;
use prism::{ToolDefinition, ToolError, ToolExecutionContext, ToolRegistry};
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, LoggingLevel, LoggingMessageNotificationParam,
    SamplingMessage,
};
use serde_json::{Value, json};

/// A 1x1 PNG.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";
/// An empty WAV file.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn fixed(name: &str, description: &str, output: fn() -> ToolOutput) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(description)
        .parameters(no_arguments())
        .run_output_sync(move |_, _| Ok(output()))
}

fn served() -> Result<ServedRequest, ToolError> {
    ServedRequest::current().ok_or_else(|| ToolError::new("not serving an MCP request"))
}

/// Asks the client to fill `schema`, and says what it answered.
async fn elicit(message: &str, schema: Value) -> Result<Value, ToolError> {
    let request = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message.into(),
        requested_schema: serde_json::from_value(schema)
            .map_err(|e| ToolError::new(e.to_string()))?,
    };
    let answer = served()?
        .peer()
        .create_elicitation(request)
        .await
        .map_err(|error| ToolError::new(format!("Elicitation error: {error}")))?;
    let answer = serde_json::to_value(answer).map_err(|e| ToolError::new(e.to_string()))?;
    Ok(json!(format!(
        "User response: action={}, content={}",
        answer["action"], answer["content"]
    )))
}

pub fn tools() -> ToolRegistry {
    let text = fixed("test_simple_text", "Returns simple text content", || {
        ToolOutput::new(json!("This is a simple text response for testing."))
    });
    let image = fixed("test_image_content", "Returns image content", || {
        ToolOutput::blocks([ContentBlock::image_base64(PNG, "image/png")])
    });
    let audio = fixed("test_audio_content", "Returns audio content", || {
        ToolOutput::blocks([ContentBlock::Audio {
            data: WAV.into(),
            media_type: "audio/wav".into(),
        }])
    });
    let embedded = fixed(
        "test_embedded_resource",
        "Returns embedded resource content",
        || {
            ToolOutput::blocks([ContentBlock::resource_text(
                "test://embedded-resource",
                Some("text/plain".into()),
                "This is an embedded resource content.",
            )])
        },
    );
    let mixed = fixed(
        "test_multiple_content_types",
        "Returns multiple content types",
        || {
            ToolOutput::blocks([
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image_base64(PNG, "image/png"),
                ContentBlock::resource_text(
                    "test://mixed-content-resource",
                    Some("application/json".into()),
                    r#"{"test":"data","value":123}"#,
                ),
            ])
        },
    );
    let error = ToolDefinition::builder("test_error_handling")
        .description("Always returns an error")
        .parameters(no_arguments())
        .run_sync(|_, _| Err("This tool intentionally returns an error for testing".into()));
    let logging = ToolDefinition::builder("test_tool_with_logging")
        .description("Sends logging notifications during execution")
        .parameters(no_arguments())
        .run(|_: Value, _ctx| async move {
            let peer = served()?.peer().clone();
            for message in [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ] {
                let mut log =
                    LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(message));
                log.logger = Some("prism-conformance".into());
                let _ = peer.notify_logging_message(log).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(json!("Logging test completed"))
        });
    let progress = ToolDefinition::builder("test_tool_with_progress")
        .description("Reports progress notifications")
        .parameters(no_arguments())
        .run(|_: Value, ctx: ToolExecutionContext| async move {
            for (done, message) in [(0, "Starting"), (50, "Halfway"), (100, "Complete")] {
                ctx.progress(json!({"progress": done, "total": 100, "message": message}));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(json!("Progress test completed"))
        });
    let sampling = ToolDefinition::builder("test_sampling")
        .description("Requests LLM sampling from client")
        .parameters(json!({
            "type": "object",
            "properties": {"prompt": {"type": "string", "description": "The prompt to send"}},
            "required": ["prompt"]
        }))
        .run(|args: Value, _ctx| async move {
            let prompt = args["prompt"].as_str().unwrap_or("Hello").to_owned();
            let request =
                CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100);
            #[allow(deprecated)]
            let answer = served()?.peer().create_message(request).await;
            let answer =
                answer.map_err(|error| ToolError::new(format!("Sampling error: {error}")))?;
            let answer = serde_json::to_value(answer.message).unwrap_or_default();
            let text = answer["content"]["text"]
                .as_str()
                .or(answer["content"][0]["text"].as_str());
            Ok(json!(format!(
                "LLM response: {}",
                text.unwrap_or("No text response")
            )))
        });
    let elicitation = ToolDefinition::builder("test_elicitation")
        .description("Requests user input from client")
        .parameters(json!({
            "type": "object",
            "properties": {"message": {"type": "string", "description": "The message to show"}},
            "required": ["message"]
        }))
        .run(|args: Value, _ctx| async move {
            let message = args["message"]
                .as_str()
                .unwrap_or("Please provide your information")
                .to_owned();
            elicit(
                &message,
                json!({
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    },
                    "required": ["username", "email"]
                }),
            )
            .await
        });
    let defaults = ToolDefinition::builder("test_elicitation_sep1034_defaults")
        .description("Tests elicitation with default values (SEP-1034)")
        .parameters(no_arguments())
        .run(|_: Value, _ctx| async move {
            elicit("Please provide values (all have defaults)", json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User's name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User's age", "default": 30},
                    "score": {"type": "number", "description": "User's score", "default": 95.5},
                    "status": {"type": "string", "description": "User's status",
                               "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "description": "Whether user is verified", "default": true}
                }
            }))
            .await
        });
    let enums = ToolDefinition::builder("test_elicitation_sep1330_enums")
        .description("Tests enum schema improvements (SEP-1330)")
        .parameters(no_arguments())
        .run(|_: Value, _ctx| async move {
            let choices = |prefix: &str, kind: &str| {
                json!((1..=3).map(|n| json!({"const": format!("value{n}"), "title": format!("{prefix} {kind}")})).collect::<Vec<_>>())
            };
            elicit("Test enum schema improvements", json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "oneOf": choices("Choice", "Option")},
                    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                                   "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "items": {"anyOf": choices("Choice", "Multi")}}
                }
            }))
            .await
        });
    let schema_2020_12 = ToolDefinition::builder("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features")
        .parameters(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"type": "object", "properties": {
                "street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": false
        }))
        .run_sync(|args: &Value, _| {
            Ok(json!(format!(
                "Hello, {}!",
                args["name"].as_str().unwrap_or("world")
            )))
        });
    let reconnection = ToolDefinition::builder("test_reconnection")
        .description("Tests SSE reconnection behavior")
        .parameters(no_arguments())
        .run(|_: Value, _ctx| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(json!("Reconnection test completed"))
        });
    ToolRegistry::from_iter([
        text,
        image,
        audio,
        embedded,
        mixed,
        logging,
        error,
        progress,
        sampling,
        elicitation,
        defaults,
        enums,
        schema_2020_12,
        reconnection,
    ])
}
