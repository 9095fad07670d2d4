use prism::tool;

/// Moves a file.
#[tool]
fn move_file(from: String, #[serde(rename = "from")] to: String) -> String {
    format!("{from} -> {to}")
}

fn main() {
    let _ = move_file::definition();
}
