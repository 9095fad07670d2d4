//! The tools of the quickstart, shared by the examples that show them (`quickstart` runs them,
//! `schemas` prints what each provider is told about them).

use prism::{ToolError, ToolExecutionContext, ToolRegistry, tool};
use serde::Serialize;
use serde_json::{Value, json};

/// The one secret this host knows about. It must never appear in any output below.
pub const API_KEY: &str = "sk-live-7f3a9c2e41";

/// Adds two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> Result<i64, ToolError> {
    a.checked_add(b)
        .ok_or_else(|| ToolError::new("the sum overflows a 64-bit integer"))
}

#[derive(Serialize, schemars::JsonSchema)]
struct Counts {
    words: usize,
    characters: usize,
}

/// Counts the words and characters of a text.
#[tool(read_only)]
fn word_count(
    /// The text to count.
    text: String,
) -> Counts {
    Counts {
        words: text.split_whitespace().count(),
        characters: text.chars().count(),
    }
}

/// Indexes a batch of documents, reporting progress.
#[tool]
async fn index_documents(documents: Vec<String>, ctx: ToolExecutionContext) -> Value {
    let mut terms = 0;
    for (done, document) in documents.iter().enumerate() {
        terms += document.split_whitespace().count();
        ctx.progress(json!({"done": done + 1, "of": documents.len()}));
    }
    json!({"indexed": documents.len(), "terms": terms})
}

/// Fetches an invoice from the billing API.
#[tool(read_only, open_world)]
fn fetch_invoice(invoice_id: String) -> Result<Value, ToolError> {
    // A careless error message that embeds the credential it used.
    Err(ToolError::new(format!(
        "billing API refused invoice {invoice_id} for key {API_KEY}: 401 Unauthorized"
    )))
}

/// Parses an ISO-8601 date.
#[tool(read_only)]
fn parse_date(date: String) -> Value {
    // A careless parser: it panics on bad input, and the dispatcher catches the panic.
    let parts: Vec<u32> = date.split('-').map(|part| part.parse().unwrap()).collect();
    json!({"year": parts[0], "month": parts[1], "day": parts[2]})
}

/// Deletes a repository. Irreversible.
#[tool(destructive)]
fn delete_repository(name: String) -> Value {
    json!({"deleted": name})
}

pub fn tools() -> ToolRegistry {
    ToolRegistry::from_iter([
        add::definition(),
        word_count::definition(),
        index_documents::definition(),
        fetch_invoice::definition(),
        parse_date::definition(),
        delete_repository::definition(),
    ])
}
