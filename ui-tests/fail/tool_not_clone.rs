//! A hand-written tool must be `Clone`: every call runs on its own clone.

use prism::{Tool, ToolExecutionContext};
use serde_json::Value;

struct Search {
    index: Vec<String>,
}

impl Tool for Search {
    const NAME: &'static str = "search";
    type Args = Value;
    type Output = usize;
    type Error = std::convert::Infallible;

    async fn call(self, _args: Value, _ctx: ToolExecutionContext) -> Result<usize, Self::Error> {
        Ok(self.index.len())
    }
}

fn main() {}
