//! [`RunDisclosure`]: a run's disclosure step, resolved once at its start and applied each turn.
//!
//! At the start of a search-mode run, before anything is written:
//!
//! 1. a host tool named `search_tools` in the run's snapshot fails the run
//!    ([`RunError::ReservedToolName`]): the name belongs to the generated tool;
//! 2. dispatcher filters that refuse `search_tools` fail it too ([`RunError::Misconfigured`]):
//!    the model would be shown a tool it can never call;
//! 3. the run takes the [`ToolSearch`] over its snapshot from the agent's cache (building it on a
//!    miss). The index covers the run's snapshot and nothing else, so with `tool_names` set it
//!    holds exactly the granted tools.
//!
//! Each turn then ranks the turn's visible tools (granted, narrowed) against the **latest user
//! input** of the transcript. The model's own text is left out on purpose: it changes on every
//! turn, so ranking on it would reshuffle the described tools (and the provider's prompt-cache
//! prefix) turn after turn, while the user's request is what the tools must serve. The model asks
//! for anything else with `search_tools`, whose finds are activated for the session and described
//! from the next turn on. (In the generate-validate-revise loop the latest user row is the
//! validator's revision feedback once there is one.) A turn with no visible tools describes
//! nothing, not even `search_tools`: there would be nothing to find.
//!
//! `search_tools` goes through the same dispatcher as every other call, carried by that turn's
//! scope only: the builder's filters, trust and permission policies and validators all see it, so
//! a host policy that admits a fixed list of names must admit `search_tools` too. It never waits
//! for approval: it only reads the index and activates names, and activation authorises nothing.

use std::collections::HashSet;
use std::sync::Arc;

use crate::definition::ToolDefinition;
use crate::panic::guarded;
use crate::run::config::Resolved;
use crate::run::snapshot::RunTools;
use crate::run::{Agent, DisclosureMode, DisclosureRequest, RunError, ToolDisclosure};
use crate::search::{
    FullDisclosureReason, SEARCH_TOOLS_NAME, SharedActivatedTools, ToolSearch, check_reserved_name,
};

/// How one run describes tools.
pub(crate) enum RunDisclosure {
    /// Every visible tool.
    All,
    /// A host's step, intersected with the visible tools.
    Custom(Arc<dyn ToolDisclosure>),
    /// Ranked by the run's search, plus the session's activated tools and `search_tools`.
    Search {
        search: ToolSearch,
        activated: SharedActivatedTools,
    },
}

/// What one turn describes.
pub(crate) struct Described {
    /// The request's tools, in request order (`search_tools` last, when present).
    pub(crate) tools: Vec<ToolDefinition>,
    /// The generated `search_tools`, dispatchable during this turn only.
    pub(crate) search_tool: Option<ToolDefinition>,
    /// Why a search-mode turn described its whole visible list, when it did.
    pub(crate) full_disclosure: Option<FullDisclosureReason>,
}

impl Described {
    fn plain(tools: Vec<ToolDefinition>) -> Self {
        Self {
            tools,
            search_tool: None,
            full_disclosure: None,
        }
    }
}

impl RunDisclosure {
    /// Resolves the run's mode; fails on a reserved name or on filters that refuse
    /// `search_tools`.
    pub(crate) fn prepare(
        settings: &Resolved,
        tools: &RunTools,
        agent: &Agent,
        activated: &SharedActivatedTools,
    ) -> Result<Self, RunError> {
        match &settings.disclosure {
            DisclosureMode::All => Ok(Self::All),
            DisclosureMode::Custom(step) => Ok(Self::Custom(Arc::clone(step))),
            DisclosureMode::Search { top_k } => {
                check_reserved_name(tools.tools()).map_err(|_| RunError::ReservedToolName)?;
                if !agent.dispatcher.filters_allow(SEARCH_TOOLS_NAME) {
                    return Err(RunError::Misconfigured {
                        message: format!(
                            "tools are disclosed by search, but the dispatcher's filters refuse \
                             `{SEARCH_TOOLS_NAME}`; allow that name or disclose every tool"
                        ),
                    });
                }
                let config = settings.tool_search.as_ref();
                let search = agent.search_cache.search_for(tools.tools(), config, *top_k);
                Ok(Self::Search {
                    search,
                    activated: activated.clone(),
                })
            }
        }
    }

    /// What turn `turn` describes out of `visible` (in snapshot order), ranked against `input`.
    pub(crate) fn describe(
        &self,
        turn: u32,
        input: Option<&str>,
        visible: &[ToolDefinition],
    ) -> Described {
        match self {
            Self::All => Described::plain(visible.to_vec()),
            Self::Custom(step) => {
                let request = DisclosureRequest {
                    turn,
                    input,
                    tools: visible,
                };
                // A failing step describes every visible tool: never zero, never wider.
                match guarded(|| step.disclose(request)) {
                    Ok(names) => {
                        let keep: HashSet<&str> = names.iter().map(|name| &**name).collect();
                        let described = visible
                            .iter()
                            .filter(|tool| keep.contains(tool.name()))
                            .cloned()
                            .collect();
                        Described::plain(described)
                    }
                    // The panic's text is not logged: nothing redacts this log.
                    Err(_) => {
                        tracing::error!(target: "prism_tools", "the disclosure step panicked; describing every visible tool");
                        Described::plain(visible.to_vec())
                    }
                }
            }
            Self::Search { search, activated } => {
                if visible.is_empty() {
                    return Described::plain(Vec::new());
                }
                let disclosure = search.disclose(visible, input.unwrap_or_default(), activated);
                Described {
                    tools: disclosure.request_tools(),
                    search_tool: disclosure.search_tool().cloned(),
                    full_disclosure: disclosure.full_disclosure_reason().cloned(),
                }
            }
        }
    }
}
