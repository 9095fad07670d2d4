//! Every supported return shape: a plain value, unit, `Result` with a `Display` error, a boxed
//! error, a `Result` alias, and `ToolError` itself.

use std::fmt;

use prism::{Dispatcher, ToolCall, ToolError, ToolExecutionContext, ToolRegistry, tool};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

#[derive(Debug)]
enum ParseFailure {
    Empty,
}

impl fmt::Display for ParseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the text is empty")
    }
}

#[derive(Serialize, JsonSchema)]
struct Length {
    chars: usize,
}

/// Counts the characters of a text.
#[tool]
fn length(text: String) -> Result<Length, ParseFailure> {
    if text.is_empty() {
        return Err(ParseFailure::Empty);
    }
    Ok(Length { chars: text.chars().count() })
}

/// Does nothing, successfully.
#[tool]
async fn noop() {}

/// Parses an integer.
#[tool]
fn parse(text: String) -> Result<i64, Box<dyn std::error::Error + Send + Sync>> {
    Ok(text.trim().parse::<i64>()?)
}

/// Reads a file's size.
#[tool]
fn size(path: String) -> std::io::Result<u64> {
    Ok(std::fs::metadata(path)?.len())
}

/// Always refuses, with a code of its own.
#[tool]
fn refuse() -> Result<(), ToolError> {
    Err(ToolError::with_code("rate_limited", "try again later"))
}

fn main() {
    let registry = ToolRegistry::from_iter([
        length::definition(),
        noop::definition(),
        parse::definition(),
        size::definition(),
        refuse::definition(),
    ]);
    assert!(noop::definition().output_schema().is_none());
    assert_eq!(length::definition().output_schema().unwrap()["required"], json!(["chars"]));

    let dispatcher = Dispatcher::builder(registry).build();
    let ctx = ToolExecutionContext::new();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let run = |name: &str, args: serde_json::Value| {
            dispatcher.dispatch(ToolCall::new("c", name, args), &ctx)
        };
        let ok = run("length", json!({"text": "héllo"})).await.unwrap();
        assert_eq!(ok.as_value(), Some(&json!({"chars": 5})));
        let err = run("length", json!({"text": ""})).await.unwrap();
        assert_eq!(err.error_info().unwrap().message, "the text is empty");
        let unit = run("noop", json!({})).await.unwrap();
        assert_eq!(unit.as_value(), Some(&json!(null)));
        let err = run("parse", json!({"text": "x"})).await.unwrap();
        assert_eq!(err.error_info().unwrap().message, "invalid digit found in string");
        let err = run("size", json!({"path": "/nonexistent/prism"})).await.unwrap();
        assert!(err.error_info().is_some());
        let err = run("refuse", json!({})).await.unwrap();
        assert_eq!(err.error_info().unwrap().code.as_str(), "rate_limited");
    });
}
