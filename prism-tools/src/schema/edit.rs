//! Small edits of a schema object shared by the dialect rules.

use serde_json::{Map, Value, json};

use super::lowering_error::LoweringError;
use super::walk::{Walk, is_annotation};

/// Renames `from` to `to`, keeping the keyword's place (models read keys in order).
pub(crate) fn rename_keyword(map: &mut Map<String, Value>, from: &str, to: &str) {
    if !map.contains_key(from) {
        return;
    }
    let entries = std::mem::take(map);
    *map = entries
        .into_iter()
        .map(|(keyword, value)| {
            if keyword == from {
                (to.to_owned(), value)
            } else {
                (keyword, value)
            }
        })
        .collect();
}

/// The JSON types `type` names (empty when absent); an error when `type` is neither a string
/// nor a list of strings.
pub(crate) fn type_names<'m>(
    map: &'m Map<String, Value>,
    pointer: &str,
) -> Result<Vec<&'m str>, LoweringError> {
    let invalid = || LoweringError::invalid(pointer, "type", "a type name or a list of them");
    match map.get("type") {
        None => Ok(Vec::new()),
        Some(Value::String(name)) => Ok(vec![name.as_str()]),
        Some(Value::Array(names)) => names
            .iter()
            .map(|name| name.as_str().ok_or_else(invalid))
            .collect(),
        Some(_) => Err(invalid()),
    }
}

/// The names in `required`; an error when it is not a list of strings.
pub(crate) fn required_names(
    map: &Map<String, Value>,
    pointer: &str,
) -> Result<Vec<String>, LoweringError> {
    let invalid = || LoweringError::invalid(pointer, "required", "a list of property names");
    match map.get("required") {
        None => Ok(Vec::new()),
        Some(Value::Array(names)) => names
            .iter()
            .map(|name| name.as_str().map(str::to_owned).ok_or_else(invalid))
            .collect(),
        Some(_) => Err(invalid()),
    }
}

/// Whether the node describes objects: `type` names `object`, or there is no `type` and it has
/// object keywords.
pub(crate) fn describes_objects(map: &Map<String, Value>, types: &[&str]) -> bool {
    types.contains(&"object")
        || (types.is_empty()
            && (map.contains_key("properties")
                || map.contains_key("additionalProperties")
                || map.contains_key("required")))
}

/// Whether the node describes arrays.
pub(crate) fn describes_arrays(map: &Map<String, Value>, types: &[&str]) -> bool {
    types.contains(&"array")
        || (types.is_empty() && (map.contains_key("items") || map.contains_key("prefixItems")))
}

/// Merges the entries of an `allOf` (taken out of `map`) into `map`, for dialects without
/// `allOf`: properties and `required` are united, equal keywords kept once, annotations of `map`
/// win. The outer error is a malformed `allOf`; the inner one says why the entries cannot be
/// merged (a reference or a union among them, or two entries that disagree).
pub(crate) fn merge_all_of(
    map: &mut Map<String, Value>,
    entries: Value,
    pointer: &str,
) -> Result<Result<(), String>, LoweringError> {
    let Value::Array(entries) = entries else {
        return Err(LoweringError::invalid(
            pointer,
            "allOf",
            "a list of schemas",
        ));
    };
    for entry in entries {
        let entry = match entry {
            Value::Object(entry) => entry,
            Value::Bool(true) => continue,
            _ => return Ok(Err("has an `allOf` entry that accepts no value".to_owned())),
        };
        if entry.contains_key("$ref") || entry.contains_key("anyOf") || entry.contains_key("oneOf")
        {
            return Ok(Err(
                "has an `allOf` of references or unions, which cannot be merged".to_owned(),
            ));
        }
        for (keyword, value) in entry {
            match (keyword.as_str(), map.get_mut(&keyword)) {
                (_, None) => {
                    map.insert(keyword, value);
                }
                (_, Some(own)) if *own == value => {}
                ("properties", Some(Value::Object(own))) => {
                    let Value::Object(more) = value else { continue };
                    for (name, schema) in more {
                        if own.get(&name).is_some_and(|existing| *existing != schema) {
                            return Ok(Err(format!(
                                "has `allOf` entries that disagree on property `{name}`"
                            )));
                        }
                        own.insert(name, schema);
                    }
                }
                ("required", Some(Value::Array(own))) => {
                    for name in value.as_array().into_iter().flatten() {
                        if !own.contains(name) {
                            own.push(name.clone());
                        }
                    }
                }
                (keyword, Some(_)) if is_annotation(keyword) => {}
                (keyword, Some(_)) => {
                    return Ok(Err(format!(
                        "has `allOf` entries that disagree on `{keyword}`"
                    )));
                }
            }
        }
    }
    Ok(Ok(()))
}

/// `pointer` as a phrase for messages: `the root` or `/properties/x`.
pub(crate) fn place(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the root"
    } else {
        pointer
    }
}

/// Exclusive bounds, for a dialect without them: on integers they become inclusive ones (the
/// next integer inside the bound), and beside an inclusive bound the tighter of the two is kept;
/// elsewhere they are removed. Every change is reported.
pub(super) fn exclusive_bounds(map: &mut Map<String, Value>, pointer: &str, walk: &mut Walk<'_>) {
    let integer = map.get("type").and_then(Value::as_str) == Some("integer");
    for (exclusive, inclusive, lower) in [
        ("exclusiveMinimum", "minimum", true),
        ("exclusiveMaximum", "maximum", false),
    ] {
        let Some(bound) = map.remove(exclusive) else {
            continue;
        };
        let Some(bound) = integer
            .then(|| first_integer_inside(&bound, lower))
            .flatten()
        else {
            walk.report.removed(pointer, exclusive);
            continue;
        };
        let own = map.get(inclusive).and_then(Value::as_f64);
        let tighter = own.is_none_or(|own| {
            let bound = bound as f64;
            if lower { bound > own } else { bound < own }
        });
        if tighter {
            map.insert(inclusive.to_owned(), json!(bound));
            walk.report
                .rewritten(pointer, exclusive, &format!("as `{inclusive}: {bound}`"));
        } else {
            walk.report.rewritten(
                pointer,
                exclusive,
                &format!("dropped: `{inclusive}` is at least as tight"),
            );
        }
    }
}

/// The first integer strictly above (`lower`) or below an exclusive `bound`, when it is one.
fn first_integer_inside(bound: &Value, lower: bool) -> Option<i64> {
    if let Some(bound) = bound.as_i64() {
        return bound.checked_add(if lower { 1 } else { -1 });
    }
    let bound = bound.as_f64()?;
    let inside = if lower {
        bound.floor() + 1.0
    } else {
        bound.ceil() - 1.0
    };
    // Within i64 (and exact there) or not an integer at all.
    (inside.abs() < 9.0e15).then_some(inside as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rename_keeps_the_place() {
        let mut map = json!({"a": 1, "oneOf": [], "z": 2})
            .as_object()
            .unwrap()
            .clone();
        rename_keyword(&mut map, "oneOf", "anyOf");
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "anyOf", "z"]);
    }

    #[test]
    fn malformed_type_and_required_are_errors() {
        let map = json!({"type": 3, "required": "x"})
            .as_object()
            .unwrap()
            .clone();
        assert!(type_names(&map, "/p").is_err());
        assert!(required_names(&map, "/p").is_err());
        let map = json!({"type": ["string", "null"], "required": ["a"]})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(type_names(&map, "").unwrap(), ["string", "null"]);
        assert_eq!(required_names(&map, "").unwrap(), ["a"]);
    }
}
