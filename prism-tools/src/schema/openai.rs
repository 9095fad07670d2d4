//! OpenAI's strict mode (Structured Outputs), for Chat Completions and Responses alike.
//!
//! The rules follow OpenAI's "Supported schemas" guide: types, `enum`, `const`, `anyOf`,
//! `$ref`/`$defs` (recursion included); on strings `pattern` and a closed list of `format`s; on
//! numbers `minimum`, `maximum`, their exclusive forms and `multipleOf`; on arrays `minItems`
//! and `maxItems`; every object closed with every property required. Anything else is rejected
//! by the API, so it is removed and reported (`default`, `minLength`, `uniqueItems`, schemars'
//! Rust number formats, …). A `$ref` may not have keywords beside it (the API answers "$ref
//! cannot have keywords"), which the shared strict rewrite handles.

use serde_json::Value;

use super::formats::openai_strict_accepts;
use super::keywords::{Place, place_of};
use super::strict::{StrictPolicy, Treatment};

/// OpenAI's strict mode.
pub(crate) struct OpenAiStrict;

impl StrictPolicy for OpenAiStrict {
    const REQUIRE_ALL: bool = true;

    fn treat(keyword: &str, value: &Value, types: &[&str]) -> Treatment {
        let on_string = types.contains(&"string");
        match keyword {
            "pattern" => Treatment::Keep,
            "format" => match value.as_str() {
                Some(format) if openai_strict_accepts(format, on_string) => Treatment::Keep,
                _ => Treatment::Remove,
            },
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf"
            | "minItems" | "maxItems" => Treatment::Keep,
            _ => Treatment::Remove,
        }
    }
}

/// OpenAI's documented size limits for a strict schema: objects nested at most 10 deep, at most
/// 5,000 properties and 1,000 enum values in all. A schema over them is sent non-strict.
pub(crate) fn openai_limits(schema: &Value) -> Option<String> {
    let mut totals = Totals::default();
    totals.add(schema, 0);
    if totals.deepest > MAX_OBJECT_NESTING {
        Some(format!(
            "objects nest {} deep, more than the {MAX_OBJECT_NESTING} OpenAI's strict mode allows",
            totals.deepest
        ))
    } else if totals.properties > MAX_PROPERTIES {
        Some(format!(
            "the schema has {} properties, more than the {MAX_PROPERTIES} OpenAI's strict mode allows",
            totals.properties
        ))
    } else if totals.enum_values > MAX_ENUM_VALUES {
        Some(format!(
            "the schema has {} enum values, more than the {MAX_ENUM_VALUES} OpenAI's strict mode allows",
            totals.enum_values
        ))
    } else {
        None
    }
}

const MAX_OBJECT_NESTING: usize = 10;
const MAX_PROPERTIES: usize = 5_000;
const MAX_ENUM_VALUES: usize = 1_000;

#[derive(Default)]
struct Totals {
    deepest: usize,
    properties: usize,
    enum_values: usize,
}

impl Totals {
    /// Adds up `schema`, an object nested `objects` deep (definitions count where they are
    /// written, not where they are used; the input is already bounded in depth).
    fn add(&mut self, schema: &Value, objects: usize) {
        let Value::Object(map) = schema else { return };
        let objects = if let Some(Value::Object(properties)) = map.get("properties") {
            self.properties += properties.len();
            objects + 1
        } else {
            objects
        };
        self.deepest = self.deepest.max(objects);
        if let Some(Value::Array(values)) = map.get("enum") {
            self.enum_values += values.len();
        }
        for (keyword, value) in map {
            match (place_of(keyword), value) {
                (Place::Schema, _) | (Place::SchemaOrList, Value::Object(_)) => {
                    self.add(value, objects)
                }
                (Place::Map, Value::Object(entries)) => {
                    let nested = if matches!(keyword.as_str(), "$defs" | "definitions") {
                        0
                    } else {
                        objects
                    };
                    entries.values().for_each(|entry| self.add(entry, nested));
                }
                (Place::List | Place::SchemaOrList, Value::Array(items)) => {
                    items.iter().for_each(|item| self.add(item, objects));
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_the_supported_constraints_only() {
        let treat = |keyword: &str, value: Value, types: &[&str]| {
            OpenAiStrict::treat(keyword, &value, types)
        };
        assert_eq!(treat("minimum", json!(0), &["integer"]), Treatment::Keep);
        assert_eq!(
            treat("format", json!("uint32"), &["integer"]),
            Treatment::Remove
        );
        assert_eq!(
            treat("format", json!("email"), &["string"]),
            Treatment::Keep
        );
        assert_eq!(
            treat("format", json!("uri"), &["string"]),
            Treatment::Remove
        );
        assert_eq!(treat("default", json!(20), &["integer"]), Treatment::Remove);
        assert_eq!(treat("minLength", json!(1), &["string"]), Treatment::Remove);
        assert_eq!(treat("pattern", json!("^a"), &["string"]), Treatment::Keep);
    }

    #[test]
    fn documented_size_limits() {
        let mut nested = json!({"type": "string"});
        for _ in 0..11 {
            nested = json!({"type": "object", "properties": {"inner": nested}});
        }
        assert!(openai_limits(&nested).unwrap().contains("nest 11 deep"));
        let wide: serde_json::Map<String, Value> = (0..5001)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        assert!(
            openai_limits(&json!({"type": "object", "properties": wide}))
                .unwrap()
                .contains("5001 properties")
        );
        let values: Vec<Value> = (0..1001).map(|i| json!(format!("v{i}"))).collect();
        assert!(
            openai_limits(&json!({"type": "object", "properties": {"e": {"enum": values}}}))
                .unwrap()
                .contains("1001 enum values")
        );
        assert_eq!(
            openai_limits(&json!({"type": "object", "properties": {"a": {"type": "string"}}})),
            None
        );
    }
}
