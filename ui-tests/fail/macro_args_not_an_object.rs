use prism::tool;

/// Counts to a number.
#[tool]
fn count(#[args] to: u32) -> u32 {
    to
}

/// Sums a list.
#[tool]
fn sum(#[args] numbers: Vec<i64>) -> i64 {
    numbers.iter().sum()
}

fn main() {
    let _ = count::definition();
    let _ = sum::definition();
}
