//! Explains a schema that breaks its meta-schema: every offending keyword at once, each with its
//! JSON pointer and a hint.
//!
//! The engine stops at the first violation, and for a bad `type` it can only say that the value
//! matches none of the meta-schema's `anyOf` alternatives. Catalogues written for other
//! languages often break the meta-schema in several places, mostly in ways
//! [`normalize_tool`](super::normalize_tool) rewrites, so the host gets the whole list at once,
//! each entry saying whether normalising fixes it.

use std::collections::{HashMap, HashSet};

use jsonschema::meta::MetaValidator;
use jsonschema::{Draft, ValidationError};
use serde_json::Value;

use super::error::{SchemaError, SchemaErrorKind};
use super::normalize::{Rewrite, normalize_dialect};
use crate::redact::SecretRedactor;

/// Where the meta-schemas of drafts 7 to 2020-12 check a `type` keyword's value.
const TYPE_CHECK: &str = "/properties/type/anyOf";

/// The meta-schema violations of `schema`, as one error at the first offending keyword whose
/// message lists them all (up to `max_listed`, each part bounded by `part_limit` bytes, with
/// `redactor`'s secrets taken out before the cut). `None` when the schema satisfies its
/// meta-schema, so the engine's own error stands.
pub(crate) fn meta_schema_error(
    schema: &Value,
    max_listed: usize,
    part_limit: usize,
    redactor: &SecretRedactor,
) -> Option<SchemaError> {
    // A custom meta-schema would have to be fetched; those are refused before compilation.
    if Draft::default().detect(schema) == Draft::Unknown {
        return None;
    }
    let meta = jsonschema::meta::validator_for(schema).ok()?;
    let mut seen: HashSet<String> = HashSet::new();
    // (pointer, what is wrong there and the hint)
    let mut listed: Vec<(String, String)> = Vec::new();
    let mut fixes: Option<HashMap<String, Rewrite>> = None;
    for error in meta.iter_errors(schema) {
        let pointer = error.instance_path().as_str();
        // One entry per keyword: a meta-schema may check the same value in several places.
        if !seen.insert(pointer.to_owned()) || listed.len() == max_listed {
            continue;
        }
        let fixes = fixes.get_or_insert_with(|| normalizing_fixes(&meta, schema));
        listed.push((
            pointer.to_owned(),
            explain(&error, fixes, part_limit, redactor),
        ));
    }
    let (first, _) = listed.first()?;
    let mut message = String::new();
    for (index, (pointer, part)) in listed.iter().enumerate() {
        if index > 0 {
            message.push_str("; also at ");
            message.push_str(pointer);
            message.push_str(": ");
        }
        message.push_str(part);
    }
    let omitted = seen.len() - listed.len();
    if omitted > 0 {
        message.push_str(&format!("; and {omitted} more"));
    }
    Some(SchemaError::new(SchemaErrorKind::Invalid, first, message))
}

/// The rewrites of [`normalize_dialect`] that leave their keyword valid, by pointer.
fn normalizing_fixes(meta: &MetaValidator<'_>, schema: &Value) -> HashMap<String, Rewrite> {
    let mut normalized = schema.clone();
    let rewrites = normalize_dialect(&mut normalized).rewrites;
    let still_invalid: HashSet<String> = meta
        .iter_errors(&normalized)
        .map(|error| error.instance_path().as_str().to_owned())
        .collect();
    rewrites
        .into_iter()
        .filter(|rewrite| !still_invalid.contains(&rewrite.pointer))
        .map(|rewrite| (rewrite.pointer.clone(), rewrite))
        .collect()
}

/// What is wrong at one keyword, and a hint: how [`normalize_dialect`] fixes it, the type names
/// for a type it cannot fix, or that it does not help.
fn explain(
    error: &ValidationError<'_>,
    fixes: &HashMap<String, Rewrite>,
    limit: usize,
    redactor: &SecretRedactor,
) -> String {
    let is_type = error.schema_path().as_str().ends_with(TYPE_CHECK);
    let mut what = if is_type {
        format!("{} is not a JSON Schema type", error.instance())
    } else {
        error.to_string()
    };
    // Both quote the schema: its secrets come out before the cut.
    redactor.redact_and_truncate(&mut what, limit);
    let pointer = error.instance_path().as_str();
    let mut hint = match fixes.get(pointer) {
        Some(Rewrite {
            after: Some(after), ..
        }) => format!("normalize_tool rewrites it to {after}"),
        Some(_) if is_type => "normalize_tool removes it, leaving any type".to_owned(),
        Some(_) => "normalize_tool moves it into the parent's \"required\" list".to_owned(),
        None if is_type => {
            "the types are array, boolean, integer, null, number, object and string".to_owned()
        }
        None => "normalize_tool does not fix it".to_owned(),
    };
    redactor.redact_and_truncate(&mut hint, limit);
    format!("{what} ({hint})")
}
