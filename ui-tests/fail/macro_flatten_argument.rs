use prism::tool;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Paging {
    page: u32,
}

/// Lists items.
#[tool]
fn list(filter: String, #[serde(flatten)] paging: Paging) -> String {
    format!("{filter} {}", paging.page)
}

fn main() {
    let _ = list::definition();
}
