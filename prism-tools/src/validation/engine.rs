//! [`SchemaEngine`]: checks a JSON value against a schema, whatever the schema language.
//!
//! The dispatcher knows nothing about schemas; this trait is the seam where a schema engine
//! plugs in. It splits the work in two so that the expensive half happens once: `compile` turns
//! a schema into a reusable form, and `check` runs that form against each call's arguments.
//! [`SchemaValidator`](super::SchemaValidator) keeps the compiled form with the tool
//! definition, so the dispatch path never compiles or hashes a schema twice.

use serde_json::Value;

use super::error::{ArgumentError, SchemaError};

/// A schema engine: compiles a schema once and checks JSON values against it, with structured
/// errors. `JsonSchemaEngine` (feature `json-schema`) is the one this crate ships.
///
/// ```
/// use prism::validation::{ArgumentError, SchemaEngine, SchemaError, SchemaErrorKind, Violation};
/// use serde_json::{json, Value};
///
/// /// Accepts schemas of the form `{"required": [...]}` and nothing else.
/// struct RequiredKeys;
///
/// impl SchemaEngine for RequiredKeys {
///     type Compiled = Vec<String>;
///
///     fn compile(&self, schema: &Value) -> Result<Vec<String>, SchemaError> {
///         let keys = schema["required"].as_array().ok_or_else(|| {
///             SchemaError::new(SchemaErrorKind::Invalid, "/required", "expected an array")
///         })?;
///         Ok(keys.iter().filter_map(|key| key.as_str().map(str::to_owned)).collect())
///     }
///
///     fn check(&self, keys: &Vec<String>, value: &Value) -> Result<(), ArgumentError> {
///         let violations: Vec<Violation> = keys
///             .iter()
///             .filter(|key| value.get(key.as_str()).is_none())
///             .map(|key| Violation {
///                 instance_path: String::new(),
///                 keyword: "required".into(),
///                 message: format!("{key:?} is required"),
///             })
///             .collect();
///         if violations.is_empty() {
///             Ok(())
///         } else {
///             Err(ArgumentError::Invalid { violations, omitted: 0 })
///         }
///     }
/// }
///
/// let schema = json!({"required": ["a", "b"]});
/// assert!(RequiredKeys.validate(&schema, &json!({"a": 1, "b": 2})).is_ok());
/// let error = RequiredKeys.validate(&schema, &json!({})).unwrap_err();
/// assert_eq!(error.to_string(), "2 schema violations\n- at the root: \"a\" is required\n- at the root: \"b\" is required");
/// ```
pub trait SchemaEngine: Send + Sync + 'static {
    /// A schema made ready for repeated checks.
    type Compiled: Send + Sync + 'static;

    /// Prepares `schema`, or explains (with the JSON pointer of the offending keyword) why it
    /// cannot be used. A failure here is the host's bug.
    fn compile(&self, schema: &Value) -> Result<Self::Compiled, SchemaError>;

    /// Checks `value` against a compiled schema.
    fn check(&self, compiled: &Self::Compiled, value: &Value) -> Result<(), ArgumentError>;

    /// Checks `value` against `schema` in one step. The default compiles every time; engines
    /// with a cache of compiled schemas override it.
    fn validate(&self, schema: &Value, value: &Value) -> Result<(), ArgumentError> {
        let compiled = self.compile(schema).map_err(ArgumentError::Schema)?;
        self.check(&compiled, value)
    }
}
