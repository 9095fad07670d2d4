use prism::tool;

/// Echoes a value.
#[tool]
fn echo<T: serde::Serialize>(value: T) -> T {
    value
}

fn main() {
    let _ = echo::definition();
}
