//! Disclosure: which of a turn's visible tools are *described* to the provider.
//!
//! This is the last step of turn assembly (grant, then narrowing, then disclosure). It chooses a
//! subset to describe and nothing else: the result is intersected with the visible list and kept
//! in snapshot order, so a disclosure can never add a host tool, and a granted tool that was not
//! described stays callable by name (disclosure describes; the grant authorises).
//!
//! [`DisclosureMode`] picks the step, per agent or per run (the run wins):
//!
//! | mode | described each turn |
//! | --- | --- |
//! | [`All`](DisclosureMode::All) (default) | every visible tool: the request is byte for byte the one a run without the setting sends |
//! | [`Search`](DisclosureMode::Search) | the `top_k` visible tools that best match the latest user input, the tools the session activated, and the generated `search_tools` tool (see [`search`](crate::search)) |
//! | [`Custom`](DisclosureMode::Custom) | the names a host's [`ToolDisclosure`] returns, kept only when visible |

use std::fmt;
use std::sync::Arc;

use crate::definition::ToolDefinition;
use crate::search::DEFAULT_TOP_K;

/// How the tools of each turn reach the provider request.
///
/// ```
/// use prism::RunOptions;
/// use prism::run::{AgentConfig, DisclosureMode};
///
/// // Large catalogues: describe the 8 best matches and let the model search for the rest.
/// let config = AgentConfig::new().tools_disclosure(DisclosureMode::Search { top_k: 8 });
/// // One run that needs every schema, whatever the agent says.
/// let options = RunOptions::new().tools_disclosure(DisclosureMode::All);
/// # let _ = (config, options);
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum DisclosureMode {
    /// Describe every visible tool (the default).
    #[default]
    All,
    /// Describe the `top_k` best matches for the turn's input (clamped to
    /// `1..=`[`MAX_TOP_K`](crate::search::MAX_TOP_K)), the session's activated tools, and
    /// `search_tools`. How tools are indexed and scored comes from the `tool_search` setting.
    Search {
        /// Tools described by score each turn.
        top_k: usize,
    },
    /// Describe what a host's own step chooses.
    Custom(Arc<dyn ToolDisclosure>),
}

impl DisclosureMode {
    /// Search mode with the default top-k ([`DEFAULT_TOP_K`], 16).
    pub fn search() -> Self {
        Self::Search {
            top_k: DEFAULT_TOP_K,
        }
    }

    /// A host's own disclosure step.
    pub fn custom(disclosure: impl ToolDisclosure) -> Self {
        Self::Custom(Arc::new(disclosure))
    }
}

impl fmt::Debug for DisclosureMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::All => f.write_str("All"),
            Self::Search { top_k } => f.debug_struct("Search").field("top_k", top_k).finish(),
            Self::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// What a custom disclosure step sees.
#[derive(Clone, Copy, Debug)]
pub struct DisclosureRequest<'a> {
    /// The provider turn, from 1.
    pub turn: u32,
    /// The latest user input, to rank tools against.
    pub input: Option<&'a str>,
    /// The tools visible this turn, in snapshot order.
    pub tools: &'a [ToolDefinition],
}

/// Chooses the tools described to the provider this turn ([`DisclosureMode::Custom`]).
///
/// ```
/// use std::sync::Arc;
/// use prism::RunOptions;
/// use prism::run::{DisclosureMode, DisclosureRequest, ToolDisclosure};
///
/// /// Describes the first three visible tools.
/// struct FirstThree;
///
/// impl ToolDisclosure for FirstThree {
///     fn disclose(&self, request: DisclosureRequest<'_>) -> Vec<Arc<str>> {
///         request.tools.iter().take(3).map(|tool| Arc::clone(tool.name_arc())).collect()
///     }
/// }
///
/// let options = RunOptions::new().tools_disclosure(DisclosureMode::custom(FirstThree));
/// # let _ = options;
/// ```
pub trait ToolDisclosure: Send + Sync + 'static {
    /// The names to describe; names outside `request.tools` are ignored. A panic describes every
    /// visible tool.
    fn disclose(&self, request: DisclosureRequest<'_>) -> Vec<Arc<str>>;
}
