//! Gemini `parametersJsonSchema`: JSON Schema, with Gemini's keyword list.
//!
//! The list is the one Google documents for its JSON Schema fields (`responseJsonSchema`,
//! `parametersJsonSchema`): `$id`, `$defs`, `$ref`, `$anchor`, `type`, `format`, `title`,
//! `description`, `enum` (strings and numbers), `items`, `prefixItems`, `minItems`, `maxItems`,
//! `minimum`, `maximum`, `anyOf`, `oneOf` (read as `anyOf`), `properties`,
//! `additionalProperties`, `required`, and the non-standard `propertyOrdering`; `definitions` is
//! kept too, since references may point into it. A `$ref` may have no keyword beside it except
//! `$`-keywords. The rewriting is lighter than for `parameters`: references stay (recursion is
//! allowed through optional properties), type lists stay; `oneOf` is written as `anyOf` (what
//! Gemini does with it), a `$ref` with keywords beside it is wrapped in a one-branch `anyOf`,
//! `const` becomes a one-value `enum`, `allOf` is merged, an integer's exclusive bound becomes
//! an inclusive one, and schemars' Rust integer formats other than `int32`/`int64` are removed. Everything else outside the list is removed and
//! reported.

use serde_json::{Map, Value, json};

use super::edit::{exclusive_bounds, merge_all_of, rename_keyword};
use super::formats::gemini_json_accepts;
use super::lowering_error::{LoweringError, LoweringErrorKind};
use super::walk::{NodeRules, Stop, Walk};

/// The rules of Gemini's `parametersJsonSchema`.
#[derive(Default)]
pub(crate) struct GeminiJsonRules;

fn is_supported(keyword: &str) -> bool {
    matches!(
        keyword,
        "$id"
            | "$defs"
            | "definitions"
            | "$ref"
            | "$anchor"
            | "type"
            | "format"
            | "title"
            | "description"
            | "enum"
            | "items"
            | "prefixItems"
            | "minItems"
            | "maxItems"
            | "minimum"
            | "maximum"
            | "anyOf"
            | "properties"
            | "additionalProperties"
            | "required"
            | "propertyOrdering"
    )
}

impl NodeRules for GeminiJsonRules {
    fn rewrite(
        &mut self,
        node: &mut Value,
        pointer: &str,
        walk: &mut Walk<'_>,
    ) -> Result<(), Stop> {
        let Value::Object(map) = node else {
            return Ok(());
        };
        if map.contains_key("oneOf") {
            if map.contains_key("anyOf") {
                return Err(LoweringError::new(
                    pointer,
                    LoweringErrorKind::Unsupported {
                        what: "both `anyOf` and `oneOf`".to_owned(),
                    },
                )
                .into());
            }
            rename_keyword(map, "oneOf", "anyOf");
            walk.report
                .rewritten(pointer, "oneOf", "as `anyOf`, as Gemini reads it");
        }
        if let Some(entries) = map.remove("allOf") {
            merge_all_of(map, entries, pointer)?.map_err(|why| {
                Stop::Error(LoweringError::new(
                    pointer,
                    LoweringErrorKind::Unsupported {
                        what: format!("an `allOf` that {why}"),
                    },
                ))
            })?;
            walk.report
                .rewritten(pointer, "allOf", "merged into its schema");
        }
        if let Some(constant) = map.remove("const") {
            map.insert("enum".to_owned(), json!([constant]));
            walk.report
                .rewritten(pointer, "const", "as a one-value `enum`");
        }
        if let Some(Value::Array(values)) = map.get("enum")
            && !values
                .iter()
                .all(|value| value.is_string() || value.is_number())
        {
            map.remove("enum");
            walk.report.removed(pointer, "enum");
        }
        exclusive_bounds(map, pointer, walk);
        map.retain(|keyword, value| {
            let keep = match keyword.as_str() {
                "format" => value.as_str().is_some_and(gemini_json_accepts),
                keyword => is_supported(keyword) || super::restore::is_marker(keyword),
            };
            if !keep {
                walk.report.removed(pointer, keyword);
            }
            keep
        });
        lone_reference(map, pointer, walk);
        Ok(())
    }
}

/// Keywords beside a `$ref` (other than `$`-keywords) go onto a one-branch `anyOf` around it.
fn lone_reference(map: &mut Map<String, Value>, pointer: &str, walk: &mut Walk<'_>) {
    let alone = map
        .keys()
        .all(|keyword| keyword.starts_with('$') || keyword == "definitions");
    // An `anyOf` already beside it would be lost; that rare shape is sent as written.
    if !map.contains_key("$ref") || alone || map.contains_key("anyOf") {
        return;
    }
    let reference = map.remove("$ref").unwrap_or_default();
    map.insert("anyOf".to_owned(), json!([{"$ref": reference}]));
    walk.report.rewritten(
        pointer,
        "$ref",
        "keywords beside it moved onto an `anyOf` wrapper",
    );
}
