//! [`prepare_tools`]: a turn's tools named and lowered for one provider, as a [`ToolTable`].
//!
//! Every wire format starts a request the same way: each described tool gets the name the
//! provider accepts and its parameters in the provider's dialect, and whatever the lowering had
//! to change is written down. Lowered schemas come from a [`LoweringCache`], so a tool is lowered
//! once per definition however many turns describe it.

use std::sync::Arc;

use crate::definition::ToolDefinition;
use crate::provider::names::{NameRule, ToolNames};
use crate::provider::wire::{EncodeError, EncodeNote, PreparedTool, RestoreArguments, ToolTable};
use crate::schema::{Dialect, LoweredSchema, LoweringCache};

impl RestoreArguments for LoweredSchema {
    fn restore_arguments(&self, arguments: &mut serde_json::Value) {
        LoweredSchema::restore_arguments(self, arguments);
    }
}

/// A turn's tools ready for one wire format, and what lowering changed.
#[derive(Clone, Debug)]
pub struct PreparedTools {
    /// The tools, named and lowered, in request order.
    pub table: ToolTable,
    /// Each change: a keyword dropped or rewritten, a strict tool sent non-strict and why.
    pub notes: Vec<EncodeNote>,
}

/// Names and lowers `tools` for a provider whose tool names follow `rule` and whose schemas speak
/// `dialect`.
///
/// A schema that cannot be lowered at all is an error naming the tool and the place in its
/// schema; nothing is sent silently changed.
///
/// ```
/// use prism::ToolDefinition;
/// use prism::provider::names::NameRule;
/// use prism::provider::prepare::prepare_tools;
/// use prism::schema::{Dialect, LoweringCache};
/// use serde_json::{json, Value};
///
/// let refund = ToolDefinition::builder("billing.refund")
///     .description("Refunds an order.")
///     .parameters(json!({
///         "type": "object",
///         "properties": {"order": {"type": "string"}, "note": {"type": "string"}},
///         "required": ["order"]
///     }))
///     .run_sync(|args: &Value, _| Ok(args.clone()));
/// let cache = LoweringCache::default();
/// let prepared = prepare_tools(
///     &[refund],
///     Dialect::OpenAiChat { strict: true },
///     NameRule::OpenAi,
///     &cache,
/// )
/// .unwrap();
/// let tool = &prepared.table.tools()[0];
/// assert_eq!(tool.wire_name, "billing_refund");
/// assert!(tool.strict);
///
/// // A strict call's null for the optional `note` means "absent" to the tool.
/// let mut arguments = json!({"order": "A1", "note": null});
/// prepared.table.restore_arguments("billing.refund", &mut arguments);
/// assert_eq!(arguments, json!({"order": "A1"}));
/// ```
pub fn prepare_tools(
    tools: &[ToolDefinition],
    dialect: Dialect,
    rule: NameRule,
    cache: &LoweringCache,
) -> Result<PreparedTools, EncodeError> {
    let names = ToolNames::new(rule, tools.iter().map(ToolDefinition::name))
        .map_err(|error| EncodeError::new(error.to_string()))?;
    let mut notes = Vec::new();
    let mut prepared = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = tool.name();
        let lowered = cache.lower(tool, dialect).map_err(|error| {
            EncodeError::new(format!(
                "tool `{name}`: its parameters cannot be sent: {error}"
            ))
        })?;
        for downgrade in lowered.downgrades() {
            notes.push(EncodeNote {
                at: format!("tool `{name}`"),
                note: downgrade.to_string(),
            });
        }
        if let Some(reason) = lowered.non_strict_reason() {
            notes.push(EncodeNote {
                at: format!("tool `{name}`"),
                note: format!("sent without strict mode: {reason}"),
            });
        }
        let wire_name = names.wire(name).unwrap_or(name).to_owned();
        prepared.push(PreparedTool {
            name: name.to_owned(),
            wire_name,
            description: tool.description().map(str::to_owned),
            parameters: lowered.schema().clone(),
            strict: lowered.strict(),
            restore: Some(Arc::clone(&lowered) as Arc<dyn RestoreArguments>),
        });
    }
    Ok(PreparedTools {
        table: ToolTable::new(prepared)?.with_name_rule(rule),
        notes,
    })
}
