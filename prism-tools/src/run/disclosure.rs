//! Disclosure: which of a turn's visible tools are *described* to the provider.
//!
//! This is the last step of turn assembly (grant, then narrowing, then disclosure). It chooses a
//! subset to describe and nothing else: the result is intersected with the visible list and kept
//! in snapshot order, so a disclosure can never add a tool, and a granted tool that was not
//! described stays callable by name (disclosure describes; the grant authorises). The default,
//! [`DiscloseAll`], describes every visible tool, byte for byte the same as having no disclosure
//! step at all. Large catalogues plug a ranking mode in here.

use std::sync::Arc;

use crate::definition::ToolDefinition;

/// What a disclosure step sees.
#[derive(Clone, Copy, Debug)]
pub struct DisclosureRequest<'a> {
    /// The provider turn, from 1.
    pub turn: u32,
    /// The latest user input, to rank tools against.
    pub input: Option<&'a str>,
    /// The tools visible this turn, in snapshot order.
    pub tools: &'a [ToolDefinition],
}

/// Chooses the tools described to the provider this turn.
pub trait ToolDisclosure: Send + Sync + 'static {
    /// The names to describe; names outside `request.tools` are ignored.
    fn disclose(&self, request: DisclosureRequest<'_>) -> Vec<Arc<str>>;

    /// True when this step describes every visible tool, letting the run skip the intersection.
    fn is_all(&self) -> bool {
        false
    }
}

/// Describes every visible tool: the default.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiscloseAll;

impl ToolDisclosure for DiscloseAll {
    fn disclose(&self, request: DisclosureRequest<'_>) -> Vec<Arc<str>> {
        request
            .tools
            .iter()
            .map(|tool| Arc::clone(tool.name_arc()))
            .collect()
    }

    fn is_all(&self) -> bool {
        true
    }
}
