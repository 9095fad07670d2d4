use prism::{ToolExecutionContext, tool};

/// Says which run asked.
#[tool]
fn run_id(
    /// The context.
    #[serde(rename = "context")]
    ctx: ToolExecutionContext,
) -> String {
    ctx.run_id().unwrap_or_default().to_owned()
}

fn main() {
    let _ = run_id::definition();
}
