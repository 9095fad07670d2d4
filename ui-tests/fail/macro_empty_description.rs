use prism::tool;

/// Ignored: the key below wins.
#[tool(description = "   ")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let _ = add::definition();
}
