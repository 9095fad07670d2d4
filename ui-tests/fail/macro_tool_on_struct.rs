use prism::tool;

/// Adds two integers.
#[tool(read_only)]
struct Add {
    a: i64,
    b: i64,
}

fn main() {
    let _ = Add { a: 1, b: 2 };
}
