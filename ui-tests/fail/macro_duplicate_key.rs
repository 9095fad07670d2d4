use prism::tool;

/// Reads a file.
#[tool(read_only, name = "read", read_only = true)]
fn read(path: String) -> String {
    path
}

fn main() {
    let _ = read::definition();
}
