//! The server the official MCP conformance suite (`npx @modelcontextprotocol/conformance server`)
//! drives: its tools are Prism tools served through an `McpServer` (so every call passes the
//! dispatcher's pipeline), wrapped by a handler that adds the resources, prompts, completions
//! and logging level the suite's other scenarios read.
//!
//! ```sh
//! cargo run --example mcp_conformance_server --features mcp -- 127.0.0.1:8001
//! # in another shell:
//! npx @modelcontextprotocol/conformance@0.1.16 server --url http://127.0.0.1:8001/mcp --suite active
//! ```
//!
//! `.ci/mcp_conformance_server.sh` runs both suite versions against it with the expected failures of
//! `.ci/mcp-conformance/server-expected-failures.yaml`.

// The suite still exercises logging and sampling, which the 2026-07-28 revision deprecates.
#![allow(deprecated)]

use std::net::SocketAddr;

use prism::Dispatcher;
use prism::mcp::{HttpOptions, McpServer, serve_http};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelledNotificationParam, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

#[path = "support/conformance_tools.rs"]
mod conformance_tools;

use conformance_tools::PNG;

/// Tools from the `McpServer`; everything else answered here.
#[derive(Clone)]
struct Conformance {
    tools: McpServer,
}

/// Builds an rmcp result from its JSON wire form (the shapes the MCP schema defines).
/// rmcp drops `resultType` (the 2026-07-28 revision's) for handshake-era clients.
fn wire<T: serde::de::DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    value["resultType"] = json!("complete");
    serde_json::from_value(value)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))
}

impl ServerHandler for Conformance {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_logging()
            .enable_completions()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "prism-conformance",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.tools.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.tools.call_tool(request, context).await
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.tools.on_cancelled(notification, context).await;
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        wire(json!({"resources": [
            {"uri": "test://static-text", "name": "Static Text Resource",
             "description": "A static text resource for testing", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "Static Binary Resource",
             "description": "A static binary resource for testing", "mimeType": "image/png"}
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        wire(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "Dynamic Resource",
             "description": "A resource whose URI carries an id", "mimeType": "application/json"}
        ]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => json!({"uri": uri, "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}),
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) => json!({"uri": uri, "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()}),
                None => {
                    return Err(ErrorData::resource_not_found(
                        format!("Resource not found: {uri}"),
                        Some(json!({"uri": uri})),
                    ));
                }
            },
        };
        wire::<rmcp::model::ReadResourceResult>(json!({"contents": [contents]})).map(Into::into)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        wire(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A simple test prompt with no arguments"},
            {"name": "test_prompt_with_arguments", "description": "A test prompt that accepts arguments",
             "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": false}]},
            {"name": "test_prompt_with_embedded_resource", "description": "A test prompt that includes an embedded resource"},
            {"name": "test_prompt_with_image", "description": "A test prompt that includes an image"}
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let user = |content: Value| json!({"role": "user", "content": content});
        let text = |text: String| user(json!({"type": "text", "text": text}));
        let (description, messages) = match request.name.as_str() {
            "test_simple_prompt" => (
                "A simple test prompt",
                vec![text("This is a simple test prompt.".into())],
            ),
            "test_prompt_with_arguments" => {
                let arguments = request.arguments.unwrap_or_default();
                let arg = |name: &str| {
                    arguments
                        .get(name)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                let said = format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    arg("arg1"),
                    arg("arg2")
                );
                ("A prompt with arguments", vec![text(said)])
            }
            "test_prompt_with_embedded_resource" => (
                "A prompt with an embedded resource",
                vec![
                    text("Here is a resource:".into()),
                    user(
                        json!({"type": "resource", "resource": {"uri": "test://static-text",
                    "mimeType": "text/plain", "text": "Resource content for prompt"}}),
                    ),
                ],
            ),
            "test_prompt_with_image" => (
                "A prompt with an image",
                vec![
                    text("Here is an image:".into()),
                    user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
                ],
            ),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("Unknown prompt: {other}"),
                    None,
                ));
            }
        };
        wire::<rmcp::model::GetPromptResult>(
            json!({"description": description, "messages": messages}),
        )
        .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let values: Vec<String> = match request.argument.name.as_str() {
            "id" => vec!["1".into(), "2".into(), "3".into()],
            "name" => vec!["Alice".into(), "Bob".into(), "Charlie".into()],
            "style" => vec!["friendly".into(), "formal".into(), "casual".into()],
            _ => Vec::new(),
        };
        let prefix = request.argument.value.clone();
        let values: Vec<_> = values
            .into_iter()
            .filter(|value| value.starts_with(&prefix))
            .collect();
        wire(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }

    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bind: SocketAddr = std::env::args()
        .nth(1)
        .as_deref()
        .unwrap_or("127.0.0.1:8001")
        .parse()?;
    let tools = McpServer::builder(Dispatcher::builder(conformance_tools::tools()).build())
        .name("prism-conformance", env!("CARGO_PKG_VERSION"))
        .build()?;
    let mut options = HttpOptions::bind(bind);
    // The suite sends its scenarios in quick succession from one address.
    options.rate_limit = None;
    let mut running = serve_http(
        move || Conformance {
            tools: tools.for_session(),
        },
        options,
    )
    .await?;
    eprintln!("MCP conformance server at {}", running.url("/mcp"));
    running.wait().await;
    Ok(())
}
