//! [`Disclosure`]: which tools one search-mode turn shows the model.
//!
//! [`ToolSearch::disclose`] is the whole decision, as one function of its inputs:
//!
//! ```text
//! input list (granted, narrowed, snapshot order)
//!   ├─ ranked against the turn query: the top k with a score above zero
//!   ├─ ∪ the session's activated names
//!   └─ ∩ the input list, kept in input order          ─► Disclosure::tools
//! + the generated `search_tools` tool                   ─► Disclosure::search_tool
//! ```
//!
//! A tool given twice in the input list is listed once, at its first place.
//!
//! It fails closed: whatever goes wrong (a snapshot over the index cap, an input tool the index
//! does not know, the reserved name in the input list, a scorer that errs, panics or returns a
//! non-finite score) the disclosure is the full input list, with a [`FullDisclosureReason`] the
//! run turns into an event. Never fewer tools than a working search would show, never a tool
//! outside the input list.

use std::collections::HashMap;

use crate::definition::ToolDefinition;

use super::activated::SharedActivatedTools;
use super::full_disclosure::FullDisclosureReason;
use super::reserved_name::check_reserved_name;
use super::search_tool::search_tools_definition;
use super::tool_search::{Eligible, ToolSearch};

/// The tools one turn shows the model.
#[derive(Clone, Debug)]
pub struct Disclosure {
    tools: Vec<ToolDefinition>,
    search_tool: Option<ToolDefinition>,
    full: Option<FullDisclosureReason>,
    query_truncated: bool,
}

impl Disclosure {
    /// The disclosed tools of the input list, in input order, each once.
    pub fn tools(&self) -> &[ToolDefinition] {
        &self.tools
    }

    /// The generated `search_tools` tool; `None` when the whole input list is disclosed.
    pub fn search_tool(&self) -> Option<&ToolDefinition> {
        self.search_tool.as_ref()
    }

    /// Why the whole input list is disclosed, when it is.
    pub fn full_disclosure_reason(&self) -> Option<&FullDisclosureReason> {
        self.full.as_ref()
    }

    /// True when the turn query was cut to the byte limit before ranking.
    pub fn query_truncated(&self) -> bool {
        self.query_truncated
    }

    /// What the provider request lists: the disclosed tools, then `search_tools`.
    pub fn request_tools(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .chain(self.search_tool.as_ref())
            .cloned()
            .collect()
    }

    fn full(input: &[ToolDefinition], reason: FullDisclosureReason) -> Self {
        Self {
            tools: once_each(input),
            search_tool: None,
            full: Some(reason),
            query_truncated: false,
        }
    }
}

/// `tools` with each definition listed once, at its first place. Two different definitions
/// that share a name both stay: which one a call would reach is not this list's to decide.
fn once_each(tools: &[ToolDefinition]) -> Vec<ToolDefinition> {
    let mut seen: HashMap<&str, Vec<&ToolDefinition>> = HashMap::with_capacity(tools.len());
    tools
        .iter()
        .filter(|&tool| {
            let same_name = seen.entry(tool.name()).or_default();
            let first = !same_name.iter().any(|earlier| earlier.ptr_eq(tool));
            if first {
                same_name.push(tool);
            }
            first
        })
        .cloned()
        .collect()
}

impl ToolSearch {
    /// Decides what one search-mode turn discloses.
    ///
    /// `input` is the turn's tool list after the grant and narrowing, in snapshot order;
    /// `query` is the turn input to rank against; `activated` is the session's list, which the
    /// returned `search_tools` tool writes to when it runs. Reading `activated` is the only
    /// access to outside state, and it is read-only here.
    ///
    /// ```
    /// use prism::ToolDefinition;
    /// use prism::search::{SearchConfig, SearchLimits, SharedActivatedTools};
    /// use serde_json::Value;
    ///
    /// let tool = |name: &str, description: &str| {
    ///     ToolDefinition::builder(name).description(description).run_sync(|_, _| Ok(Value::Null))
    /// };
    /// let input = vec![
    ///     tool("send_email", "Sends an email."),
    ///     tool("weather", "Weather forecasts."),
    ///     tool("stocks", "Share prices."),
    /// ];
    /// let search = SearchConfig::default().index(&input);
    /// let activated = SharedActivatedTools::default();
    /// activated.activate_all(["stocks"]);
    ///
    /// let turn = search.disclose(&input, "Will it snow? Check the weather", &activated);
    /// let names: Vec<_> = turn.request_tools().iter().map(|t| t.name().to_owned()).collect();
    /// assert_eq!(names, ["weather", "stocks", "search_tools"]);
    /// assert!(turn.full_disclosure_reason().is_none());
    /// ```
    pub fn disclose(
        &self,
        input: &[ToolDefinition],
        query: &str,
        activated: &SharedActivatedTools,
    ) -> Disclosure {
        if check_reserved_name(input).is_err() {
            return Disclosure::full(input, FullDisclosureReason::ReservedName);
        }
        let index = match self.index() {
            Ok(index) => index,
            Err(reason) => return Disclosure::full(input, reason.clone()),
        };
        let eligible = match self.eligible(input) {
            Ok(eligible) => eligible,
            Err(reason) => return Disclosure::full(input, reason),
        };
        let results = match self.search_eligible(query, self.limits().top_k(), &eligible) {
            Ok(results) => results,
            Err(reason) => return Disclosure::full(input, reason),
        };
        let mut selected = Eligible::with_capacity(index.len());
        for hit in results.hits() {
            selected.insert(hit.position as usize);
        }
        for name in activated.snapshot().names() {
            match index.position(name) {
                Some(position) if eligible.contains(position as usize) => {
                    selected.insert(position as usize);
                }
                _ => {}
            }
        }
        // Eligible positions are the input's tools in input order, each once; the indexed tool
        // at a position is the input's own definition (checked when they were found).
        let tools = eligible
            .positions()
            .iter()
            .filter(|&&position| selected.contains(position as usize))
            .map(|&position| index.tools()[position as usize].clone())
            .collect();
        Disclosure {
            tools,
            search_tool: Some(search_tools_definition(
                self.clone(),
                eligible,
                activated.clone(),
            )),
            full: None,
            query_truncated: results.query_truncated(),
        }
    }
}
