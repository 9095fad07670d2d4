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
//! It fails closed: whatever goes wrong (a snapshot over the index cap, an input tool the index
//! does not know, the reserved name in the input list, a scorer that errs, panics or returns a
//! non-finite score) the disclosure is the full input list, with a [`FullDisclosureReason`] the
//! run turns into an event. Never fewer tools than a working search would show, never a tool
//! outside the input list.

use std::fmt;
use std::sync::Arc;

use crate::definition::ToolDefinition;
use crate::redact::SecretRedactor;

use super::activated::SharedActivatedTools;
use super::index::IndexError;
use super::limits::{MAX_INDEXED_TOOLS, cut_at_char_boundary};
use super::search_tool::{SEARCH_TOOLS_NAME, search_tools_definition};
use super::tool_search::{Eligible, MAX_SCORER_MESSAGE_BYTES, ToolSearch};

/// Why a turn disclosed its whole input list instead of a ranked subset.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FullDisclosureReason {
    /// The snapshot has more tools than one index may hold.
    TooManyTools {
        /// How many tools the snapshot has.
        count: usize,
    },
    /// Two tools of the snapshot share a name, so names cannot identify them.
    DuplicateName(Arc<str>),
    /// A tool of the input list is not in the indexed snapshot.
    NotIndexed(Arc<str>),
    /// The input list contains a tool named `search_tools`.
    ReservedName,
    /// The scorer returned an error (its message, whole: a run reports it redacted, then cut
    /// to [`MAX_SCORER_MESSAGE_BYTES`](super::MAX_SCORER_MESSAGE_BYTES)).
    ScorerFailed(Box<str>),
    /// The scorer panicked.
    ScorerPanicked,
    /// The scorer returned a score that is not a finite number.
    InvalidScore,
}

impl FullDisclosureReason {
    /// A stable machine-readable code, e.g. `"too_many_tools"`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooManyTools { .. } => "too_many_tools",
            Self::DuplicateName(_) => "duplicate_tool_name",
            Self::NotIndexed(_) => "tool_not_indexed",
            Self::ReservedName => "reserved_tool_name",
            Self::ScorerFailed(_) => "scorer_failed",
            Self::ScorerPanicked => "scorer_panicked",
            Self::InvalidScore => "invalid_score",
        }
    }
}

impl FullDisclosureReason {
    /// The message a run reports: redacted, the scorer's message cut to
    /// [`MAX_SCORER_MESSAGE_BYTES`] only once redacted, so that a cut secret cannot slip past.
    pub(crate) fn redacted_message(&self, redactor: &SecretRedactor) -> String {
        let bounded;
        let reason = match self {
            Self::ScorerFailed(message) => {
                let redacted = redactor.redact_str(message);
                let (cut, _) = cut_at_char_boundary(&redacted, MAX_SCORER_MESSAGE_BYTES);
                bounded = Self::ScorerFailed(cut.into());
                &bounded
            }
            other => other,
        };
        redactor.redact_str(&reason.to_string()).into_owned()
    }
}

impl fmt::Display for FullDisclosureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyTools { count } => write!(
                f,
                "{count} tools exceed the search index limit of {MAX_INDEXED_TOOLS}; every tool is disclosed"
            ),
            Self::DuplicateName(name) => {
                write!(
                    f,
                    "two tools share the name `{name}`; every tool is disclosed"
                )
            }
            Self::NotIndexed(name) => write!(
                f,
                "tool `{name}` is not in the search index; every tool is disclosed"
            ),
            Self::ReservedName => write!(
                f,
                "a host tool uses the reserved name `{SEARCH_TOOLS_NAME}`; every tool is disclosed"
            ),
            Self::ScorerFailed(message) => {
                write!(f, "tool scoring failed: {message}; every tool is disclosed")
            }
            Self::ScorerPanicked => f.write_str("tool scoring panicked; every tool is disclosed"),
            Self::InvalidScore => {
                f.write_str("tool scoring returned a non-finite score; every tool is disclosed")
            }
        }
    }
}

impl From<IndexError> for FullDisclosureReason {
    fn from(error: IndexError) -> Self {
        match error {
            IndexError::TooManyTools { count } => Self::TooManyTools { count },
            IndexError::DuplicateName(name) => Self::DuplicateName(name),
        }
    }
}

/// The tools one turn shows the model.
#[derive(Clone, Debug)]
pub struct Disclosure {
    tools: Vec<ToolDefinition>,
    search_tool: Option<ToolDefinition>,
    full: Option<FullDisclosureReason>,
    query_truncated: bool,
}

impl Disclosure {
    /// The disclosed tools of the input list, in input order.
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
            tools: input.to_vec(),
            search_tool: None,
            full: Some(reason),
            query_truncated: false,
        }
    }
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
    /// use prism_tools::ToolDefinition;
    /// use prism_tools::search::{SearchConfig, SearchLimits, SharedActivatedTools};
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
        if input.iter().any(|tool| tool.name() == SEARCH_TOOLS_NAME) {
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
        let tools = input
            .iter()
            .zip(eligible.positions())
            .filter(|&(_, &position)| selected.contains(position as usize))
            .map(|(tool, _)| tool.clone())
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
