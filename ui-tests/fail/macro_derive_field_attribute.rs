use prism::{Tool, ToolExecutionContext};
use schemars::JsonSchema;
use serde::Deserialize;

/// Converts a temperature between units.
#[derive(Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
struct ConvertTemperature {
    /// Degrees Celsius.
    #[tool(read_only)]
    celsius: f64,
    #[tool]
    precise: bool,
}

impl ConvertTemperature {
    async fn run(self, _ctx: ToolExecutionContext) -> Result<f64, String> {
        Ok(if self.precise { self.celsius * 1.8 + 32.0 } else { self.celsius * 2.0 + 30.0 })
    }
}

fn main() {
    let _ = ConvertTemperature::definition();
}
