//! Turn assembly: from the run's grant to the tools one provider turn is sent.
//!
//! ```text
//! run grant (snapshot) ─► narrowing (callback, clamped to the grant) ─► disclosure (describes a subset)
//!                                   │                                          │
//!                                   └─► visible set: what dispatch allows      └─► provider schemas
//! ```
//!
//! In search mode the request also lists the generated `search_tools`, which dispatch reaches
//! during that turn only (see [`RunDisclosure`]).
//!
//! Every step keeps snapshot order and can only remove, so identical choices give identical
//! schema bytes and nothing downstream can widen what is upstream.

use std::collections::HashSet;

use crate::definition::ToolDefinition;
use crate::grant::ToolGrant;
use crate::panic::guarded_future;
use crate::redact::SecretRedactor;
use crate::run::config::Resolved;
use crate::run::run_disclosure::RunDisclosure;
use crate::run::snapshot::RunTools;
use crate::run::{NarrowingRequest, RunError, ToolsMetadata};
use crate::search::FullDisclosureReason;

/// The tools of one provider turn.
#[derive(Clone, Debug)]
pub(crate) struct TurnTools {
    /// Described to the provider, in snapshot order (then `search_tools`, in search mode).
    pub(crate) described: Vec<ToolDefinition>,
    /// The generated `search_tools`, which dispatch reaches during this turn only.
    pub(crate) search_tool: Option<ToolDefinition>,
    /// Why a search-mode turn described every visible tool, when it did.
    pub(crate) full_disclosure: Option<FullDisclosureReason>,
    /// What dispatch allows this turn (everything granted when hidden calls are allowed).
    pub(crate) visible: ToolGrant,
    /// What `search_tools` searches this turn: the narrowed tools (everything granted when
    /// there is no narrowing).
    pub(crate) searched: ToolGrant,
    /// Count and hash of `described`.
    pub(crate) metadata: ToolsMetadata,
    /// Names narrowing returned outside the grant, dropped.
    pub(crate) clamped: Vec<String>,
}

/// What the turn is assembled from, besides the grant and the settings.
pub(crate) struct TurnInput<'a> {
    pub(crate) turn: u32,
    pub(crate) last_assistant_text: Option<&'a str>,
    pub(crate) latest_input: Option<&'a str>,
}

/// Narrows, clamps and discloses the tools of one turn.
pub(crate) async fn assemble(
    tools: &RunTools,
    settings: &Resolved,
    disclosure: &RunDisclosure,
    input: TurnInput<'_>,
    redactor: &SecretRedactor,
) -> Result<TurnTools, RunError> {
    let (visible, clamped) = match &settings.narrowing {
        None => (tools.tools().to_vec(), Vec::new()),
        Some(narrowing) => {
            let request = NarrowingRequest {
                turn: input.turn,
                last_assistant_text: input.last_assistant_text,
                tool_ids: tools.names(),
            };
            let answer = guarded_future(|| narrowing.narrow(request))
                .await
                .unwrap_or_else(|panic| Err(format!("the narrowing callback panicked: {panic}")));
            let chosen = answer.map_err(|message| RunError::Narrowing {
                turn: input.turn,
                message: redactor.redact_str(&message).into_owned(),
            })?;
            clamp(tools, &chosen)
        }
    };

    let described = disclosure.describe(input.turn, input.latest_input, &visible);
    // `search_tools` is part of the request, so the hash covers it.
    let metadata = ToolsMetadata::of_tools(&described.tools);
    let searched = match &settings.narrowing {
        None => ToolGrant::All,
        Some(_) => ToolGrant::only(visible.iter().map(ToolDefinition::name)),
    };
    let visible = if settings.allow_hidden_tool_calls {
        ToolGrant::All
    } else {
        ToolGrant::only(visible.iter().map(ToolDefinition::name))
    };
    Ok(TurnTools {
        described: described.tools,
        search_tool: described.search_tool,
        full_disclosure: described.full_disclosure,
        visible,
        searched,
        metadata,
        clamped,
    })
}

/// Keeps the granted names of `chosen` (in snapshot order) and lists the others, once each.
fn clamp(tools: &RunTools, chosen: &[String]) -> (Vec<ToolDefinition>, Vec<String>) {
    let granted: HashSet<&str> = tools.names().iter().map(|name| &**name).collect();
    let mut dropped: Vec<String> = Vec::new();
    let mut keep: HashSet<&str> = HashSet::with_capacity(chosen.len());
    for name in chosen {
        if granted.contains(name.as_str()) {
            keep.insert(name);
        } else if !dropped.contains(name) {
            dropped.push(name.clone());
        }
    }
    (tools.subset(&keep), dropped)
}
