//! The client the official MCP conformance suite drives (`.ci/mcp_conformance_client.sh`).
//!
//! The suite starts a scenario's server, then runs this program with the server's URL as the
//! last argument and the scenario in `MCP_CONFORMANCE_SCENARIO` (the protocol version in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION`, the calls to make in `MCP_CONFORMANCE_CONTEXT`). It
//! connects with `prism::mcp::McpClient` over streamable HTTP, lists the tools and calls them
//! through a `Dispatcher`, as a host would; where the server asks for input
//! (`input_required`), it answers as a host that accepts every form with its defaults.
//!
//! ```text
//! cargo build --example mcp_conformance_client --features mcp
//! npx @modelcontextprotocol/conformance@0.2.0-alpha.12 client \
//!     --command target/debug/examples/mcp_conformance_client --scenario tools_call
//! ```

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use prism::mcp::{InputRequest, McpClient, ProtocolEra, RemoteOutcome, RemoteServer, codes};
use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};
use serde_json::{Map, Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: mcp_conformance_client <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("scenario `{scenario}`: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(scenario: &str, url: &str) -> Result<(), Box<dyn std::error::Error>> {
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let era = if version.as_str() >= "2026-07-28" {
        ProtocolEra::Revision2026
    } else {
        ProtocolEra::Handshake
    };
    let server = RemoteServer::http("conformance", url).call_timeout(Duration::from_secs(20));
    let client = McpClient::connect_with(server, era).await?;
    let tools = client.tools().await?;
    let skipped = tools.skipped().to_vec();
    for tool in &skipped {
        eprintln!("skipped `{}`: {}", tool.name, tool.reason);
    }
    let calls = match scenario {
        "tools_call"
        | "sse-retry"
        | "request-metadata"
        | "sep-2322-client-request-state"
        | "http-standard-headers"
        | "http-custom-headers"
        | "http-invalid-tool-headers" => planned_calls(tools.definitions()),
        "json-schema-2020-12-preservation" => schema_echo(tools.definitions()),
        _ => Vec::new(),
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(tools.into_definitions())).build();
    let ctx = ToolExecutionContext::new();
    for (index, (name, arguments)) in calls.into_iter().enumerate() {
        let id = format!("call-{index}");
        let call = ToolCall::new(id.as_str(), name.as_str(), arguments.clone());
        let result = dispatcher.dispatch(call, &ctx).await?;
        match result.error_info() {
            Some(error) if error.code.as_str() == codes::INPUT_REQUIRED => {
                answer(&client, &id, arguments, &ctx).await?;
            }
            Some(error) => eprintln!("`{name}`: {error}"),
            None => eprintln!("`{name}`: ok"),
        }
    }
    client.close().await;
    Ok(())
}

/// The calls the suite asked for in its context, or one call of every tool with its required
/// arguments filled in.
fn planned_calls(definitions: &[prism::ToolDefinition]) -> Vec<(String, Value)> {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    if let Some(calls) = context
        .get("toolCalls")
        .or_else(|| context.get("tool_calls"))
        .and_then(Value::as_array)
    {
        return calls
            .iter()
            .filter_map(|call| {
                let name = call.get("name")?.as_str()?.to_owned();
                let arguments = call.get("arguments").cloned().unwrap_or_else(|| json!({}));
                Some((name, arguments))
            })
            .collect();
    }
    definitions
        .iter()
        .map(|tool| {
            let arguments = tool
                .parameters()
                .map_or_else(|| json!({}), required_arguments);
            (tool.name().to_owned(), arguments)
        })
        .collect()
}

/// The suite's `json_schema_echo` tool, given the other tool's schema as the host holds it: the
/// suite checks that nothing of it was lost on the way into a definition.
fn schema_echo(definitions: &[prism::ToolDefinition]) -> Vec<(String, Value)> {
    let echo = "json_schema_echo";
    definitions
        .iter()
        .find(|tool| tool.name() != echo)
        .and_then(|focal| focal.parameters())
        .map(|schema| vec![(echo.to_owned(), json!({"schema": schema}))])
        .unwrap_or_default()
}

/// A value of the declared type for each required property.
fn required_arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("number") => json!(1.0),
            Some("integer") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}

/// Answers the server's `input_required` for call `id` until the call completes (at most ten
/// rounds): forms are accepted with their defaults, roots are none, a model's message is canned.
async fn answer(
    client: &McpClient,
    id: &str,
    arguments: Value,
    ctx: &ToolExecutionContext,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut request = client
        .take_input_required(id)
        .ok_or("an input_required without its request")?;
    for _ in 0..10 {
        let responses: BTreeMap<String, Value> = request
            .requests
            .iter()
            .map(|asked| (asked.key.clone(), response(asked)))
            .collect();
        match client
            .resume(&request, arguments.clone(), responses, ctx)
            .await
        {
            Ok(RemoteOutcome::InputRequired(next)) => request = next,
            Ok(_) => return Ok(()),
            Err(error) => return Err(error.message().into()),
        }
    }
    Err("input_required did not end within ten rounds".into())
}

fn response(asked: &InputRequest) -> Value {
    match asked.method.as_str() {
        "elicitation/create" => {
            let mut content = Map::new();
            if let Some(properties) = asked.params["requestedSchema"]["properties"].as_object() {
                for (name, property) in properties {
                    if let Some(default) = property.get("default") {
                        content.insert(name.clone(), default.clone());
                    }
                }
            }
            json!({"action": "accept", "content": content})
        }
        "roots/list" => json!({"roots": []}),
        _ => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "A canned answer."},
            "model": "none",
            "stopReason": "endTurn"
        }),
    }
}
