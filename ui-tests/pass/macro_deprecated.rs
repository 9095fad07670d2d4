#![deny(warnings)]
use prism::tool;

/// Adds two integers.
#[deprecated(note = "use add2")]
#[tool]
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    #[allow(deprecated)]
    let _ = add::definition();
}
