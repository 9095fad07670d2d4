use prism::tool;

#[tool(description = include_str!("macro_empty_description_key.md"))]
fn lookup(key: String) -> String {
    key
}

fn main() {
    let _ = lookup::definition();
}
