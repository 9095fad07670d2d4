use prism::tool;

#[doc = include_str!("macro_empty_included_description.md")]
#[tool]
fn lookup(key: String) -> String {
    key
}

fn main() {
    let _ = lookup::definition();
}
