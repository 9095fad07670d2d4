use prism::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

/// Picks a colour.
#[derive(Deserialize, JsonSchema, Tool)]
enum Colour {
    Red,
    Green,
}

/// Adds two integers.
#[derive(Deserialize, JsonSchema, Tool)]
struct Add {
    a: i64,
    b: i64,
}

fn main() {}
