//! A remote tool's declared output schema as a contract its results are held to. MCP has a
//! server that declares an `outputSchema` return `structuredContent` conforming to it, and its
//! clients check; the bridge compiles the schema once, when the tool is listed, and checks every
//! successful result against it (an error need not match).

use serde_json::Value;

use crate::validation::{ArgumentError, CompiledSchema, JsonSchemaEngine, SchemaEngine};
use crate::validation::{SchemaError, ValidationLimits};

use super::server::Bounds;
use crate::redact::SecretRedactor;

/// The schema engine of one connection's output schemas, within the connection's own bounds: a
/// schema or a value the bridge let through is never refused for being large, only for what
/// it says. Its cache spares a relisting from compiling the same schemas again. The schemas are
/// the server's text, which the validator's reasons quote and cut: the endpoint's credentials
/// (`scrubber`) come out of a quote before it is cut, so no cut leaves part of one behind.
pub(crate) fn engine(bounds: &Bounds, scrubber: SecretRedactor) -> JsonSchemaEngine {
    let ceilings = ValidationLimits::CEILINGS;
    let within = |bound: usize, ceiling: usize| bound.clamp(1, ceiling);
    let defaults = ValidationLimits::default();
    // The remote schema's depth is already bounded, and a value's by the JSON reader.
    let limits = defaults
        .with_max_schema_bytes(within(bounds.max_schema_bytes, ceilings.max_schema_bytes()))
        .and_then(|limits| limits.with_max_schema_depth(ceilings.max_schema_depth()))
        .and_then(|limits| {
            limits.with_max_argument_bytes(within(
                bounds.max_result_bytes,
                ceilings.max_argument_bytes(),
            ))
        })
        .and_then(|limits| limits.with_max_argument_depth(ceilings.max_argument_depth()))
        // Each value is within its ceiling: no setter refuses it.
        .unwrap_or(defaults);
    JsonSchemaEngine::new()
        .with_limits(limits)
        .with_redactor(scrubber)
}

/// A remote tool's output schema, compiled.
pub(crate) struct OutputContract {
    engine: JsonSchemaEngine,
    compiled: CompiledSchema,
}

impl OutputContract {
    /// Compiles `schema` with `engine`, or says why the validator cannot use it.
    pub(crate) fn compile(engine: &JsonSchemaEngine, schema: &Value) -> Result<Self, SchemaError> {
        Ok(Self {
            engine: engine.clone(),
            compiled: engine.compile(schema)?,
        })
    }

    /// Why a successful result's structured value (`None` when it has none) breaks the
    /// contract, or `None` when it keeps it. The text names where it fails (a JSON pointer into
    /// the value) and why, quoting the server's keys but never its values.
    pub(crate) fn breach(&self, structured: Option<&Value>) -> Option<String> {
        let Some(value) = structured else {
            return Some(
                "the tool declares an output schema but its result has no structuredContent"
                    .to_owned(),
            );
        };
        // The full check refuses keys and sizes as arguments must not have them; a result that
        // matches its schema is taken whatever its keys.
        if self.compiled.is_valid(value) {
            return None;
        }
        let reason = match self.engine.check(&self.compiled, value) {
            Ok(()) => "it does not match".to_owned(),
            Err(ArgumentError::ForbiddenKey { path, key }) => format!(
                "it does not match, and holds the key {key:?} (at {}), whose violations are not listed",
                if path.is_empty() { "the root" } else { &path }
            ),
            Err(ArgumentError::TooLarge { limit }) => {
                format!("it does not match (over {limit} bytes, its violations are not listed)")
            }
            Err(ArgumentError::TooDeep { limit }) => format!(
                "it does not match (nested deeper than {limit} levels, its violations are not listed)"
            ),
            Err(error) => error.to_string(),
        };
        Some(format!(
            "the result's structuredContent does not match the tool's declared output schema: {reason}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contract(schema: Value) -> OutputContract {
        OutputContract::compile(
            &engine(&Bounds::default(), SecretRedactor::default()),
            &schema,
        )
        .unwrap()
    }

    #[test]
    fn a_breach_names_the_pointer_and_the_reason() {
        let contract = contract(json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "integer"}}}
        }));
        assert_eq!(contract.breach(Some(&json!({"items": [1, 2]}))), None);
        let breach = contract
            .breach(Some(&json!({"items": [1, "two"]})))
            .unwrap();
        assert!(breach.contains("at /items/1:"), "{breach}");
        assert!(breach.contains("integer"), "{breach}");
        assert!(
            contract
                .breach(None)
                .unwrap()
                .contains("no structuredContent")
        );
    }

    /// Keys arguments may not have are no reason to refuse a result that matches its schema.
    #[test]
    fn a_matching_result_is_taken_whatever_its_keys() {
        let contract = contract(json!({"type": "object"}));
        assert_eq!(contract.breach(Some(&json!({"__proto__": {}}))), None);
        let strict =
            self::contract(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
        let breach = strict
            .breach(Some(&json!({"a": 1, "__proto__": {}})))
            .unwrap();
        assert!(breach.contains("__proto__"), "{breach}");
    }

    /// The bridge's bounds are the validator's: a schema at the connection's bound compiles.
    #[test]
    fn the_engine_takes_what_the_connections_bounds_let_through() {
        let bounds = Bounds {
            max_schema_bytes: 1024 * 1024,
            max_result_bytes: 8 * 1024 * 1024,
            ..Bounds::default()
        };
        let limits = *engine(&bounds, SecretRedactor::default()).limits();
        assert_eq!(limits.max_schema_bytes(), 1024 * 1024);
        assert_eq!(limits.max_argument_bytes(), 8 * 1024 * 1024);
        let huge = Bounds {
            max_schema_bytes: usize::MAX,
            ..Bounds::default()
        };
        assert_eq!(
            engine(&huge, SecretRedactor::default())
                .limits()
                .max_schema_bytes(),
            ValidationLimits::CEILINGS.max_schema_bytes()
        );
    }
}
