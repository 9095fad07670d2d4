//! Tools declared inside a function body, tools whose names and parameters collide with the
//! names the generated code uses, and public tools reached through a module path.

use prism::{ToolExecutionContext, tool};

mod tools {
    use prism::tool;

    /// Multiplies two numbers.
    #[tool]
    pub fn multiply(x: f64, y: f64) -> f64 {
        x * y
    }
}

/// Compiled out, and its tool with it.
#[tool]
#[cfg(any())]
fn compiled_out() {}

fn main() {
    /// Returns the context's run id; the function is called `ctx` and takes `args`.
    #[tool]
    fn ctx(args: String, self_: u8, state: ToolExecutionContext) -> String {
        format!("{args}{self_}{}", state.run_id().unwrap_or(""))
    }

    /// Counts its arguments.
    #[tool]
    fn args(ctx: Vec<String>, __state: u8) -> usize {
        ctx.len() + usize::from(__state)
    }

    assert_eq!(ctx::definition().name(), "ctx");
    assert_eq!(args::definition().name(), "args");
    assert_eq!(args(vec![String::new()], 1), 2);
    assert_eq!(tools::multiply::definition().name(), "multiply");
    use tools::multiply;
    assert_eq!(multiply(2.0, 3.0), 6.0);
    assert_eq!(multiply::definition().name(), "multiply");
}
