use prism::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

/// Adds two integers.
#[derive(Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
struct Add {
    a: i64,
    b: i64,
}

fn main() {
    let _ = Add::definition();
}
