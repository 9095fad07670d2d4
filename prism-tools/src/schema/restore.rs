//! Exact decoding of strict calls: where a `null` means "left out".
//!
//! Strict mode makes every property required, so a model leaves an optional one out by sending
//! `null`. While lowering, each such property schema is marked; after the walk the marks are
//! taken out and their JSON pointers (into the lowered schema) kept in [`NullMeansAbsent`].
//! Restoring walks the arguments beside the lowered schema (through `properties`, `items`,
//! local `$ref` and the `anyOf` branch the value matches) and removes a `null` exactly where a
//! marked property holds it. A `null` the canonical schema allowed is never marked, so it stays.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::keywords::{Place, place_of, push_segment};
use super::references::resolve_local;
use crate::limits::Limits;

/// The key that marks a property schema during the walk. It cannot survive: every walk removes
/// keywords it does not know, and [`NullMeansAbsent::collect`] removes the marks it finds. Nor
/// can it come in: the walk drops it from the input schema.
const MARKER: &str = "\u{0}prism:null-means-absent";

/// How many references are followed in a row without moving into the arguments.
const MAX_HOPS: usize = 32;

/// How many schemas picking one `anyOf` branch may look at; past it no branch is picked and the
/// `null`s under that value stay. Unions of references can branch at every hop, so depth alone
/// does not bound the work (ten branches over sixteen hops is 10^16 paths).
const MAX_VISITS: usize = 4096;

/// Marks `schema` (a property schema made nullable for strict mode).
pub(crate) fn mark_null_means_absent(schema: &mut Value) {
    if let Value::Object(map) = schema {
        map.insert(MARKER.to_owned(), Value::Bool(true));
    }
}

/// Whether `keyword` is the mark.
pub(crate) fn is_marker(keyword: &str) -> bool {
    keyword == MARKER
}

/// The property schemas (JSON pointers into the lowered schema) whose `null` means "absent".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NullMeansAbsent(HashSet<String>);

impl NullMeansAbsent {
    /// Takes the marks out of `schema` and keeps where they were.
    pub(crate) fn collect(schema: &mut Value) -> Self {
        let mut found = HashSet::new();
        let mut pointer = String::new();
        collect_marks(schema, &mut pointer, &mut found);
        Self(found)
    }

    /// Whether any property was made nullable.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Removes, from `arguments`, the `null`s that mean "absent" under `schema`.
    pub(crate) fn restore(&self, schema: &Value, arguments: &mut Value) {
        if self.is_empty() {
            return;
        }
        self.restore_at(schema, schema, "", arguments, 0);
    }

    fn restore_at(
        &self,
        root: &Value,
        schema: &Value,
        pointer: &str,
        value: &mut Value,
        depth: usize,
    ) {
        if depth > Limits::MAX_DEPTH {
            return;
        }
        let Some((schema, at)) = follow(root, schema, pointer) else {
            return;
        };
        let mut pointer = at;
        let Value::Object(map) = schema else { return };
        if let Some(Value::Array(branches)) = map.get("anyOf")
            && let Some(index) = matching_branch(root, branches, value, depth)
        {
            let start = pointer.len();
            pointer.push_str("/anyOf/");
            pointer.push_str(&index.to_string());
            self.restore_at(root, &branches[index], &pointer, value, depth + 1);
            pointer.truncate(start);
        }
        match value {
            Value::Object(object) => {
                let Some(Value::Object(properties)) = map.get("properties") else {
                    return;
                };
                let start = pointer.len();
                pointer.push_str("/properties");
                let properties_at = pointer.len();
                object.retain(|name, item| {
                    let Some(property) = properties.get(name) else {
                        return true;
                    };
                    push_segment(&mut pointer, name);
                    let keep = if item.is_null() {
                        !self.0.contains(pointer.as_str())
                    } else {
                        self.restore_at(root, property, &pointer, item, depth + 1);
                        true
                    };
                    pointer.truncate(properties_at);
                    keep
                });
                pointer.truncate(start);
            }
            Value::Array(items) => {
                let Some(item_schema) = map.get("items").filter(|items| items.is_object()) else {
                    return;
                };
                let start = pointer.len();
                pointer.push_str("/items");
                for item in items {
                    self.restore_at(root, item_schema, &pointer, item, depth + 1);
                }
                pointer.truncate(start);
            }
            _ => {}
        }
    }
}

/// `schema` with its local references followed, and the pointer of what it ends on.
fn follow<'a>(root: &'a Value, schema: &'a Value, pointer: &str) -> Option<(&'a Value, String)> {
    let mut current = (schema, pointer.to_owned());
    for _ in 0..MAX_HOPS {
        match current.0.get("$ref").and_then(Value::as_str) {
            Some(reference) => current = resolve_local(root, reference)?,
            None => return Some(current),
        }
    }
    None
}

/// The first of `branches` that `value` has the shape of, looking at [`MAX_VISITS`] schemas at
/// most.
fn matching_branch(root: &Value, branches: &[Value], value: &Value, depth: usize) -> Option<usize> {
    let mut visits = MAX_VISITS;
    branches
        .iter()
        .position(|branch| matches_shape(root, branch, value, depth, &mut visits))
}

/// Whether `value` has the shape `schema` describes, by its type-level keywords (`type`,
/// `const`, `enum`, `required`, closed `properties`, `items`, `anyOf`): enough to pick the
/// `anyOf` branch a strict model's value was generated from. Answers `false` once `visits` is
/// spent.
fn matches_shape(
    root: &Value,
    schema: &Value,
    value: &Value,
    depth: usize,
    visits: &mut usize,
) -> bool {
    if depth > Limits::MAX_DEPTH {
        return false;
    }
    let Some(left) = visits.checked_sub(1) else {
        return false;
    };
    *visits = left;
    let Some((schema, _)) = follow(root, schema, "") else {
        return false;
    };
    let map = match schema {
        Value::Bool(accepts) => return *accepts,
        Value::Object(map) => map,
        _ => return false,
    };
    if let Some(types) = map.get("type")
        && !type_matches(types, value)
    {
        return false;
    }
    if map.get("const").is_some_and(|constant| constant != value) {
        return false;
    }
    if let Some(Value::Array(values)) = map.get("enum")
        && !values.contains(value)
    {
        return false;
    }
    if let Some(Value::Array(branches)) = map.get("anyOf")
        && !branches
            .iter()
            .any(|branch| matches_shape(root, branch, value, depth + 1, visits))
    {
        return false;
    }
    match value {
        Value::Object(object) => object_matches(root, map, object, depth, visits),
        Value::Array(items) => match map.get("items") {
            Some(item_schema) if item_schema.is_object() => items
                .iter()
                .all(|item| matches_shape(root, item_schema, item, depth + 1, visits)),
            _ => true,
        },
        _ => true,
    }
}

fn object_matches(
    root: &Value,
    map: &Map<String, Value>,
    object: &Map<String, Value>,
    depth: usize,
    visits: &mut usize,
) -> bool {
    let properties = map.get("properties").and_then(Value::as_object);
    let required_present = map
        .get("required")
        .and_then(Value::as_array)
        .is_none_or(|names| {
            names
                .iter()
                .all(|name| name.as_str().is_some_and(|name| object.contains_key(name)))
        });
    let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
    required_present
        && object.iter().all(|(name, item)| {
            match properties.and_then(|properties| properties.get(name)) {
                Some(property) => matches_shape(root, property, item, depth + 1, visits),
                None => !closed,
            }
        })
}

fn type_matches(types: &Value, value: &Value) -> bool {
    let one = |name: &Value| match name.as_str() {
        Some("null") => value.is_null(),
        Some("boolean") => value.is_boolean(),
        Some("string") => value.is_string(),
        Some("number") => value.is_number(),
        Some("integer") => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|n| n.fract() == 0.0)
        }
        Some("array") => value.is_array(),
        Some("object") => value.is_object(),
        _ => false,
    };
    match types {
        Value::Array(names) => names.iter().any(one),
        name => one(name),
    }
}

fn collect_marks(schema: &mut Value, pointer: &mut String, found: &mut HashSet<String>) {
    let Value::Object(map) = schema else { return };
    if map.remove(MARKER).is_some() {
        found.insert(pointer.clone());
    }
    for (keyword, value) in map.iter_mut() {
        let start = pointer.len();
        push_segment(pointer, keyword);
        match (place_of(keyword), value) {
            (Place::Schema | Place::SchemaOrList, value @ Value::Object(_)) => {
                collect_marks(value, pointer, found)
            }
            (Place::Map, Value::Object(entries)) => {
                for (key, entry) in entries.iter_mut() {
                    let at = pointer.len();
                    push_segment(pointer, key);
                    collect_marks(entry, pointer, found);
                    pointer.truncate(at);
                }
            }
            (Place::List | Place::SchemaOrList, Value::Array(items)) => {
                for (index, item) in items.iter_mut().enumerate() {
                    let at = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                    collect_marks(item, pointer, found);
                    pointer.truncate(at);
                }
            }
            _ => {}
        }
        pointer.truncate(start);
    }
}
