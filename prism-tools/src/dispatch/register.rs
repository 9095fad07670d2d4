//! Registering a tool through a built dispatcher, so that its validators check the tool's schema
//! before the tool becomes callable, as the builder does for the tools present at build time.
//! Whether the tool must declare a schema at all is the registry's rule (a secure dispatcher sets
//! it on the registry it reads), so registering on that registry directly is refused the same way.

use std::fmt;

use super::Dispatcher;
use super::builder::SecureDispatcher;
use super::prepare::prepare_tool;
use crate::definition::ToolDefinition;
use crate::registry::{DuplicateTool, MissingParameterSchema, RegistryError};
use crate::validation::ToolSchemaError;

/// [`Dispatcher::register`] refused a tool; the registry is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegisterError {
    /// A validator refused the tool's schema.
    InvalidSchema(ToolSchemaError),
    /// The dispatcher runs only tools with a schema (see
    /// [`build_secure`](crate::DispatchBuilder::build_secure)) and this one declares none.
    MissingSchema(MissingParameterSchema),
    /// The registry refuses duplicate names and this one is taken.
    Duplicate(DuplicateTool),
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidSchema(error) => write!(f, "invalid parameter schema: {error}"),
            Self::MissingSchema(error) => write!(f, "{error}"),
            Self::Duplicate(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for RegisterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::InvalidSchema(error) => Some(error),
            Self::MissingSchema(error) => Some(error),
            Self::Duplicate(error) => Some(error),
        }
    }
}

impl From<RegistryError> for RegisterError {
    fn from(error: RegistryError) -> Self {
        match error {
            RegistryError::Duplicate(error) => Self::Duplicate(error),
            RegistryError::MissingSchema(error) => Self::MissingSchema(error),
        }
    }
}

impl Dispatcher {
    /// Registers `tool` in this dispatcher's registry after each of its validators has
    /// [prepared](crate::ArgumentValidator::prepare) it, so that a schema the validators cannot use
    /// is reported now rather than at the model's first call. The registry's own refusals come
    /// back as [`RegisterError::Duplicate`] and, in a secure dispatcher's registry, as
    /// [`RegisterError::MissingSchema`].
    ///
    /// ```
    /// use prism::{Dispatcher, ToolDefinition, ToolRegistry};
    /// use prism::guard::validator_fn;
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
            .map_err(RegisterError::from)
    }
}

impl SecureDispatcher {
    /// Registers `tool`; see [`Dispatcher::register`]. A tool without a schema is refused.
    pub fn register(&self, tool: ToolDefinition) -> Result<(), RegisterError> {
        self.as_dispatcher().register(tool)
    }
}
