//! Gemini `parameters`: the `Schema` message, a subset of OpenAPI 3.0.
//!
//! The keyword list is the `Schema` message of the Gemini API (as documented for
//! `FunctionDeclaration.parameters` and in Google's SDKs): `type` (one name), `format`, `title`,
//! `description`, `nullable`, `enum` (strings), `properties`, `required`, `minProperties`,
//! `maxProperties`, `items`, `minItems`, `maxItems`, `minLength`, `maxLength`, `pattern`,
//! `minimum`, `maximum`, `anyOf`, `default`, `example`, `propertyOrdering`. There is no `$ref`,
//! so the walk inlines every reference first (a recursive type is an error, see
//! [`LoweringErrorKind::RecursiveReference`](super::LoweringErrorKind::RecursiveReference)).
//! Rewrites, each reported: a type list or a union with `null` becomes one type with `nullable:
//! true`; several types become an `anyOf`; `oneOf` becomes `anyOf`; `allOf` is merged; a
//! string `const` becomes a one-value `enum`; a tuple's items become the union of its item
//! schemas; an integer's exclusive bound becomes an inclusive one. Everything else outside the
//! list is removed and reported, `additionalProperties` included (maps lose their value schema).

use serde_json::{Map, Value, json};

use super::edit::{exclusive_bounds, merge_all_of, rename_keyword, type_names};
use super::formats::gemini_schema_accepts;
use super::lowering_error::{LoweringError, LoweringErrorKind};
use super::walk::{NodeRules, Stop, Walk, is_annotation};

/// The rules of Gemini's `Schema`.
#[derive(Default)]
pub(crate) struct GeminiSchemaRules;

fn unsupported(pointer: &str, what: &str) -> Stop {
    LoweringError::new(
        pointer,
        LoweringErrorKind::Unsupported {
            what: what.to_owned(),
        },
    )
    .into()
}

fn is_supported(keyword: &str) -> bool {
    matches!(
        keyword,
        "type"
            | "format"
            | "title"
            | "description"
            | "nullable"
            | "enum"
            | "properties"
            | "required"
            | "minProperties"
            | "maxProperties"
            | "items"
            | "minItems"
            | "maxItems"
            | "minLength"
            | "maxLength"
            | "pattern"
            | "minimum"
            | "maximum"
            | "anyOf"
            | "default"
            | "example"
            | "propertyOrdering"
    )
}

impl NodeRules for GeminiSchemaRules {
    fn rewrite(
        &mut self,
        node: &mut Value,
        pointer: &str,
        walk: &mut Walk<'_>,
    ) -> Result<(), Stop> {
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => {
                *node = json!({});
                walk.report.rewritten(pointer, "true", "as `{}`");
                return Ok(());
            }
            // Kept for the parent: a tuple's `items: false` is rewritten there.
            _ => return Ok(()),
        };
        if map.contains_key("oneOf") {
            if map.contains_key("anyOf") {
                return Err(unsupported(pointer, "both `anyOf` and `oneOf`"));
            }
            rename_keyword(map, "oneOf", "anyOf");
            walk.report.rewritten(pointer, "oneOf", "as `anyOf`");
        }
        if let Some(entries) = map.remove("allOf") {
            merge_all_of(map, entries, pointer)?
                .map_err(|why| unsupported(pointer, &format!("an `allOf` that {why}")))?;
            walk.report
                .rewritten(pointer, "allOf", "merged into its schema");
        }
        tuple_items(map, pointer, walk);
        constant(map, pointer, walk);
        single_type(map, pointer, walk)?;
        null_branches(map, pointer, walk);
        string_enum(map, pointer, walk);
        exclusive_bounds(map, pointer, walk);
        let single = map.get("type").and_then(Value::as_str).map(str::to_owned);
        map.retain(|keyword, value| {
            let keep = match keyword.as_str() {
                "format" => value
                    .as_str()
                    .is_some_and(|format| gemini_schema_accepts(format, single.as_deref())),
                keyword => is_supported(keyword) || super::restore::is_marker(keyword),
            };
            if !keep {
                walk.report.removed(pointer, keyword);
            }
            keep
        });
        refuse_false_children(map, pointer)
    }
}

/// A tuple (`prefixItems`, or `items` as a list) has no form here: its items become the union
/// of the item schemas and of the schema of the items after them (`items` beside
/// `prefixItems`, `additionalItems` beside a list), and `minItems`/`maxItems` keep its length; a
/// closed tuple (no items after it) gets the `maxItems` its length implies.
fn tuple_items(map: &mut Map<String, Value>, pointer: &str, walk: &mut Walk<'_>) {
    let (prefix, rest) = match map.remove("prefixItems") {
        Some(Value::Array(prefix)) => (prefix, map.remove("items")),
        Some(other) => {
            map.insert("prefixItems".to_owned(), other);
            return;
        }
        None => match map.get("items") {
            Some(Value::Array(prefix)) => {
                let prefix = prefix.clone();
                map.remove("items");
                (prefix, map.remove("additionalItems"))
            }
            _ => return,
        },
    };
    let length = prefix.len();
    let mut distinct: Vec<Value> = Vec::new();
    let mut add = |schema: Value| {
        if !distinct.contains(&schema) {
            distinct.push(schema);
        }
    };
    prefix.into_iter().for_each(&mut add);
    match rest {
        // No item may follow: the length is the tuple's at most.
        Some(Value::Bool(false)) => {
            let max = map
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(length as u64, |max| max.min(length as u64));
            map.insert("maxItems".to_owned(), json!(max));
        }
        Some(schema) => add(schema),
        None => {}
    }
    match distinct.len() {
        0 => {}
        1 => {
            map.insert("items".to_owned(), distinct.remove(0));
        }
        _ => {
            map.insert("items".to_owned(), json!({ "anyOf": distinct }));
        }
    }
    walk.report.rewritten(
        pointer,
        "prefixItems",
        "a tuple's items as the union of its item schemas",
    );
}

/// `const` is not in the list: a string constant becomes a one-value `enum`.
fn constant(map: &mut Map<String, Value>, pointer: &str, walk: &mut Walk<'_>) {
    match map.remove("const") {
        Some(Value::String(text)) => {
            map.insert("enum".to_owned(), json!([text]));
            map.entry("type").or_insert_with(|| json!("string"));
            walk.report
                .rewritten(pointer, "const", "as a one-value `enum`");
        }
        Some(_) => walk.report.removed(pointer, "const"),
        None => {}
    }
}

/// One type name: `null` in a list becomes `nullable: true`; several names become an `anyOf`.
fn single_type(
    map: &mut Map<String, Value>,
    pointer: &str,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    if !map.get("type").is_some_and(Value::is_array) {
        return Ok(());
    }
    let names: Vec<String> = type_names(map, pointer)?
        .into_iter()
        .map(str::to_owned)
        .collect();
    let others: Vec<&String> = names.iter().filter(|name| *name != "null").collect();
    if others.len() < names.len() {
        map.insert("nullable".to_owned(), json!(true));
    }
    match others.as_slice() {
        [] => {
            map.insert("type".to_owned(), json!("null"));
            map.remove("nullable");
        }
        [one] => {
            map.insert("type".to_owned(), json!(one));
        }
        several => {
            if map.contains_key("anyOf") {
                return Err(unsupported(pointer, "a list of types beside `anyOf`"));
            }
            map.remove("type");
            let branches: Vec<Value> = several.iter().map(|name| json!({"type": name})).collect();
            map.insert("anyOf".to_owned(), Value::Array(branches));
        }
    }
    walk.report.rewritten(
        pointer,
        "type",
        "a list of types as one type, `nullable` or `anyOf`",
    );
    Ok(())
}

/// A `{type: null}` branch of `anyOf` becomes `nullable: true`; a single remaining branch is
/// merged into the schema when they do not overlap, and no remaining branch makes the type
/// `null`.
fn null_branches(map: &mut Map<String, Value>, pointer: &str, walk: &mut Walk<'_>) {
    let Some(Value::Array(branches)) = map.get_mut("anyOf") else {
        return;
    };
    let is_null = |branch: &Value| branch.get("type").and_then(Value::as_str) == Some("null");
    let before = branches.len();
    branches.retain(|branch| !is_null(branch));
    if branches.len() == before {
        return;
    }
    walk.report
        .rewritten(pointer, "anyOf", "a `null` branch as `nullable: true`");
    if branches.is_empty() {
        // Only `null` was allowed: that is the type, and an empty `anyOf` is refused.
        map.remove("anyOf");
        map.entry("type").or_insert_with(|| json!("null"));
        return;
    }
    if let Some(Value::Array(branches)) = map.get("anyOf")
        && let [Value::Object(only)] = branches.as_slice()
    {
        let overlap = only.keys().any(|keyword| {
            keyword != "anyOf" && map.contains_key(keyword) && !is_annotation(keyword)
        });
        if !overlap {
            let only = only.clone();
            map.remove("anyOf");
            for (keyword, value) in only {
                map.entry(keyword).or_insert(value);
            }
        }
    }
    map.insert("nullable".to_owned(), json!(true));
}

/// Enums hold strings: a `null` among them becomes `nullable`; other values remove the enum.
fn string_enum(map: &mut Map<String, Value>, pointer: &str, walk: &mut Walk<'_>) {
    let Some(Value::Array(values)) = map.get_mut("enum") else {
        return;
    };
    if values.contains(&Value::Null) {
        values.retain(|value| !value.is_null());
        map.insert("nullable".to_owned(), json!(true));
        walk.report.rewritten(
            pointer,
            "enum",
            "`null` among the values as `nullable: true`",
        );
    }
    let Some(Value::Array(values)) = map.get("enum") else {
        return;
    };
    if values.iter().all(Value::is_string) {
        map.entry("type").or_insert_with(|| json!("string"));
    } else {
        map.remove("enum");
        walk.report.removed(pointer, "enum");
    }
}

/// A `false` subschema (no value allowed) has no form in this dialect.
fn refuse_false_children(map: &Map<String, Value>, pointer: &str) -> Result<(), Stop> {
    let is_false = |value: &Value| *value == Value::Bool(false);
    let found = map.get("items").is_some_and(is_false)
        || map
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| properties.values().any(is_false))
        || map
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(is_false));
    if found {
        return Err(unsupported(
            pointer,
            "a `false` subschema (one that allows no value)",
        ));
    }
    Ok(())
}
