//! The schemas and matching arguments the validation benchmarks share.

use serde_json::{Map, Value, json};

/// Five properties of common kinds, and arguments that match.
pub fn small() -> (Value, Value) {
    let schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1, "maxLength": 100},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "unit": {"enum": ["celsius", "fahrenheit"]},
            "hourly": {"type": "boolean"},
            "fields": {"type": "array", "items": {"type": "string"}, "maxItems": 8}
        },
        "required": ["city", "days"],
        "additionalProperties": false
    });
    let value = json!({
        "city": "Paris", "days": 3, "unit": "celsius", "hourly": false,
        "fields": ["temperature", "wind"]
    });
    (schema, value)
}

/// Two hundred properties; every tenth is an object of five, one level down.
pub fn large() -> (Value, Value) {
    let mut properties = Map::new();
    let mut value = Map::new();
    for index in 0..200 {
        let name = format!("field_{index}");
        let (property, sample) = match index % 10 {
            0 => small(),
            1 | 2 => (json!({"type": "integer", "minimum": 0}), json!(index)),
            3 => (json!({"type": "number"}), json!(index as f64 / 3.0)),
            4 => (json!({"enum": ["a", "b", "c"]}), json!("b")),
            5 => (json!({"type": "boolean"}), json!(true)),
            6 => (
                json!({"type": "array", "items": {"type": "integer"}}),
                json!([1, 2, 3]),
            ),
            _ => (
                json!({"type": "string", "maxLength": 64}),
                json!(format!("value {index}")),
            ),
        };
        properties.insert(name.clone(), property);
        value.insert(name, sample);
    }
    let required: Vec<Value> = properties.keys().take(50).map(|k| json!(k)).collect();
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    });
    (schema, Value::Object(value))
}

/// The schema by name: `small` or `large`.
#[allow(
    dead_code,
    reason = "only the instruction-count driver picks a schema by name"
)]
pub fn named(size: &str) -> Option<(Value, Value)> {
    match size {
        "small" => Some(small()),
        "large" => Some(large()),
        _ => None,
    }
}
