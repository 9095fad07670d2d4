//! Turning the JSON Schema engine's errors into [`Violation`]s for the model.
//!
//! Messages are bounded, and the dispatcher redacts them afterwards, so a bound must never cut
//! text that came from the arguments: a cut secret no longer matches the redactor. Argument
//! values are masked by the engine; argument keys (listed by `additionalProperties`,
//! `unevaluatedProperties` and `propertyNames`) are written whole or only counted, and only the
//! text that comes from the schema is ever cut.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use super::error::{ArgumentError, Violation};
use crate::redact::SecretRedactor;

/// Bound on one violation's message (and on a schema error's), in bytes.
pub(super) const MESSAGE_LIMIT: usize = 200;

/// Room kept after a list of keys for the words that close it (" and 12 more were unexpected)").
const LIST_TAIL: usize = 40;

/// Most pairs of an argument value and a schema keyword for which every violation is listed.
/// The engine builds all its errors at once, whatever the bound on those reported, and an
/// `anyOf` or `oneOf` error holds the errors of every branch: 5,000 items each failing 1,000
/// `const` branches make five million. This many pairs take well under a second.
const LISTING_BUDGET: usize = 1 << 18;

/// The one violation reported when even the first would cost too much to find.
const NOT_LISTED: &str = "the value does not match the schema (for arguments and a schema this large, violations are not listed)";

/// The note after the first violation when no other was looked for.
const NOT_LOOKED_FOR: &str =
    "further violations, if any, were not looked for (the arguments are too large)";

/// What listing a schema's violations can cost, measured when it is compiled.
#[derive(Clone, Copy, Debug)]
pub(super) struct ListingCost {
    /// Object members at every level: a bound on the errors one argument value can raise.
    keywords: usize,
    /// Whether an `anyOf` or `oneOf` appears, whose error holds the errors of every branch, so
    /// that even the first error can cost as much as all of them.
    branches: bool,
}

impl ListingCost {
    /// Measures `schema` (whose depth is already bounded).
    pub(super) fn of(schema: &Value) -> Self {
        let mut cost = Self {
            keywords: 0,
            branches: false,
        };
        cost.add(schema);
        cost
    }

    fn add(&mut self, value: &Value) {
        match value {
            Value::Object(map) => {
                self.keywords += map.len();
                self.branches |= map.contains_key("anyOf") || map.contains_key("oneOf");
                map.values().for_each(|item| self.add(item));
            }
            Value::Array(items) => items.iter().for_each(|item| self.add(item)),
            _ => {}
        }
    }
}

/// The violations of a value the schema refused, up to `max`, at a cost bounded whatever the
/// arguments: all of them when the arguments are small enough for the schema; otherwise the
/// first one if finding it builds no branch errors; otherwise a bare refusal. The schema's text
/// a message quotes has `redactor`'s secrets taken out before the message is cut.
pub(super) fn collect(
    validator: &Validator,
    cost: ListingCost,
    value: &Value,
    max: usize,
    redactor: &SecretRedactor,
) -> ArgumentError {
    let mut violations = Vec::new();
    let mut omitted = 0;
    let listed = values_in(value).saturating_mul(cost.keywords) <= LISTING_BUDGET;
    if listed {
        for error in validator.iter_errors(value) {
            if violations.len() < max {
                violations.push(violation(&error, redactor));
            } else {
                omitted += 1;
            }
        }
    } else if !cost.branches
        && let Err(error) = validator.validate(value)
    {
        // Validation stops at the first error, and without branches builds no other.
        violations.push(violation(&error, redactor));
        if max > 1 {
            violations.push(note(NOT_LOOKED_FOR));
        }
    }
    if violations.is_empty() {
        // Over the budget with branches; or `is_valid` and the engine's errors disagree, which
        // only the engine can cause: fail closed.
        violations.push(note(if listed {
            "the value does not match the schema"
        } else {
            NOT_LISTED
        }));
    }
    ArgumentError::Invalid {
        violations,
        omitted,
    }
}

/// A violation at the root that names no keyword.
fn note(message: &str) -> Violation {
    Violation {
        instance_path: String::new(),
        keyword: String::new(),
        message: message.to_owned(),
    }
}

/// How many values `value` holds, itself included (its depth is already bounded).
fn values_in(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(values_in).sum(),
        Value::Object(map) => map.values().map(values_in).sum(),
        _ => 0,
    }
}

/// A violation for the model: argument values are masked, the message bounded, `redactor`'s
/// secrets taken out of the schema's text it quotes before any cut.
fn violation(error: &ValidationError<'_>, redactor: &SecretRedactor) -> Violation {
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
            redactor.redact_and_truncate(&mut reason, MESSAGE_LIMIT / 2);
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
            redactor.redact_and_truncate(&mut message, MESSAGE_LIMIT);
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
    use crate::validation::{ArgumentError, JsonSchemaEngine, SchemaEngine, ValidationLimits};

    fn first_violation(schema: Value, value: Value) -> Violation {
        let validator = jsonschema::validator_for(&schema).unwrap();
        violation(
            &validator.iter_errors(&value).next().unwrap(),
            &SecretRedactor::default(),
        )
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

    /// `items` of 1,000 `const` branches, and 5,000 items none of them matches: listing every
    /// violation would build five million branch errors.
    fn costly() -> (Value, Value) {
        let branches: Vec<Value> = (0..1000)
            .map(|i| json!({"const": format!("c{i}")}))
            .collect();
        let schema = json!({"properties": {"a": {"items": {"anyOf": branches}}}});
        (schema, json!({"a": (0..5000).collect::<Vec<_>>()}))
    }

    /// The violations a validator's refusal lists, and how many it left out.
    fn refusal(
        validator: &JsonSchemaEngine,
        schema: &Value,
        value: &Value,
    ) -> (Vec<Violation>, usize) {
        match validator.validate(schema, value).unwrap_err() {
            ArgumentError::Invalid {
                violations,
                omitted,
            } => (violations, omitted),
            error => panic!("expected violations, got {error:?}"),
        }
    }

    #[test]
    fn a_costly_refusal_is_summed_up_without_asking_the_engine() {
        let (schema, value) = costly();
        for max in [1, 16] {
            let limits = ValidationLimits::default()
                .with_max_violations(max)
                .unwrap();
            let validator = JsonSchemaEngine::new().with_limits(limits);
            // The engine's own listing took 7 s in release builds, 60 s in debug; the bare
            // refusal below is only ever written when the engine was not asked to list.
            let (violations, omitted) = refusal(&validator, &schema, &value);
            assert_eq!((violations.len(), omitted), (1, 0));
            assert_eq!(violations[0].message, NOT_LISTED);
        }
    }

    #[test]
    fn a_large_refusal_without_branches_names_its_first_violation() {
        let schema = json!({"properties": {"a": {"items": {"type": "string"}}}});
        let value = json!({"a": (0..100_000).collect::<Vec<_>>()});
        let (violations, omitted) = refusal(&JsonSchemaEngine::new(), &schema, &value);
        assert_eq!(omitted, 0);
        let found: Vec<_> = violations
            .iter()
            .map(|v| (v.instance_path.as_str(), v.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("/a/0", "value is not of type \"string\""),
                ("", NOT_LOOKED_FOR)
            ]
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
