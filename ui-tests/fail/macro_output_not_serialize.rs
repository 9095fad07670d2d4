use prism::tool;

struct Sum(i64);

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> Sum {
    Sum(a + b)
}

fn main() {
    let _ = add::definition();
}
