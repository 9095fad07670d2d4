//! Schema validation of tool arguments.
//!
//! The dispatcher treats `parameters` as opaque metadata; checking arguments against it is a
//! validator's job, plugged in at pipeline step 7 like any other. This module holds the pieces:
//!
//! | item | role |
//! | --- | --- |
//! | [`SchemaEngine`] | the engine seam: compile a schema once, check values against it, structured errors |
//! | [`SchemaValidator`] | adapts an engine to the dispatcher's [`ArgumentValidator`](crate::ArgumentValidator): reads `tool.parameters`, keeps the compiled schema with the definition, [`MissingSchema`] policy |
//! | [`ArgumentError`], [`Violation`] | the model's mistakes: `validation_failed`, every violation with its path |
//! | [`SchemaError`], [`ToolSchemaError`] | the host's mistakes: `invalid_tool_schema`, with the JSON pointer of the offending keyword, reported at build or registration |
//! | [`ValidationLimits`] | bounds on schemas and arguments, each below a hard ceiling |
//! | [`normalize_dialect`], [`normalize_tool`] | opt-in rewriting of `dict`/`float`/`any`-style catalogues into JSON Schema |
//! | `JsonSchemaEngine` | the JSON Schema engine (feature `json-schema`): drafts 2020-12, 2019-09 and 7, no network or file access |
//!
//! With the `json-schema` feature:
//!
//! ```
//! # #[cfg(feature = "json-schema")] {
//! use prism::{Dispatcher, ToolDefinition, ToolRegistry};
//! use prism::guard::{permission_fn, trust_fn};
//! use prism::validation::{JsonSchemaEngine, MissingSchema, SchemaValidator};
//! use serde_json::{json, Value};
//!
//! let search = ToolDefinition::builder("search")
//!     .parameters(json!({"type": "object", "properties": {"q": {"$ref": "https://example.com/q.json"}}}))
//!     .run_sync(|_, _| Ok(Value::Null));
//! let validator = SchemaValidator::new(JsonSchemaEngine::new())
//!     .missing_schema(MissingSchema::Reject);
//! let error = Dispatcher::builder(ToolRegistry::from_iter([search]))
//!     .trust(trust_fn(|_, _| Ok(())))
//!     .permission(permission_fn(|_, _, _| Ok(())))
//!     .validate(validator)
//!     .build_secure()
//!     .unwrap_err();
//! assert_eq!(error.invalid_schemas[0].tool, "search");
//! assert_eq!(error.invalid_schemas[0].error.pointer, "/properties/q/$ref");
//! # }
//! ```

mod engine;
mod error;
mod limits;
mod normalize;
mod schema_validator;

#[cfg(feature = "json-schema")]
mod cache;
#[cfg(feature = "json-schema")]
mod json_schema;
#[cfg(feature = "json-schema")]
mod meta_schema;
#[cfg(feature = "json-schema")]
mod references;
#[cfg(feature = "json-schema")]
mod violations;

pub use engine::SchemaEngine;
pub use error::{ArgumentError, SchemaError, SchemaErrorKind, ToolSchemaError, Violation};
pub use limits::{FORBIDDEN_KEYS, LimitError, ValidationLimits};
pub use normalize::{DialectReport, Rewrite, normalize_dialect, normalize_tool};
pub use schema_validator::{MissingSchema, SchemaValidator};

#[cfg(feature = "json-schema")]
pub use json_schema::{CompiledSchema, JsonSchemaEngine};
