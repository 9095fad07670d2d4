//! `#[args]`: one struct is the whole argument object.

use prism::{ToolExecutionContext, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// What to search for.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Search {
    /// Words to look for.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
}

/// Searches the index.
#[tool(read_only)]
async fn search(#[args] search: Search, ctx: ToolExecutionContext) -> Vec<String> {
    let _ = ctx;
    vec![search.query; search.limit.unwrap_or(1) as usize]
}

fn main() {
    let definition = search::definition();
    let schema = definition.parameters().unwrap();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(schema["properties"]["query"]["description"], "Words to look for.");
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema.get("title").is_none());
}
