//! [`FullDisclosureReason`]: why a search-mode turn showed its whole input list instead of a
//! ranked subset. Ranking returns it on any failure, and the run reports it as an event.

use std::fmt;
use std::sync::Arc;

use crate::redact::SecretRedactor;

use super::index::IndexError;
use super::limits::{MAX_INDEXED_TOOLS, cut_at_char_boundary};
use super::reserved_name::SEARCH_TOOLS_NAME;

/// The most bytes of a scorer's error message a run reports, cut once redacted (the
/// [`FullDisclosureReason`] itself keeps it whole).
pub const MAX_SCORER_MESSAGE_BYTES: usize = 200;

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
