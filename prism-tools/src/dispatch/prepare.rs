//! Checking tools before any call: each validator [prepares](crate::ArgumentValidator::prepare)
//! each tool, so a schema it cannot use is reported to the host with the tool's name and the
//! offending keyword, when the dispatcher is built or the tool registered through it.

use std::sync::Arc;

use crate::definition::ToolDefinition;
use crate::guard::ArgumentValidator;
use crate::panic::guarded;
use crate::registry::ToolRegistry;
use crate::validation::{SchemaError, SchemaErrorKind, ToolSchemaError};

/// [`DispatchBuilder::try_build`](crate::DispatchBuilder::try_build) found tools whose schema a validator refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// The refused schemas, each with its tool and the offending keyword.
    pub invalid_schemas: Vec<ToolSchemaError>,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write_schema_errors(f, &self.invalid_schemas)
    }
}

impl std::error::Error for BuildError {}

pub(crate) fn write_schema_errors(
    f: &mut std::fmt::Formatter<'_>,
    errors: &[ToolSchemaError],
) -> std::fmt::Result {
    f.write_str("invalid parameter schemas: ")?;
    for (index, error) in errors.iter().enumerate() {
        if index > 0 {
            f.write_str("; ")?;
        }
        write!(f, "{error}")?;
    }
    Ok(())
}

/// Lets every validator prepare every registered tool; collects what they refuse.
pub(crate) fn prepare_tools(
    registry: &ToolRegistry,
    validators: &[Arc<dyn ArgumentValidator>],
) -> Vec<ToolSchemaError> {
    let tools = registry.snapshot();
    tools
        .iter()
        .flat_map(|tool| {
            validators
                .iter()
                .filter_map(move |validator| prepare_tool(validator.as_ref(), tool))
        })
        .collect()
}

/// One validator's verdict on one tool, a panic counting as a refusal.
pub(crate) fn prepare_tool(
    validator: &dyn ArgumentValidator,
    tool: &ToolDefinition,
) -> Option<ToolSchemaError> {
    let verdict = guarded(|| validator.prepare(tool)).unwrap_or_else(|panic| {
        Err(SchemaError::new(
            SchemaErrorKind::Invalid,
            "",
            format!("the validator panicked while preparing the schema: {panic}"),
        ))
    });
    verdict.err().map(|error| ToolSchemaError {
        tool: tool.name().to_owned(),
        error,
    })
}
