use prism::{State, ToolExecutionContext, tool};

struct Counter;

/// Reads the run id.
#[tool]
fn run_id(ctx: &mut ToolExecutionContext) -> String {
    ctx.run_id().unwrap_or_default().to_owned()
}

/// Counts calls.
#[tool]
fn count(counter: &mut State<Counter>) -> u32 {
    let _ = counter;
    0
}

fn main() {}
