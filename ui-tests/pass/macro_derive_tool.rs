//! `#[derive(Tool)]`: the struct's fields are the arguments and its `run` method the body, with
//! and without state.

use std::sync::Arc;

use prism::{Dispatcher, State, Tool, ToolCall, ToolExecutionContext, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Converts a temperature between units.
#[derive(Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(read_only)]
struct ConvertTemperature {
    /// Degrees Celsius.
    celsius: f64,
}

impl ConvertTemperature {
    async fn run(self, _ctx: ToolExecutionContext) -> Result<f64, String> {
        Ok(self.celsius * 9.0 / 5.0 + 32.0)
    }
}

struct Prices {
    euro_per_unit: f64,
}

/// Prices an order.
#[derive(Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(name = "price", state = Prices)]
struct PriceOrder {
    units: u32,
}

impl PriceOrder {
    async fn run(self, _ctx: ToolExecutionContext, prices: State<Prices>) -> Result<f64, String> {
        Ok(f64::from(self.units) * prices.euro_per_unit)
    }
}

fn main() {
    let convert = ConvertTemperature::definition();
    assert_eq!(convert.name(), "convert_temperature");
    assert_eq!(convert.annotations().read_only, Some(true));
    assert_eq!(convert.parameters().unwrap()["required"], json!(["celsius"]));

    let price = PriceOrder::definition(Arc::new(Prices { euro_per_unit: 2.5 }));
    assert_eq!(price.name(), "price");

    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([convert, price])).build();
    let ctx = ToolExecutionContext::new();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let call = ToolCall::new("c1", "convert_temperature", json!({"celsius": 100.0}));
        let result = dispatcher.dispatch(call, &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!(212.0)));
        let call = ToolCall::new("c2", "price", json!({"units": 4}));
        let result = dispatcher.dispatch(call, &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!(10.0)));
    });
}
