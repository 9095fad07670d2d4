use prism::{ToolExecutionContext, tool};

/// Says which run asked.
#[tool]
fn run_id(first: ToolExecutionContext, second: &ToolExecutionContext) -> String {
    format!("{:?} {:?}", first.run_id(), second.run_id())
}

fn main() {
    let _ = run_id::definition();
}
