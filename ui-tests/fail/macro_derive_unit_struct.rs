use prism::ToolExecutionContext;
use schemars::JsonSchema;
use serde::Deserialize;

/// Checks the service is alive.
#[derive(Deserialize, JsonSchema, prism::Tool)]
#[serde(deny_unknown_fields)]
struct Ping;

impl Ping {
    async fn run(self, _ctx: ToolExecutionContext) -> Result<String, String> {
        Ok("pong".to_owned())
    }
}

fn main() {}
