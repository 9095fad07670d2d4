use prism::tool;

/// Does something with a name of two-byte characters.
#[tool(name = "éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé")]
fn long() {}

fn main() {
    let _ = long::definition();
}
