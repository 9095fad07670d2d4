//! Registering a tool through a built dispatcher, so that its validators check the tool's schema
//! before the tool becomes callable, as the builder does for the tools present at build time.

use std::fmt;

use super::Dispatcher;
use super::builder::SecureDispatcher;
use super::prepare::prepare_tool;
use crate::definition::ToolDefinition;
use crate::registry::DuplicateTool;
use crate::validation::ToolSchemaError;

/// [`Dispatcher::register`] refused a tool; the registry is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegisterError {
    /// A validator refused the tool's schema.
    InvalidSchema(ToolSchemaError),
    /// The dispatcher runs only tools with a schema (see
    /// [`build_secure`](crate::DispatchBuilder::build_secure)) and this one has none.
    MissingSchema(String),
    /// The registry refuses duplicate names and this one is taken.
    Duplicate(DuplicateTool),
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidSchema(error) => write!(f, "invalid parameter schema: {error}"),
            Self::MissingSchema(tool) => write!(
                f,
                "tool {tool} has no parameter schema; this dispatcher only runs tools that declare one"
            ),
            Self::Duplicate(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for RegisterError {}

impl Dispatcher {
    /// Registers `tool` in this dispatcher's registry after each of its validators has
    /// [prepared](crate::ArgumentValidator::prepare) it, so that a schema the validators cannot use
    /// is reported now rather than at the model's first call.
    ///
    /// ```
    /// use prism_tools::{Dispatcher, ToolDefinition, ToolRegistry, validator_fn};
    /// use serde_json::Value;
    ///
    /// let dispatcher = Dispatcher::builder(ToolRegistry::new())
    ///     .validate(validator_fn(|_tool, _args| Ok(())))
    ///     .build();
    /// let tool = ToolDefinition::builder("ping").run_sync(|_, _| Ok(Value::Null));
    /// dispatcher.register(tool).unwrap();
    /// assert!(dispatcher.registry().contains("ping"));
    /// ```
    pub fn register(&self, tool: ToolDefinition) -> Result<(), RegisterError> {
        let pipeline = &*self.pipeline;
        if pipeline.require_schema && tool.parameters().is_none() {
            return Err(RegisterError::MissingSchema(tool.name().to_owned()));
        }
        if let Some(error) = pipeline
            .validators
            .iter()
            .find_map(|validator| prepare_tool(validator.as_ref(), &tool))
        {
            return Err(RegisterError::InvalidSchema(error));
        }
        pipeline
            .registry
            .register(tool)
            .map_err(RegisterError::Duplicate)
    }
}

impl SecureDispatcher {
    /// Registers `tool`; see [`Dispatcher::register`]. A tool without a schema is refused.
    pub fn register(&self, tool: ToolDefinition) -> Result<(), RegisterError> {
        self.as_dispatcher().register(tool)
    }
}
