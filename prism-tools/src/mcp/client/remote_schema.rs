//! A remote tool's schema, checked before the host takes it: bounded in size and depth, an
//! object at the root, and self-contained. The bridge never resolves a reference outside the
//! schema (nothing here fetches anything); a schema that has one is refused, so that no
//! validator downstream is ever tempted to.

use serde_json::{Map, Value};

use crate::redact::SecretRedactor;
use crate::schema::{Dialect, lower};

/// The deepest nesting of JSON accepted in a remote schema.
const MAX_DEPTH: usize = 64;

/// Keywords whose value is a reference to another schema.
const REFERENCE_KEYWORDS: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// Keywords that only describe (they change nothing a schema accepts): the endpoint's
/// credentials are taken out of their values.
const ANNOTATIONS: [&str; 5] = ["description", "title", "$comment", "default", "examples"];

/// Keywords whose value is a value the schema checks, never a schema.
const CHECKED_VALUES: [&str; 2] = ["const", "enum"];

/// Keywords whose value maps names (not keywords) to schemas.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// The input schema of a remote tool, as the host's definition carries it, or why it is refused:
/// the output schema's checks (see [`output_schema`]), then the MCP dialect's.
pub(crate) fn input_schema(
    schema: &Map<String, Value>,
    max_bytes: usize,
    credentials: Credentials<'_>,
) -> Result<Value, String> {
    let schema = output_schema(schema, max_bytes, credentials)?;
    // The MCP dialect checks the root (an object, or made one and reported) and that every local
    // reference resolves; what it returns is the schema the model will be shown.
    let lowered = lower(&schema, Dialect::Mcp).map_err(|error| error.to_string())?;
    Ok(lowered.schema().clone())
}

/// The output schema of a remote tool, or why it is refused: bounded, self-contained, and with
/// the endpoint's credentials taken out or refused (see [`scrubbed`]).
pub(crate) fn output_schema(
    schema: &Map<String, Value>,
    max_bytes: usize,
    credentials: Credentials<'_>,
) -> Result<Value, String> {
    let mut schema = Value::Object(schema.clone());
    bounded(&schema, max_bytes)?;
    scrubbed(&mut schema, credentials)?;
    Ok(schema)
}

/// The endpoint's credentials as [`scrubbed`] takes them.
#[derive(Clone, Copy)]
pub(crate) struct Credentials<'a> {
    /// All of them: taken out of what a schema only says.
    pub(crate) all: &'a SecretRedactor,
    /// The long ones: refused anywhere else.
    pub(crate) long: &'a SecretRedactor,
}

/// Takes the endpoint's credentials (`all`) out of what a schema (already bounded in depth)
/// only says, its descriptions, titles, comments, defaults and examples, which reach the model
/// as the tool's description does; refuses a schema that holds one of the `long` ones anywhere
/// else (a `const`, an `enum`, a `pattern`, a property's name), where taking it out would
/// change what the schema accepts.
fn scrubbed(schema: &mut Value, Credentials { all, long }: Credentials<'_>) -> Result<(), String> {
    if all.is_empty() {
        return Ok(());
    }
    scrub_annotations(schema, all);
    if matches!(long.redact_value(schema), std::borrow::Cow::Owned(_)) {
        return Err(
            "its schema holds one of the endpoint's credentials where it checks values (a \
             `const`, an `enum`, a `pattern`, a property's name)"
                .to_owned(),
        );
    }
    Ok(())
}

/// Scrubs the annotations of the schema `schema` and of the schemas inside it.
fn scrub_annotations(schema: &mut Value, scrubber: &SecretRedactor) {
    match schema {
        Value::Object(map) => {
            for (keyword, value) in map.iter_mut() {
                if ANNOTATIONS.contains(&keyword.as_str()) {
                    scrubber.redact_value_in_place(value);
                } else if CHECKED_VALUES.contains(&keyword.as_str()) {
                    // Left whole: a credential in it refuses the schema.
                } else if SCHEMA_MAPS.contains(&keyword.as_str())
                    && let Value::Object(schemas) = value
                {
                    schemas
                        .values_mut()
                        .for_each(|schema| scrub_annotations(schema, scrubber));
                } else {
                    scrub_annotations(value, scrubber);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| scrub_annotations(item, scrubber)),
        _ => {}
    }
}

/// Checks size, depth and references.
fn bounded(schema: &Value, max_bytes: usize) -> Result<(), String> {
    let bytes = serde_json::to_vec(schema).map_or(usize::MAX, |json| json.len());
    if bytes > max_bytes {
        return Err(format!(
            "its schema is {bytes} bytes of JSON, over the bound of {max_bytes}"
        ));
    }
    walk(schema, 0)
}

fn walk(value: &Value, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("its schema nests deeper than {MAX_DEPTH} levels"));
    }
    match value {
        Value::Object(map) => {
            for keyword in REFERENCE_KEYWORDS {
                if let Some(reference) = map.get(keyword).and_then(Value::as_str)
                    && !reference.starts_with('#')
                {
                    return Err(format!(
                        "its schema refers outside itself (`{keyword}: {reference}`), which is never fetched"
                    ));
                }
            }
            map.values().try_for_each(|child| walk(child, depth + 1))
        }
        Value::Array(items) => items.iter().try_for_each(|child| walk(child, depth + 1)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The input schema `schema` gives an endpoint with no credentials.
    fn unscrubbed(schema: &Map<String, Value>, max_bytes: usize) -> Result<Value, String> {
        let none = SecretRedactor::default();
        input_schema(
            schema,
            max_bytes,
            Credentials {
                all: &none,
                long: &none,
            },
        )
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("the tests pass objects"),
        }
    }

    #[test]
    fn a_remote_reference_is_refused_and_a_local_one_kept() {
        let remote = object(json!({
            "type": "object",
            "properties": {"a": {"$ref": "https://example.com/schema.json"}}
        }));
        let error = unscrubbed(&remote, 10_000).unwrap_err();
        assert!(error.contains("https://example.com/schema.json"), "{error}");

        let local = object(json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"type": "string"}}
        }));
        assert_eq!(
            unscrubbed(&local, 10_000).unwrap()["properties"]["a"]["$ref"],
            "#/$defs/a"
        );
    }

    #[test]
    fn size_and_depth_are_bounded() {
        let big = object(json!({"type": "object", "description": "x".repeat(200)}));
        assert!(
            unscrubbed(&big, 100)
                .unwrap_err()
                .contains("over the bound of 100")
        );

        let mut deep = json!({"type": "string"});
        for _ in 0..70 {
            deep = json!({"type": "array", "items": deep});
        }
        let deep = object(json!({"type": "object", "properties": {"a": deep}}));
        assert!(unscrubbed(&deep, 1_000_000).unwrap_err().contains("deeper"));
    }

    /// A `const` or an `enum` is a value the schema checks, not a schema: an object in one is
    /// never taken for a schema whose description could be scrubbed, which would change what
    /// the schema accepts; one holding a credential refuses the schema instead.
    #[test]
    fn a_value_the_schema_checks_is_never_scrubbed_as_a_schema() {
        let token = "sk-endpoint-7d2c9e4a1b8f";
        let scrubber = SecretRedactor::new([token]);
        for keyword in ["const", "enum"] {
            let value = json!({"description": token});
            let value = if keyword == "enum" {
                json!([value])
            } else {
                value
            };
            let schema = object(json!({
                "type": "object",
                "properties": {"a": {keyword: value}}
            }));
            let both = Credentials {
                all: &scrubber,
                long: &scrubber,
            };
            let refused = input_schema(&schema, 10_000, both);
            assert!(refused.is_err(), "{keyword}: {refused:?}");
        }
    }

    #[test]
    fn a_root_that_is_not_an_object_is_refused() {
        let string = object(json!({"type": "string"}));
        assert!(unscrubbed(&string, 10_000).is_err());
    }
}
