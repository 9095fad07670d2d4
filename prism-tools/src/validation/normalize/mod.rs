//! An opt-in normaliser for the JSON Schema dialects found in real tool catalogues.
//!
//! Catalogues written for Python agents (and some hand-written ones) describe parameters with
//! type names from their host language, `dict`, `float`, `any`, `String`, `HashMap`, and mark
//! optional properties with `optional: true`. A JSON Schema engine rejects every one of those
//! schemas, so without help such a tool cannot be validated at all (the host gets a clear
//! `invalid_tool_schema` error instead). [`normalize_dialect`] rewrites the common forms into
//! standard JSON Schema once, when the tool is registered, and reports each rewrite so the host
//! can log or review them. It never runs unless called.
//!
//! The table of rewrites is on [`normalize_dialect`].

mod report;
mod type_names;

use serde_json::{Map, Value};

use self::type_names::{standard_name, standard_type};
use super::limits::ValidationLimits;
use crate::definition::ToolDefinition;
use crate::schema::keywords::{children, push_segment};

pub use self::report::{DialectReport, Rewrite};

/// Rewrites common non-standard schema dialects into JSON Schema, in place, and reports each
/// rewrite:
///
/// | found | becomes |
/// | --- | --- |
/// | `type`: `dict`, `dictionary`, `map`, `HashMap`, `Object` (any case) | `object` |
/// | `type`: `float`, `double`, `decimal`, `Number` | `number` |
/// | `type`: `int`, `long`, `Integer` | `integer` |
/// | `type`: `tuple`, `list`, `ArrayList`, `Array` | `array` |
/// | `type`: `bool`, `Boolean` | `boolean` |
/// | `type`: `str`, `String`, `char` | `string` |
/// | `type`: `none`, `Null` | `null` |
/// | `type`: `any` or `""` (or a list containing one) | no `type` constraint |
/// | a property's `optional: true` / `required: false` | dropped; the name leaves the parent's `required` |
/// | a property's `optional: false` / `required: true` | dropped; the name joins the parent's `required` |
/// | those flags as strings (`"true"`, `"False"`…) | as the booleans |
/// | `enum` of non-array values on an array schema | moved into `items` (each item is one of them), unless `items` already has an `enum` |
///
/// Type names not in the table are left alone, so the engine still reports them. Schemas
/// deeper than the hard depth ceiling are only rewritten down to it (the validator refuses them
/// anyway).
///
/// ```
/// use prism::validation::normalize_dialect;
/// use serde_json::json;
///
/// let mut schema = json!({
///     "type": "dict",
///     "properties": {
///         "city": {"type": "String"},
///         "days": {"type": "long", "optional": true},
///         "extra": {"type": "any"}
///     },
///     "required": ["city", "days"]
/// });
/// let report = normalize_dialect(&mut schema);
/// assert_eq!(schema, json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "extra": {}},
///     "required": ["city"]
/// }));
/// assert_eq!(report.rewrites.len(), 6);
/// assert_eq!(report.rewrites[0].to_string(), "/type: \"dict\" -> \"object\"");
/// ```
pub fn normalize_dialect(schema: &mut Value) -> DialectReport {
    let mut plan = Vec::new();
    let mut pointer = String::new();
    if let Value::Object(root) = &*schema {
        plan_schema(root, &mut pointer, 0, &mut plan);
    }
    let mut report = DialectReport::default();
    for edit in plan {
        let Some(Value::Object(parent)) = schema.pointer_mut(&edit.parent) else {
            continue;
        };
        let before = match &edit.after {
            Some(after) => parent.insert(edit.key.clone(), after.clone()),
            None => parent.remove(&edit.key),
        };
        let mut pointer = edit.parent;
        push_segment(&mut pointer, &edit.key);
        report.rewrites.push(Rewrite {
            pointer,
            before,
            after: edit.after,
        });
    }
    report
}

/// [`normalize_dialect`] applied to a tool's parameters: the tool with the rewritten schema, or
/// the same tool when nothing needed rewriting (or it has no schema).
pub fn normalize_tool(tool: &ToolDefinition) -> (ToolDefinition, DialectReport) {
    let Some(parameters) = tool.parameters() else {
        return (tool.clone(), DialectReport::default());
    };
    let mut schema = parameters.clone();
    let report = normalize_dialect(&mut schema);
    if report.is_empty() {
        (tool.clone(), report)
    } else {
        (tool.with_parameters(schema), report)
    }
}

/// A change to make: set (or, when `after` is `None`, remove) `key` in the object at `parent`.
struct Edit {
    parent: String,
    key: String,
    after: Option<Value>,
}

fn plan_schema(
    schema: &Map<String, Value>,
    pointer: &mut String,
    depth: usize,
    plan: &mut Vec<Edit>,
) {
    if depth > ValidationLimits::CEILINGS.max_schema_depth() {
        return;
    }
    if let Some(found) = schema.get("type")
        && let Some(after) = standard_type(found)
        && after.as_ref() != Some(found)
    {
        plan.push(Edit {
            parent: pointer.clone(),
            key: "type".into(),
            after,
        });
    }
    plan_items_enum(schema, pointer, plan);
    plan_optional_properties(schema, pointer, plan);
    for child in children(schema) {
        if let Value::Object(sub) = child.schema {
            let length = pointer.len();
            child.push_pointer(pointer);
            plan_schema(sub, pointer, depth + 1, plan);
            pointer.truncate(length);
        }
    }
}

/// Moves an array schema's `enum` into its `items` when no member is an array: no array equals
/// such a member, so as written the schema accepts nothing, and what the catalogue means is
/// "each item is one of these".
fn plan_items_enum(schema: &Map<String, Value>, pointer: &str, plan: &mut Vec<Edit>) {
    let Some(Value::Array(members)) = schema.get("enum") else {
        return;
    };
    let type_name = schema.get("type").and_then(Value::as_str);
    if type_name.and_then(standard_name).as_deref() != Some("array")
        || members.is_empty()
        || members.iter().any(Value::is_array)
    {
        return;
    }
    let members = Value::Array(members.clone());
    let (parent, key, after) = match schema.get("items") {
        None => (
            pointer.to_owned(),
            "items",
            Value::Object(Map::from_iter([("enum".to_owned(), members)])),
        ),
        Some(Value::Object(items)) if !items.contains_key("enum") => {
            let mut parent = pointer.to_owned();
            push_segment(&mut parent, "items");
            (parent, "enum", members)
        }
        _ => return,
    };
    plan.push(Edit {
        parent: pointer.to_owned(),
        key: "enum".into(),
        after: None,
    });
    plan.push(Edit {
        parent,
        key: key.into(),
        after: Some(after),
    });
}

/// Moves per-property `optional` / `required` flags (booleans, or `"true"` / `"false"`) into the parent's `required` list.
fn plan_optional_properties(schema: &Map<String, Value>, pointer: &str, plan: &mut Vec<Edit>) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    let existing = match schema.get("required") {
        Some(Value::Array(names)) => names.clone(),
        _ => Vec::new(),
    };
    let mut required = existing.clone();
    for (name, property) in properties {
        let Value::Object(property) = property else {
            continue;
        };
        for (flag, optional_when) in [("optional", true), ("required", false)] {
            let Some(value) = property.get(flag).and_then(flag_value) else {
                continue;
            };
            let mut parent = pointer.to_owned();
            push_segment(&mut parent, "properties");
            push_segment(&mut parent, name);
            plan.push(Edit {
                parent,
                key: flag.into(),
                after: None,
            });
            let entry = Value::String(name.clone());
            if value == optional_when {
                required.retain(|existing| existing != &entry);
            } else if !required.contains(&entry) {
                required.push(entry);
            }
        }
    }
    if required != existing {
        plan.push(Edit {
            parent: pointer.to_owned(),
            key: "required".into(),
            after: (!required.is_empty() || schema.contains_key("required"))
                .then_some(Value::Array(required)),
        });
    }
}

/// A flag's truth value: a boolean, or `"true"` / `"false"` in any case.
fn flag_value(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(value) => Some(*value),
        Value::String(text) => {
            let text = text.trim();
            if text.eq_ignore_ascii_case("true") {
                Some(true)
            } else if text.eq_ignore_ascii_case("false") {
                Some(false)
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn standard_schemas_are_left_alone() {
        let mut schema = json!({
            "type": ["string", "null"],
            "properties": {"a": {"type": "integer"}},
            "required": ["a"]
        });
        let before = schema.clone();
        assert!(normalize_dialect(&mut schema).is_empty());
        assert_eq!(schema, before);
    }

    #[test]
    fn lists_nested_schemas_and_required_flags() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "tags": {"type": "List", "items": {"type": "str"}},
                "mode": {"type": ["String", "none", "string"], "required": true},
                "free": {"type": ["int", "any"]}
            }
        });
        let report = normalize_dialect(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "mode": {"type": ["string", "null"]},
                    "free": {}
                },
                "required": ["mode"]
            })
        );
        let mut pointers: Vec<&str> = report.rewrites.iter().map(|r| r.pointer.as_str()).collect();
        pointers.sort_unstable();
        assert_eq!(
            pointers,
            [
                "/properties/free/type",
                "/properties/mode/required",
                "/properties/mode/type",
                "/properties/tags/items/type",
                "/properties/tags/type",
                "/required",
            ]
        );
    }

    #[test]
    fn char_is_a_string() {
        let mut schema =
            json!({"properties": {"c": {"type": "char"}, "d": {"type": ["Char", "null"]}}});
        normalize_dialect(&mut schema);
        assert_eq!(
            schema,
            json!({"properties": {"c": {"type": "string"}, "d": {"type": ["string", "null"]}}})
        );
    }

    #[test]
    fn an_enum_of_scalars_on_an_array_constrains_its_items() {
        let mut schema = json!({
            "properties": {
                "tags": {"type": "array", "items": {"type": "str"}, "enum": ["a", "b"]},
                "bare": {"type": "list", "enum": ["x"]},
                "pairs": {"type": "array", "enum": [["a", "b"], []]},
                "both": {"type": "array", "items": {"enum": ["a"]}, "enum": ["b"]}
            }
        });
        let report = normalize_dialect(&mut schema);
        assert_eq!(
            schema,
            json!({
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                    "bare": {"type": "array", "items": {"enum": ["x"]}},
                    "pairs": {"type": "array", "enum": [["a", "b"], []]},
                    "both": {"type": "array", "items": {"enum": ["a"]}, "enum": ["b"]}
                }
            })
        );
        let mut pointers: Vec<&str> = report.rewrites.iter().map(|r| r.pointer.as_str()).collect();
        pointers.sort_unstable();
        assert_eq!(
            pointers,
            [
                "/properties/bare/enum",
                "/properties/bare/items",
                "/properties/bare/type",
                "/properties/tags/enum",
                "/properties/tags/items/enum",
                "/properties/tags/items/type",
            ]
        );
    }

    #[test]
    fn string_flags_count_like_boolean_ones() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "optional": "true"},
                "b": {"type": "string", "required": " True "},
                "c": {"type": "string", "optional": "FALSE"},
                "d": {"type": "string", "optional": "maybe"}
            },
            "required": ["a"]
        });
        normalize_dialect(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "string"},
                    "c": {"type": "string"},
                    "d": {"type": "string", "optional": "maybe"}
                },
                "required": ["b", "c"]
            })
        );
    }

    #[test]
    fn unknown_type_names_stay_for_the_engine_to_report() {
        let mut schema = json!({"type": "Vec<u8>"});
        assert!(normalize_dialect(&mut schema).is_empty());
    }

    #[test]
    fn tools_get_a_new_definition_only_when_rewritten() {
        let tool = ToolDefinition::builder("t")
            .parameters(json!({"type": "dict"}))
            .run_sync(|_, _| Ok(Value::Null));
        let (normalized, report) = normalize_tool(&tool);
        assert_eq!(normalized.parameters(), Some(&json!({"type": "object"})));
        assert_eq!(report.rewrites.len(), 1);
        let (again, report) = normalize_tool(&normalized);
        assert!(report.is_empty() && again.ptr_eq(&normalized));
    }
}
