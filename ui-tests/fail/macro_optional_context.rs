use prism::{State, ToolExecutionContext, tool};

struct Counter;

/// Reads the run id.
#[tool]
fn run_id(ctx: Option<ToolExecutionContext>) -> String {
    ctx.and_then(|ctx| ctx.run_id().map(str::to_owned)).unwrap_or_default()
}

/// Counts calls.
#[tool]
fn count(counter: Option<State<Counter>>) -> u32 {
    let _ = counter;
    0
}

fn main() {}
