use prism::tool;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Query {
    text: String,
}

/// Searches.
#[tool]
fn search(#[args] query: Query, limit: u32) -> Vec<String> {
    vec![query.text; limit as usize]
}

fn main() {
    let _ = search::definition();
}
