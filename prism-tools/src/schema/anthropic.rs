//! Anthropic's strict tool use.
//!
//! Modelled on `transform_schema` in Anthropic's Python SDK (`lib/_parse/_transform.py`), which
//! the SDK applies before sending a strict schema: objects closed with `additionalProperties:
//! false`, `oneOf` sent as `anyOf`, `format` kept only for its list of string formats,
//! `minItems` kept only when 0 or 1, and every other keyword written into the description as
//! `{keyword: value, …}` so the model may still follow it. Two departures, both from Anthropic's
//! structured-outputs documentation: `const` is kept (the documentation lists it as supported,
//! and tagged enums need it), and schemars' Rust number formats are removed rather than
//! described (they name a Rust type, not a constraint a model can act on). Optional properties
//! stay optional: Anthropic's strict mode allows them. Recursive schemas are not supported by
//! Anthropic's strict mode; those fall back to non-strict.

use serde_json::Value;

use super::formats::{anthropic_strict_accepts, is_rust_number_format};
use super::strict::{StrictPolicy, Treatment};

/// Anthropic's strict mode.
pub(crate) struct AnthropicStrict;

impl StrictPolicy for AnthropicStrict {
    const REQUIRE_ALL: bool = false;

    fn treat(keyword: &str, value: &Value, types: &[&str]) -> Treatment {
        let on_string = types.contains(&"string");
        match keyword {
            "format" => match value.as_str() {
                Some(format) if anthropic_strict_accepts(format, on_string) => Treatment::Keep,
                Some(format) if is_rust_number_format(format) && !on_string => Treatment::Remove,
                _ => Treatment::Describe,
            },
            "minItems" if value == 0 || value == 1 => Treatment::Keep,
            "$schema" | "$id" | "$comment" | "$anchor" => Treatment::Remove,
            _ => Treatment::Describe,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn constraints_move_into_the_description() {
        let treat = |keyword: &str, value: Value, types: &[&str]| {
            AnthropicStrict::treat(keyword, &value, types)
        };
        assert_eq!(
            treat("minimum", json!(0), &["integer"]),
            Treatment::Describe
        );
        assert_eq!(
            treat("format", json!("uint32"), &["integer"]),
            Treatment::Remove
        );
        assert_eq!(treat("format", json!("uri"), &["string"]), Treatment::Keep);
        assert_eq!(
            treat("format", json!("regex"), &["string"]),
            Treatment::Describe
        );
        assert_eq!(treat("minItems", json!(1), &["array"]), Treatment::Keep);
        assert_eq!(treat("minItems", json!(2), &["array"]), Treatment::Describe);
        assert_eq!(treat("$schema", json!("x"), &[]), Treatment::Remove);
    }
}
