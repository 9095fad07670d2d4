use prism::tool;

/// Deletes a file.
#[tool(descripton = "Deletes a file.", readonly, retries = 3)]
fn delete(path: String) -> bool {
    path.is_empty()
}

fn main() {
    let _ = delete::definition();
}
