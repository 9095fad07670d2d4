//! A synchronous function with doc comments on the function and its parameters.

use prism::tool;
use serde_json::json;

/// Adds two integers.
///
/// Overflow wraps around.
#[tool]
fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a.wrapping_add(b)
}

fn main() {
    // The function stays callable as written.
    assert_eq!(add(2, 3), 5);

    let definition = add::definition();
    assert_eq!(definition.name(), "add");
    assert_eq!(definition.description(), Some("Adds two integers.\n\nOverflow wraps around."));
    assert_eq!(
        definition.parameters(),
        Some(&json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "int64", "description": "The first addend."},
                "b": {"type": "integer", "format": "int64", "description": "The second addend."}
            },
            "required": ["a", "b"],
            "additionalProperties": false
        }))
    );
    assert_eq!(definition.output_schema(), Some(&json!({"type": "integer", "format": "int64"})));
}
