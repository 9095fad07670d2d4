//! Descriptions from `#[doc = include_str!(...)]` and `description = include_str!(...)`, and
//! `crate = ...` for a renamed dependency.

extern crate prism as tools_facade;

use tools_facade::tool;

#[doc = include_str!("macro_include_str.md")]
#[tool(crate = tools_facade)]
fn lookup(
    #[doc = include_str!("macro_include_str.md")]
    key: String,
) -> String {
    key
}

#[tool(crate = tools_facade, description = include_str!("macro_include_str.md"))]
fn find(key: String) -> String {
    key
}

fn main() {
    assert_eq!(find::definition().description(), Some("Looks a key up in the table."));
    let definition = lookup::definition();
    assert_eq!(definition.description(), Some("Looks a key up in the table."));
    assert_eq!(
        definition.parameters().unwrap()["properties"]["key"]["description"],
        "Looks a key up in the table."
    );
}
