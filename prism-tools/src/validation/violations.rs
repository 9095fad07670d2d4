//! Turning the JSON Schema engine's errors into [`Violation`]s for the model.
//!
//! Messages are bounded, and the dispatcher redacts them afterwards, so a bound must never cut
//! text that came from the arguments: a cut secret no longer matches the redactor. Argument
//! values are masked by the engine; argument keys (listed by `additionalProperties`,
//! `unevaluatedProperties` and `propertyNames`) are written whole or only counted, and only the
//! text that comes from the schema is ever cut.

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;

use super::error::Violation;
use crate::redact::truncate_at_char_boundary;

/// Bound on one violation's message (and on a schema error's), in bytes.
pub(super) const MESSAGE_LIMIT: usize = 200;

/// Room kept after a list of keys for the words that close it (" and 12 more were unexpected)").
const LIST_TAIL: usize = 40;

/// A violation for the model: argument values are masked, the message bounded.
pub(super) fn violation(error: &ValidationError<'_>) -> Violation {
    let message = match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            unexpected_keys("Additional", unexpected)
        }
        ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            unexpected_keys("Unevaluated", unexpected)
        }
        // The engine writes the name unmasked, JSON-escaped, inside its own message.
        ValidationErrorKind::PropertyNames { error: name_error } => {
            let mut reason = name_error.masked_with("it").to_string();
            truncate_at_char_boundary(&mut reason, MESSAGE_LIMIT / 2);
            let name = name_error.instance().as_str().unwrap_or_default();
            let (listed, _) = quoted_within(
                &[name],
                MESSAGE_LIMIT.saturating_sub(LIST_TAIL + reason.len()),
            );
            if listed.is_empty() {
                format!("A property name is not valid: {reason}")
            } else {
                format!("The property name {listed} is not valid: {reason}")
            }
        }
        _ => {
            let mut message = error.masked().to_string();
            truncate_at_char_boundary(&mut message, MESSAGE_LIMIT);
            message
        }
    };
    Violation {
        instance_path: error.instance_path().as_str().to_owned(),
        keyword: error.kind().keyword().to_owned(),
        message,
    }
}

/// "Additional properties are not allowed ('a', 'b' and 3 more were unexpected)": as many keys
/// as fit in the bound, each whole, and a count of the rest.
fn unexpected_keys(which: &str, keys: &[String]) -> String {
    let head = format!("{which} properties are not allowed (");
    let (listed, left_out) =
        quoted_within(keys, MESSAGE_LIMIT.saturating_sub(LIST_TAIL + head.len()));
    let verb = |count: usize| if count == 1 { "was" } else { "were" };
    match (listed.is_empty(), left_out) {
        (false, 0) => format!("{head}{listed} {} unexpected)", verb(keys.len())),
        (false, more) => format!("{head}{listed} and {more} more were unexpected)"),
        (true, all) => format!("{head}{all} {} unexpected)", verb(all)),
    }
}

/// `items` quoted and separated by commas, as many as fit in `room` bytes, each whole; and how
/// many were left out.
fn quoted_within(items: &[impl AsRef<str>], room: usize) -> (String, usize) {
    let mut listed = String::new();
    for (index, item) in items.iter().enumerate() {
        let item = item.as_ref();
        let separator = if listed.is_empty() { "" } else { ", " };
        if listed.len() + separator.len() + item.len() + 2 > room {
            return (listed, items.len() - index);
        }
        listed.push_str(separator);
        listed.push('\'');
        listed.push_str(item);
        listed.push('\'');
    }
    (listed, 0)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn first_violation(schema: Value, value: Value) -> Violation {
        let validator = jsonschema::validator_for(&schema).unwrap();
        violation(&validator.iter_errors(&value).next().unwrap())
    }

    #[test]
    fn unexpected_keys_are_listed_whole_or_counted() {
        let schema = json!({"properties": {}, "additionalProperties": false});
        let few = first_violation(schema.clone(), json!({"a": 1, "b": 2}));
        assert_eq!(
            few.message,
            "Additional properties are not allowed ('a', 'b' were unexpected)"
        );
        let long = "k".repeat(120);
        let many = first_violation(schema.clone(), json!({"a": 1, long.clone(): 2, "z": 3}));
        assert_eq!(
            many.message,
            "Additional properties are not allowed ('a' and 2 more were unexpected)"
        );
        let huge = "k".repeat(1000);
        let none = first_violation(schema, json!({huge: 1}));
        assert_eq!(
            none.message,
            "Additional properties are not allowed (1 was unexpected)"
        );
    }

    #[test]
    fn a_property_name_is_quoted_whole_and_its_fault_masked() {
        let schema = json!({"propertyNames": {"maxLength": 3}});
        let short = first_violation(schema.clone(), json!({"abcd": 1}));
        assert_eq!(
            short.message,
            "The property name 'abcd' is not valid: it is longer than 3 characters"
        );
        let long = first_violation(schema, json!({"x".repeat(300): 1}));
        assert_eq!(
            long.message,
            "A property name is not valid: it is longer than 3 characters"
        );
    }
}
