use prism::tool;

/// Does something with a very long name.
#[tool(name = "very_long_very_long_very_long_very_long_very_long_very_long_very_long_very_long_very_long_very_long_very_long_very_long_very_long")]
fn long() {}

fn main() {
    let _ = long::definition();
}
