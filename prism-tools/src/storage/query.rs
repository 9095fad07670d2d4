//! Reading a ledger back: [`RecordQuery`] selects rows by run, session and call id;
//! [`LedgerReader`] returns them in the order they were appended.

use std::fmt;

use crate::dispatch::{InMemoryLedger, LedgerError, ToolCallRecord};
use crate::effects::BoxFuture;

/// Which rows to read: every field that is set must match. [`RecordQuery::all`] sets none.
///
/// ```
/// use prism::storage::RecordQuery;
///
/// let query = RecordQuery::run("run-7").and_call("call_2");
/// assert_eq!(query.run_id(), Some("run-7"));
/// assert_eq!(query.session_id(), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordQuery {
    run_id: Option<String>,
    session_id: Option<String>,
    tool_call_id: Option<String>,
}

impl RecordQuery {
    /// Every row of the ledger.
    pub fn all() -> Self {
        Self::default()
    }

    /// The rows of one run.
    pub fn run(run_id: impl Into<String>) -> Self {
        Self::all().and_run(run_id)
    }

    /// The rows of one session.
    pub fn session(session_id: impl Into<String>) -> Self {
        Self::all().and_session(session_id)
    }

    /// The rows of one call id.
    pub fn call(tool_call_id: impl Into<String>) -> Self {
        Self::all().and_call(tool_call_id)
    }

    /// Also requires the run id.
    pub fn and_run(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// Also requires the session id.
    pub fn and_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Also requires the call id.
    pub fn and_call(mut self, tool_call_id: impl Into<String>) -> Self {
        self.tool_call_id = Some(tool_call_id.into());
        self
    }

    /// The run id rows must have.
    pub fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }

    /// The session id rows must have.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The call id rows must have.
    pub fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }

    /// True when `record` is selected.
    pub fn matches(&self, record: &ToolCallRecord) -> bool {
        fn same(wanted: &Option<String>, actual: Option<&str>) -> bool {
            wanted
                .as_deref()
                .is_none_or(|wanted| Some(wanted) == actual)
        }
        same(&self.run_id, record.run_id.as_deref())
            && same(&self.session_id, record.session_id.as_deref())
            && same(&self.tool_call_id, Some(record.tool_call_id.as_str()))
    }

    /// The set fields as (column, value) pairs, for backends that build SQL.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn columns(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("run_id", self.run_id.as_deref()),
            ("session_id", self.session_id.as_deref()),
            ("tool_call_id", self.tool_call_id.as_deref()),
        ]
        .into_iter()
        .filter_map(|(column, value)| Some((column, value?)))
    }
}

/// Reads rows back from a ledger, in append order.
pub trait LedgerReader: Send + Sync + 'static {
    /// The rows `query` selects, oldest first. Rows appended before this call are included, even
    /// if no flush happened in between.
    ///
    /// A stored row that cannot be decoded (written by a newer library, edited by hand, or
    /// nested deeper than serde_json reads, 128 levels) is left out, with an error logged
    /// through `tracing` that says where it is and why; it never hides the rows around it. Rows
    /// the dispatcher writes always read back: its depth limits stay under that bound
    /// ([`Limits::MAX_DEPTH`](crate::Limits::MAX_DEPTH)). An `Err` means the ledger itself could
    /// not be read.
    fn read<'a>(
        &'a self,
        query: &'a RecordQuery,
    ) -> BoxFuture<'a, Result<Vec<ToolCallRecord>, LedgerError>>;
}

/// Decodes one stored row from its JSON text, or leaves it out: a row that cannot be decoded
/// (not UTF-8 included) is logged with its `place` (e.g. `row 12`) and why, and the read goes
/// on without it.
pub(crate) fn decode_row(place: impl fmt::Display, text: &[u8]) -> Option<ToolCallRecord> {
    match serde_json::from_slice(text) {
        Ok(row) => Some(row),
        Err(error) => {
            tracing::error!(
                target: "prism_tools",
                "ledger {place} cannot be read and is left out: {error}"
            );
            None
        }
    }
}

impl LedgerReader for InMemoryLedger {
    fn read<'a>(
        &'a self,
        query: &'a RecordQuery,
    ) -> BoxFuture<'a, Result<Vec<ToolCallRecord>, LedgerError>> {
        let mut rows = self.records();
        rows.retain(|record| query.matches(record));
        Box::pin(std::future::ready(Ok(rows)))
    }
}
