//! Tools and helpers shared by the search tests.

#![allow(dead_code)] // each test file uses its own subset

use prism::{ToolDefinition, ToolExecutionContext};
use serde_json::{Value, json};

pub fn tool(name: &str, description: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(description)
        .run_sync(|_, _| Ok(Value::Null))
}

pub fn names(tools: &[ToolDefinition]) -> Vec<&str> {
    tools.iter().map(ToolDefinition::name).collect()
}

pub fn catalog() -> Vec<ToolDefinition> {
    vec![
        tool("send_email", "Sends an email message to one or more recipients."),
        tool("read_inbox", "Lists the newest email messages in the inbox."),
        tool("get_weather", "Current weather conditions and forecast for a city."),
        tool("stock_quote", "Latest share price for a stock ticker."),
        tool("translate_text", "Translates text between languages."),
        ToolDefinition::builder("book_flight")
            .description("Books a seat on a plane.")
            .parameters(json!({"type": "object", "properties": {
                "destination": {"type": "string", "description": "Airport code of the arrival city."},
                "passengers": {"type": "array", "items": {"type": "object", "properties": {
                    "passport": {"type": "string", "description": "Passport number."}
                }}}
            }}))
            .run_sync(|_, _| Ok(Value::Null)),
    ]
}

pub async fn call_search(tool: &ToolDefinition, arguments: Value) -> Result<String, String> {
    let body = tool
        .handler()
        .prepare(&arguments, ToolExecutionContext::new())
        .map_err(|refused| refused.refusal().message.clone())?;
    let prism::definition::Prepared::Ready(body) = body else {
        return Err("search_tools prepares its body at once".to_owned());
    };
    match body.await.map(|output| output.value) {
        Ok(Value::String(text)) => Ok(text),
        Ok(other) => Err(format!("unexpected value {other}")),
        Err(error) => Err(error.message().to_owned()),
    }
}
