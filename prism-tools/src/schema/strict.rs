//! The strict-mode rewrite shared by OpenAI and Anthropic: closed objects, `anyOf` only, no
//! keywords beside `$ref`, and each remaining keyword kept, removed or written into the
//! description as the provider's [`StrictPolicy`] says.
//!
//! With [`StrictPolicy::REQUIRE_ALL`] (OpenAI), every property becomes required; one that was
//! optional becomes nullable, and is marked so that
//! [`LoweredSchema::restore_arguments`](super::LoweredSchema::restore_arguments) turns its `null`
//! back into "absent". What strict mode cannot express makes the walk stop with
//! [`Stop::NotStrict`], and the tool is lowered non-strict instead.

use serde_json::{Map, Value, json};

use super::edit::{
    describes_arrays, describes_objects, merge_all_of, place, rename_keyword, required_names,
    type_names,
};
use super::lowered::DowngradeAction;
use super::lowering_error::{LoweringError, LoweringErrorKind};
use super::nullable::{accepts_null, make_nullable};
use super::references::resolve_local;
use super::restore::mark_null_means_absent;
use super::walk::{NodeRules, Stop, Walk};

/// What a strict mode does with a keyword the rewrite has no rule of its own for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Treatment {
    Keep,
    Remove,
    Describe,
}

/// One provider's strict mode.
pub(crate) trait StrictPolicy {
    /// Whether every property must be required (optional ones become nullable).
    const REQUIRE_ALL: bool;
    /// The treatment of `keyword` (with `value`) in a schema describing `types`.
    fn treat(keyword: &str, value: &Value, types: &[&str]) -> Treatment;
}

/// The strict rewrite under policy `P`.
pub(crate) struct StrictRules<P>(std::marker::PhantomData<P>);

impl<P> Default for StrictRules<P> {
    fn default() -> Self {
        Self(std::marker::PhantomData)
    }
}

/// Keywords the rewrite handles itself, whatever the policy.
fn is_structural(keyword: &str) -> bool {
    matches!(
        keyword,
        "type"
            | "properties"
            | "required"
            | "additionalProperties"
            | "items"
            | "anyOf"
            | "$ref"
            | "$defs"
            | "definitions"
            | "enum"
            | "const"
            | "description"
            | "title"
    )
}

fn not_strict(pointer: &str, why: &str) -> Stop {
    Stop::NotStrict(format!("{} {why}", place(pointer)))
}

impl<P: StrictPolicy> NodeRules for StrictRules<P> {
    fn rewrite(
        &mut self,
        node: &mut Value,
        pointer: &str,
        walk: &mut Walk<'_>,
    ) -> Result<(), Stop> {
        // A boolean schema is judged by its parent: `additionalProperties: false` is what
        // strict mode wants, a `true` property is not.
        let Value::Object(map) = node else {
            return Ok(());
        };
        refuse_boolean_children(map, pointer)?;
        wrap_reference(map, pointer, walk)?;
        if map.contains_key("oneOf") {
            if map.contains_key("anyOf") {
                return Err(not_strict(pointer, "has both `anyOf` and `oneOf`"));
            }
            rename_keyword(map, "oneOf", "anyOf");
            walk.report.rewritten(
                pointer,
                "oneOf",
                "as `anyOf` (at least one branch, not exactly one)",
            );
        }
        if let Some(entries) = map.remove("allOf") {
            merge_all_of(map, entries, pointer)?.map_err(|why| not_strict(pointer, &why))?;
            walk.report
                .rewritten(pointer, "allOf", "merged into its schema");
        }
        let mut types: Vec<String> = type_names(map, pointer)?
            .into_iter()
            .map(str::to_owned)
            .collect();
        if types.is_empty()
            && ["enum", "const", "anyOf", "$ref"]
                .iter()
                .all(|keyword| !map.contains_key(*keyword))
        {
            // Strict mode wants a type on every schema; object and array keywords imply one.
            let implied = if describes_objects(map, &[]) {
                "object"
            } else if describes_arrays(map, &[]) {
                "array"
            } else {
                return Err(not_strict(pointer, "has no type, so it accepts any value"));
            };
            map.insert("type".to_owned(), json!(implied));
            walk.report.rewritten(
                pointer,
                "type",
                &format!("`{implied}` added, as its keywords imply"),
            );
            types.push(implied.to_owned());
        }
        let types: Vec<&str> = types.iter().map(String::as_str).collect();
        if describes_objects(map, &types) {
            close_object::<P>(map, pointer, walk)?;
        }
        if describes_arrays(map, &types) {
            if map.contains_key("prefixItems") || map.get("items").is_some_and(Value::is_array) {
                return Err(not_strict(
                    pointer,
                    "is a tuple (`prefixItems`), which strict mode cannot express",
                ));
            }
            if !map.contains_key("items") {
                return Err(not_strict(
                    pointer,
                    "is an array without `items`, so its items may be anything",
                ));
            }
        }
        apply_policy::<P>(map, pointer, &types, walk);
        Ok(())
    }
}

/// Strict mode needs a type on every subschema: a `true` one accepts any value, a `false` one
/// none (a tuple's `items: false` is refused as a tuple further on).
fn refuse_boolean_children(map: &Map<String, Value>, pointer: &str) -> Result<(), Stop> {
    let mut children: Vec<(String, &Value)> = Vec::new();
    for keyword in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(entries)) = map.get(keyword) {
            children.extend(
                entries
                    .iter()
                    .map(|(name, schema)| (format!("/{keyword}/{name}"), schema)),
            );
        }
    }
    if let Some(Value::Array(branches)) = map.get("anyOf").or_else(|| map.get("oneOf")) {
        children.extend(
            branches
                .iter()
                .enumerate()
                .map(|(index, schema)| (format!("/anyOf/{index}"), schema)),
        );
    }
    if !map.contains_key("prefixItems")
        && let Some(items) = map.get("items")
    {
        children.push(("/items".to_owned(), items));
    }
    for (at, child) in children {
        match child {
            Value::Bool(true) => {
                return Err(Stop::NotStrict(format!("{pointer}{at} accepts any value")));
            }
            Value::Bool(false) => {
                return Err(Stop::NotStrict(format!("{pointer}{at} accepts no value")));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A local `$ref` stands alone: keywords beside it go onto an `anyOf` wrapper around it.
fn wrap_reference(
    map: &mut Map<String, Value>,
    pointer: &str,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    let Some(reference) = map.get("$ref") else {
        return Ok(());
    };
    let Some(text) = reference.as_str() else {
        return Err(LoweringError::invalid(pointer, "$ref", "a string").into());
    };
    if !text.starts_with('#') {
        return Err(not_strict(pointer, "references another document"));
    }
    if resolve_local(walk.root, text).is_none() {
        return Err(LoweringError::new(
            pointer,
            LoweringErrorKind::UnresolvableReference {
                reference: text.to_owned(),
            },
        )
        .into());
    }
    let beside = map
        .keys()
        .any(|keyword| !matches!(keyword.as_str(), "$ref" | "$defs" | "definitions"));
    if beside {
        let reference = map.remove("$ref").unwrap_or_default();
        map.insert("anyOf".to_owned(), json!([{"$ref": reference}]));
        walk.report.rewritten(
            pointer,
            "$ref",
            "keywords beside it moved onto an `anyOf` wrapper",
        );
    }
    Ok(())
}

/// Closes an object schema and, under `REQUIRE_ALL`, makes every property required.
fn close_object<P: StrictPolicy>(
    map: &mut Map<String, Value>,
    pointer: &str,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    if map.contains_key("patternProperties") {
        return Err(not_strict(pointer, "has `patternProperties`, an open map"));
    }
    match map.get("additionalProperties") {
        None => {
            map.insert("additionalProperties".to_owned(), Value::Bool(false));
            walk.report
                .rewritten(pointer, "additionalProperties", "closed: `false` added");
        }
        Some(Value::Bool(false)) => {}
        Some(_) => {
            return Err(not_strict(
                pointer,
                "is a map (`additionalProperties` allows any key)",
            ));
        }
    }
    if map.get("unevaluatedProperties") == Some(&Value::Bool(false)) {
        map.remove("unevaluatedProperties");
        walk.report.rewritten(
            pointer,
            "unevaluatedProperties",
            "as `additionalProperties: false`",
        );
    }
    let required = required_names(map, pointer)?;
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(properties) = properties else {
        return Err(LoweringError::invalid(pointer, "properties", "a map of schemas").into());
    };
    if let Some(missing) = required.iter().find(|name| !properties.contains_key(*name)) {
        return Err(not_strict(
            pointer,
            &format!("requires `{missing}`, which it does not describe"),
        ));
    }
    if P::REQUIRE_ALL {
        for (name, schema) in properties.iter_mut() {
            if required.contains(name) {
                continue;
            }
            if !accepts_null(schema, walk.root) {
                *schema = make_nullable(std::mem::take(schema));
                mark_null_means_absent(schema);
            }
        }
        let all: Vec<Value> = properties.keys().map(|name| json!(name)).collect();
        map.insert("required".to_owned(), Value::Array(all));
    }
    Ok(())
}

/// Applies the policy to every keyword the rewrite has no rule of its own for.
fn apply_policy<P: StrictPolicy>(
    map: &mut Map<String, Value>,
    pointer: &str,
    types: &[&str],
    walk: &mut Walk<'_>,
) {
    let mut described = Vec::new();
    map.retain(|keyword, value| {
        if is_structural(keyword) || super::restore::is_marker(keyword) {
            return true;
        }
        match P::treat(keyword, value, types) {
            Treatment::Keep => true,
            Treatment::Remove => {
                walk.report.removed(pointer, keyword);
                false
            }
            Treatment::Describe => {
                walk.report
                    .add(pointer, keyword, DowngradeAction::MovedToDescription);
                described.push(format!("{keyword}: {value}"));
                false
            }
        }
    });
    if !described.is_empty() {
        let note = format!("{{{}}}", described.join(", "));
        let text = match map.get("description").and_then(Value::as_str) {
            Some(own) if !own.is_empty() => format!("{own}\n\n{note}"),
            _ => note,
        };
        map.insert("description".to_owned(), Value::String(text));
    }
}
