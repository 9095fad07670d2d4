use prism::tool;

#[derive(Debug)]
struct Overflow;

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> Result<i64, Overflow> {
    a.checked_add(b).ok_or(Overflow)
}

fn main() {
    let _ = add::definition();
}
