//! Making a schema accept `null` too, the way strict modes express an optional property.

use serde_json::{Map, Value, json};

use super::references::resolve_local;
use super::walk::is_annotation;

/// How many references [`accepts_null`] follows before it answers `false`.
const MAX_HOPS: usize = 16;

/// How many schemas one [`accepts_null`] question may look at before it answers `false`. Unions
/// of references can branch at every hop (ten branches over sixteen hops is 10^16 paths from a
/// schema of a few kilobytes), so the hops alone do not bound the work.
const MAX_VISITS: usize = 4096;

/// Whether every value `null` passes `schema` as far as its type-level keywords tell (`type`,
/// `enum`, `const`, `anyOf`/`oneOf`, `allOf`, local `$ref`). Answers `false` when unsure, so a
/// property is made nullable rather than left without a way to be left out.
pub(crate) fn accepts_null(schema: &Value, root: &Value) -> bool {
    let mut visits = MAX_VISITS;
    accepts_null_within(schema, root, MAX_HOPS, &mut visits)
}

fn accepts_null_within(schema: &Value, root: &Value, hops: usize, visits: &mut usize) -> bool {
    let Some(left) = visits.checked_sub(1) else {
        return false;
    };
    *visits = left;
    let map = match schema {
        Value::Bool(accepts) => return *accepts,
        Value::Object(map) => map,
        _ => return false,
    };
    let type_ok = match map.get("type") {
        None => true,
        Some(Value::String(name)) => name == "null",
        Some(Value::Array(names)) => names.iter().any(|name| name == "null"),
        Some(_) => false,
    };
    let enum_ok = map.get("enum").is_none_or(|values| {
        values
            .as_array()
            .is_some_and(|values| values.contains(&Value::Null))
    });
    let const_ok = map.get("const").is_none_or(Value::is_null);
    if !(type_ok && enum_ok && const_ok) {
        return false;
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(branches) = map.get(keyword) else {
            continue;
        };
        let Some(branches) = branches.as_array() else {
            return false;
        };
        if !branches
            .iter()
            .any(|branch| accepts_null_within(branch, root, hops, visits))
        {
            return false;
        }
    }
    if let Some(entries) = map.get("allOf") {
        let Some(entries) = entries.as_array() else {
            return false;
        };
        if !entries
            .iter()
            .all(|entry| accepts_null_within(entry, root, hops, visits))
        {
            return false;
        }
    }
    map.get("$ref").is_none_or(|reference| {
        hops > 0
            && reference
                .as_str()
                .and_then(|reference| resolve_local(root, reference))
                .is_some_and(|(target, _)| accepts_null_within(target, root, hops - 1, visits))
    })
}

/// `schema` widened to accept `null`: a `null` added to a plain `type`, or, for a reference, an
/// enum, a constant or a union, the schema wrapped as `anyOf: [schema, {type: null}]` with its
/// description and title kept outside, where the model reads them.
pub(crate) fn make_nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let plain = ["enum", "const", "$ref", "anyOf"]
        .iter()
        .all(|keyword| !map.contains_key(*keyword));
    match map.get_mut("type") {
        Some(Value::String(name)) if plain => {
            let name = std::mem::take(name);
            map.insert("type".to_owned(), json!([name, "null"]));
            return Value::Object(map);
        }
        Some(Value::Array(names)) if plain => {
            names.push(json!("null"));
            return Value::Object(map);
        }
        _ => {}
    }
    let (outer, inner): (Map<String, Value>, Map<String, Value>) = map
        .into_iter()
        .partition(|(keyword, _)| is_annotation(keyword));
    let mut outer = outer;
    if inner.len() == 1
        && let Some(Value::Array(branches)) = inner.get("anyOf")
    {
        let mut branches = branches.clone();
        branches.push(json!({"type": "null"}));
        outer.insert("anyOf".to_owned(), Value::Array(branches));
    } else {
        outer.insert(
            "anyOf".to_owned(),
            json!([Value::Object(inner), {"type": "null"}]),
        );
    }
    Value::Object(outer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_acceptance_needs_every_type_level_keyword_to_agree() {
        let root =
            json!({"$defs": {"Maybe": {"type": ["integer", "null"]}, "Int": {"type": "integer"}}});
        let accepts = |schema: Value| accepts_null(&schema, &root);
        assert!(accepts(json!({"type": ["string", "null"]})));
        assert!(!accepts(json!({"type": ["string", "null"], "enum": ["a"]})));
        assert!(accepts(json!({"enum": ["a", null]})));
        assert!(accepts(
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        ));
        assert!(!accepts(json!({"anyOf": [{"type": "string"}]})));
        assert!(accepts(json!({"$ref": "#/$defs/Maybe"})));
        assert!(!accepts(json!({"$ref": "#/$defs/Int"})));
        assert!(!accepts(json!({"$ref": "#/$defs/Missing"})));
        assert!(!accepts(json!({"const": 1})));
        assert!(!accepts(json!({"type": "integer"})));
    }

    #[test]
    fn unions_of_references_branching_at_every_hop_are_answered_quickly() {
        // Ten branches per level over sixteen levels: 10^16 paths, none ending in `null`.
        let mut defs = Map::new();
        for level in 0..16 {
            let next = json!({"$ref": format!("#/$defs/D{}", level + 1)});
            defs.insert(format!("D{level}"), json!({"anyOf": vec![next; 10]}));
        }
        defs.insert("D16".to_owned(), json!({"type": "integer"}));
        let root = json!({"$defs": defs});
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(accepts_null(&json!({"$ref": "#/$defs/D0"}), &root));
        });
        let answer = receiver.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(answer, Ok(false));
    }

    #[test]
    fn nullable_forms() {
        assert_eq!(
            make_nullable(json!({"type": "integer", "minimum": 0})),
            json!({"type": ["integer", "null"], "minimum": 0})
        );
        assert_eq!(
            make_nullable(json!({"type": ["string", "integer"]})),
            json!({"type": ["string", "integer", "null"]})
        );
        assert_eq!(
            make_nullable(json!({"type": "string", "enum": ["a"], "description": "d"})),
            json!({"description": "d", "anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]})
        );
        assert_eq!(
            make_nullable(json!({"anyOf": [{"$ref": "#/$defs/A"}], "description": "d"})),
            json!({"description": "d", "anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]})
        );
        assert_eq!(
            make_nullable(json!({"$ref": "#/$defs/A"})),
            json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]})
        );
    }
}
