//! `#[serde(...)]` and `#[schemars(...)]` on parameters, raw identifiers, `Option`, defaults,
//! and users' own `JsonSchema` types (enums and nested structs).

use prism::tool;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
struct Place {
    city: String,
    country: Option<String>,
}

fn default_days() -> u8 {
    3
}

/// Forecasts the weather.
#[tool]
fn forecast(
    /// Where.
    place: Place,
    /// Temperature unit; Celsius when absent.
    unit: Option<Unit>,
    #[serde(rename = "type")] r#kind: String,
    #[serde(default = "default_days")] days: u8,
    #[serde(default)] verbose: bool,
    #[schemars(length(max = 8))] r#ref: String,
) -> String {
    let unit = match unit {
        Some(Unit::Fahrenheit) => "F",
        Some(Unit::Celsius) | None => "C",
    };
    let (kind, reference) = (r#kind, r#ref);
    format!("{} {unit} {kind} {days} {verbose} {reference} {:?}", place.city, place.country)
}

fn main() {
    let definition = forecast::definition();
    let schema = definition.parameters().unwrap();
    assert_eq!(schema["required"], json!(["place", "type", "ref"]));
    assert_eq!(schema["properties"]["unit"]["description"], "Temperature unit; Celsius when absent.");
    assert_eq!(schema["properties"]["days"]["default"], 3);
    assert_eq!(schema["properties"]["ref"]["maxLength"], 8);
    assert!(schema["$defs"]["Unit"].is_object());
    assert!(schema["$defs"]["Place"].is_object());
    assert!(schema.get("title").is_none());
    assert_eq!(schema["additionalProperties"], false);
    let text = forecast(Place { city: "Oslo".into(), country: None }, None, "daily".into(), 2, true, "r".into());
    assert_eq!(text, "Oslo C daily 2 true r None");
}
