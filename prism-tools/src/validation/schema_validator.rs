//! [`SchemaValidator`]: the dispatcher validator that checks each call's arguments against its
//! tool's parameter schema, with a [`SchemaEngine`] doing the checking.
//!
//! The compiled schema lives with the tool definition (see
//! [`ToolDefinition::memo`](crate::ToolDefinition::memo)): the first call, or the dispatcher's
//! build, compiles it; every later call reads it without a lock. A definition's slot belongs to
//! the first validator that filled it; another validator (with other settings) falls back to
//! its engine's own cache, so two validators never share a compiled form made for the other.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::engine::SchemaEngine;
use super::error::{ArgumentError, SchemaError};
use crate::definition::ToolDefinition;
use crate::error::Refusal;
use crate::guard::{ArgumentValidator, Verdict};
use crate::registry::MissingParameterSchema;

/// What to do with a tool that declares no parameter schema (none, `{}` or `true`: see
/// [`ToolDefinition::declares_parameters`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingSchema {
    /// Let its calls through unchecked (the default: `parameters` is optional metadata).
    #[default]
    Allow,
    /// Refuse its calls (`validation_failed`, with the message of
    /// [`MissingParameterSchema`](crate::MissingParameterSchema)): every tool must declare a
    /// schema.
    Reject,
}

/// Checks every call's arguments against the tool's `parameters` with a schema engine.
///
/// Arguments that break the schema are refused with `validation_failed` and a message naming
/// every violation (up to the engine's bound) with its path; the dispatcher redacts it like any
/// other error. A schema the engine cannot use is refused with `invalid_tool_schema`, and
/// [`prepare`](ArgumentValidator::prepare) reports it earlier, when the dispatcher is built or the
/// tool registered through it.
///
/// ```
/// use prism::validation::{MissingSchema, SchemaValidator};
/// # use prism::validation::{ArgumentError, SchemaEngine, SchemaError};
/// # use serde_json::Value;
/// # struct AnyValue;
/// # impl SchemaEngine for AnyValue {
/// #     type Compiled = ();
/// #     fn compile(&self, _: &Value) -> Result<(), SchemaError> { Ok(()) }
/// #     fn check(&self, _: &(), _: &Value) -> Result<(), ArgumentError> { Ok(()) }
/// # }
/// use prism::ToolDefinition;
/// use prism::guard::ArgumentValidator;
///
/// let validator = SchemaValidator::new(AnyValue).missing_schema(MissingSchema::Reject);
/// let tool = ToolDefinition::builder("ping").run_sync(|_, _| Ok(Value::Null));
/// let refusal = validator.validate(&tool, &serde_json::json!({})).ready().unwrap().unwrap_err();
/// assert!(refusal.message.contains("declares no parameter schema"));
/// ```
pub struct SchemaValidator<E> {
    engine: E,
    missing: MissingSchema,
    /// Identifies this validator's entries in definition memos.
    owner: u64,
}

/// What a validator keeps in a definition's memo.
struct Memo<C> {
    owner: u64,
    compiled: Result<C, SchemaError>,
}

impl<E: SchemaEngine> SchemaValidator<E> {
    /// Validates with `engine`; tools without a schema are let through.
    pub fn new(engine: E) -> Self {
        static NEXT_OWNER: AtomicU64 = AtomicU64::new(0);
        Self {
            engine,
            missing: MissingSchema::Allow,
            owner: NEXT_OWNER.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Sets what happens to tools without a schema.
    pub fn missing_schema(mut self, missing: MissingSchema) -> Self {
        self.missing = missing;
        self
    }

    /// The policy for tools without a schema.
    pub fn missing_schema_policy(&self) -> MissingSchema {
        self.missing
    }

    /// The schema engine.
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// This tool's compiled schema, compiling it on first use. `None` when the definition's memo
    /// belongs to another validator.
    fn compiled<'t>(
        &self,
        tool: &'t ToolDefinition,
        schema: &Value,
    ) -> Option<&'t Result<E::Compiled, SchemaError>> {
        let memo = tool.memo(|| Memo {
            owner: self.owner,
            compiled: self.engine.compile(schema),
        })?;
        (memo.owner == self.owner).then_some(&memo.compiled)
    }
}

impl<E: SchemaEngine> ArgumentValidator for SchemaValidator<E> {
    fn validate<'a>(&'a self, tool: &'a ToolDefinition, arguments: &'a Value) -> Verdict<'a> {
        // Everything but the common case (a compiled schema in this validator's memo, valid
        // arguments) is out of line, so the engine's check, inlined here, runs with little
        // more around it than the memo read.
        let schema = match tool.parameters() {
            Some(schema) if self.missing == MissingSchema::Allow || tool.declares_parameters() => {
                schema
            }
            _ => return Verdict::Ready(self.without_schema(tool)),
        };
        let outcome = match self.compiled(tool, schema) {
            Some(Ok(compiled)) => self.engine.check(compiled, arguments),
            Some(Err(error)) => Err(schema_error(error)),
            None => self.validate_with_engine_cache(schema, arguments),
        };
        Verdict::Ready(outcome.map_err(|error| refusal(tool, &error)))
    }

    fn prepare(&self, tool: &ToolDefinition) -> Result<(), SchemaError> {
        let Some(schema) = tool.parameters() else {
            return Ok(());
        };
        match self.compiled(tool, schema) {
            Some(compiled) => compiled.as_ref().map(drop).map_err(Clone::clone),
            None => self.engine.compile(schema).map(drop),
        }
    }
}

impl<E: SchemaEngine> SchemaValidator<E> {
    /// A call of a tool that declares no schema, under the [`MissingSchema`] policy.
    #[inline(never)]
    fn without_schema(&self, tool: &ToolDefinition) -> Result<(), Refusal> {
        match self.missing {
            MissingSchema::Allow => Ok(()),
            MissingSchema::Reject => Err(Refusal::new(
                MissingParameterSchema(tool.name().to_owned()).to_string(),
            )),
        }
    }

    /// A call of a tool whose memo belongs to another validator: the engine's own cache serves.
    #[inline(never)]
    fn validate_with_engine_cache(
        &self,
        schema: &Value,
        arguments: &Value,
    ) -> Result<(), ArgumentError> {
        self.engine.validate(schema, arguments)
    }
}

/// A schema that did not compile, as the reason to refuse every call of its tool.
#[cold]
#[inline(never)]
fn schema_error(error: &SchemaError) -> ArgumentError {
    ArgumentError::Schema(error.clone())
}

/// The refusal for arguments `tool` does not accept.
#[cold]
#[inline(never)]
fn refusal(tool: &ToolDefinition, error: &ArgumentError) -> Refusal {
    error.to_refusal(tool.name())
}

impl<E> std::fmt::Debug for SchemaValidator<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("engine", &std::any::type_name::<E>())
            .field("missing", &self.missing)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use serde_json::json;

    use super::*;
    use crate::call::ErrorCode;
    use crate::validation::{SchemaErrorKind, Violation};

    /// Requires the keys listed in the schema's `required`; counts compilations.
    #[derive(Default)]
    struct Required {
        compiled: AtomicUsize,
    }

    impl SchemaEngine for Required {
        type Compiled = Vec<String>;

        fn compile(&self, schema: &Value) -> Result<Vec<String>, SchemaError> {
            self.compiled.fetch_add(1, Ordering::SeqCst);
            let keys = schema["required"].as_array().ok_or_else(|| {
                SchemaError::new(SchemaErrorKind::Invalid, "/required", "not an array")
            })?;
            Ok(keys
                .iter()
                .filter_map(|k| k.as_str().map(Into::into))
                .collect())
        }

        fn check(&self, keys: &Vec<String>, value: &Value) -> Result<(), ArgumentError> {
            let violations: Vec<_> = keys
                .iter()
                .filter(|key| value.get(key.as_str()).is_none())
                .map(|key| Violation {
                    instance_path: String::new(),
                    keyword: "required".into(),
                    message: format!("{key:?} is required"),
                })
                .collect();
            if violations.is_empty() {
                Ok(())
            } else {
                Err(ArgumentError::Invalid {
                    violations,
                    omitted: 0,
                })
            }
        }
    }

    fn tool(schema: Option<Value>) -> ToolDefinition {
        let builder = ToolDefinition::builder("t");
        match schema {
            Some(schema) => builder.parameters(schema),
            None => builder,
        }
        .run_sync(|_, _| Ok(Value::Null))
    }

    #[test]
    fn compiles_once_per_definition() {
        let validator = SchemaValidator::new(Required::default());
        let tool = tool(Some(json!({"required": ["a"]})));
        assert!(
            validator
                .validate(&tool, &json!({"a": 1}))
                .ready()
                .unwrap()
                .is_ok()
        );
        let refusal = validator
            .validate(&tool.clone(), &json!({}))
            .ready()
            .unwrap()
            .unwrap_err();
        assert_eq!(refusal.code, None);
        assert!(refusal.message.contains("\"a\" is required"));
        assert_eq!(validator.engine.compiled.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_second_validator_does_not_use_the_first_ones_memo() {
        let first = SchemaValidator::new(Required::default());
        let second = SchemaValidator::new(Required::default());
        let tool = tool(Some(json!({"required": ["a"]})));
        assert!(
            first
                .validate(&tool, &json!({"a": 1}))
                .ready()
                .unwrap()
                .is_ok()
        );
        assert!(second.validate(&tool, &json!({})).ready().unwrap().is_err());
        assert!(second.validate(&tool, &json!({})).ready().unwrap().is_err());
        assert_eq!(second.engine.compiled.load(Ordering::SeqCst), 2);
    }

    /// Accepts objects only, whatever the schema; its compiled form is of another type.
    struct ObjectsOnly;

    impl SchemaEngine for ObjectsOnly {
        type Compiled = ();

        fn compile(&self, _: &Value) -> Result<(), SchemaError> {
            Ok(())
        }

        fn check(&self, (): &(), value: &Value) -> Result<(), ArgumentError> {
            if value.is_object() {
                return Ok(());
            }
            Err(ArgumentError::Invalid {
                violations: vec![Violation {
                    instance_path: String::new(),
                    keyword: "type".into(),
                    message: "not an object".into(),
                }],
                omitted: 0,
            })
        }
    }

    #[test]
    fn a_validator_of_another_type_checks_with_its_own_engine() {
        let required = SchemaValidator::new(Required::default());
        let objects = SchemaValidator::new(ObjectsOnly);
        let tool = tool(Some(json!({"required": ["a"]})));
        assert!(
            required
                .validate(&tool, &json!({"a": 1}))
                .ready()
                .unwrap()
                .is_ok()
        );
        assert!(objects.prepare(&tool).is_ok());
        assert!(objects.validate(&tool, &json!({})).ready().unwrap().is_ok());
        let refusal = objects
            .validate(&tool, &json!([]))
            .ready()
            .unwrap()
            .unwrap_err();
        assert!(refusal.message.contains("not an object"));
        assert!(
            required
                .validate(&tool, &json!({}))
                .ready()
                .unwrap()
                .is_err()
        );
        assert_eq!(required.engine.compiled.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn schema_errors_surface_at_prepare_and_at_dispatch() {
        let validator = SchemaValidator::new(Required::default());
        let tool = tool(Some(json!({"required": "a"})));
        assert_eq!(validator.prepare(&tool).unwrap_err().pointer, "/required");
        let refusal = validator
            .validate(&tool, &json!({}))
            .ready()
            .unwrap()
            .unwrap_err();
        assert_eq!(refusal.code, Some(ErrorCode::InvalidToolSchema));
    }

    #[test]
    fn missing_schemas_follow_the_policy() {
        let tool = tool(None);
        let allow = SchemaValidator::new(Required::default());
        assert!(allow.validate(&tool, &json!({})).ready().unwrap().is_ok());
        assert!(allow.prepare(&tool).is_ok());
        let reject = allow.missing_schema(MissingSchema::Reject);
        let refusal = reject
            .validate(&tool, &json!({}))
            .ready()
            .unwrap()
            .unwrap_err();
        assert!(refusal.message.contains("declares no parameter schema"));
        // A schema that constrains nothing is no schema.
        for schema in [json!({}), json!(true)] {
            let refusal = reject
                .validate(&self::tool(Some(schema)), &json!({}))
                .ready()
                .unwrap()
                .unwrap_err();
            assert!(refusal.message.contains("declares no parameter schema"));
        }
    }
}
