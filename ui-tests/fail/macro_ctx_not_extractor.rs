use prism::tool;

/// Greets the caller.
#[tool]
fn greet(#[ctx] caller: String) -> String {
    format!("Hello, {caller}")
}

fn main() {
    let _ = greet::definition();
}
