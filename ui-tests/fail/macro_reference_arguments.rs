use prism::tool;

/// Counts matching bytes.
#[tool]
fn count(name: &str, bytes: &[u8], pattern: &Vec<u8>) -> usize {
    name.len() + bytes.len() + pattern.len()
}

fn main() {
    let _ = count::definition();
}
