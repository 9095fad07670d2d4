use prism::tool;

/// Doubles a number.
#[tool]
const fn double(x: i64) -> i64 {
    x * 2
}

/// Reads raw memory.
#[tool]
unsafe fn peek(address: usize) -> usize {
    address
}

fn main() {
    let _ = (double::definition(), peek::definition());
}
