//! [`ToolCallRecord`] and [`RunLedger`]: an audit trail of every call's lifecycle.
//!
//! The dispatcher appends one row per transition: `started` (with the arguments), `started` again
//! for each progress snapshot, then exactly one terminal row (`finished`, `error` or `blocked`).
//! Every row is redacted before the ledger sees it. Rows of one call are appended in order.
//!
//! [`RunLedger::append`] is synchronous and must not block: a durable ledger queues the row and
//! commits in batches on its own thread, reporting failures from [`RunLedger::flush`].

use std::fmt;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::call::{
    BlockReason, CallId, ContentRecord, OutputRecord, ResultRef, ToolOutcome, WrittenResult,
};
use crate::clock::Millis;
use crate::redact::SecretRedactor;

/// Who owns a run, copied into every row so multi-tenant ledgers can be queried and purged by
/// owner.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnershipScope {
    /// The tenant or organisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    /// The user on whose behalf the run acts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// The lifecycle status a row records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    /// The tool started (also used for progress snapshots: the call is still in flight).
    Started,
    /// The tool returned a value.
    Finished,
    /// The tool failed.
    Error,
    /// A guard refused the call.
    Blocked,
}

impl RecordStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "started",
            Self::Finished => "finished",
            Self::Error => "error",
            Self::Blocked => "blocked",
        }
    }
}

/// One ledger row.
///
/// Written with the spec's field names; a terminal row's `result` is the whole result, ids
/// included, as the call's [`ToolResult`](crate::ToolResult) is written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(from = "RecordRead")]
pub struct ToolCallRecord {
    /// The session.
    pub session_id: Option<Arc<str>>,
    /// The run.
    pub run_id: Option<Arc<str>>,
    /// The call.
    pub tool_call_id: CallId,
    /// The tool.
    pub tool_name: Arc<str>,
    /// The transition.
    pub status: RecordStatus,
    /// When the tool started (`started` rows).
    pub started_at: Option<Millis>,
    /// The arguments (`started` rows).
    pub arguments: Option<Value>,
    /// A progress value (progress snapshots).
    pub progress: Option<Value>,
    /// Progress detail (progress snapshots).
    pub progress_metadata: Option<Value>,
    /// When the progress was reported.
    pub progress_at: Option<Millis>,
    /// When the call ended (terminal rows).
    pub finished_at: Option<Millis>,
    /// How the call ended (terminal rows): the value, or the error. Written as `result`, with
    /// the row's `tool_call_id` and `tool_name`.
    pub outcome: Option<ToolOutcome>,
    /// On a terminal row whose tool returned content blocks or is marked
    /// [`untrusted_output`](crate::definition::ToolDefinition::untrusted_output): the records of
    /// the blocks, without their binary data, and the untrusted mark. Written inside `result`,
    /// as `content` and `untrusted`; `None` otherwise.
    pub output: Option<Box<OutputRecord>>,
    /// Which guard refused (`blocked` rows).
    pub reason: Option<BlockReason>,
    /// Who owns the run.
    pub ownership: Option<Arc<OwnershipScope>>,
    /// How many progress updates of the call were dropped (terminal rows; see
    /// [`Limits::progress_capacity`](crate::Limits::progress_capacity)). Written as
    /// `progressDropped`, and left out when 0.
    pub progress_dropped: u64,
}

/// A row as it is read; rows written before a field existed read it as its default.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecordRead {
    #[serde(default)]
    session_id: Option<Arc<str>>,
    #[serde(default)]
    run_id: Option<Arc<str>>,
    tool_call_id: CallId,
    tool_name: Arc<str>,
    status: RecordStatus,
    #[serde(default)]
    started_at: Option<Millis>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    progress: Option<Value>,
    #[serde(default)]
    progress_metadata: Option<Value>,
    #[serde(default)]
    progress_at: Option<Millis>,
    #[serde(default)]
    finished_at: Option<Millis>,
    #[serde(default, deserialize_with = "crate::call::optional_result")]
    result: Option<WrittenResult>,
    #[serde(default)]
    reason: Option<BlockReason>,
    #[serde(default)]
    ownership: Option<Arc<OwnershipScope>>,
    #[serde(default)]
    progress_dropped: u64,
}

impl From<RecordRead> for ToolCallRecord {
    fn from(read: RecordRead) -> Self {
        let (outcome, output) = read.result.unzip();
        Self {
            session_id: read.session_id,
            run_id: read.run_id,
            tool_call_id: read.tool_call_id,
            tool_name: read.tool_name,
            status: read.status,
            started_at: read.started_at,
            arguments: read.arguments,
            progress: read.progress,
            progress_metadata: read.progress_metadata,
            progress_at: read.progress_at,
            finished_at: read.finished_at,
            outcome,
            output: output.flatten(),
            reason: read.reason,
            ownership: read.ownership,
            progress_dropped: read.progress_dropped,
        }
    }
}

impl Serialize for ToolCallRecord {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RecordWire {
            call: CallWire {
                session_id: self.session_id.as_deref(),
                run_id: self.run_id.as_deref(),
                tool_call_id: &self.tool_call_id,
                tool_name: &self.tool_name,
            },
            status: self.status,
            started_at: self.started_at,
            arguments: self.arguments.as_ref(),
            progress: self.progress.as_ref(),
            progress_metadata: self.progress_metadata.as_ref(),
            progress_at: self.progress_at,
            finished_at: self.finished_at,
            result: self.outcome.as_ref().map(|outcome| {
                ResultRef::new(&self.tool_call_id, &self.tool_name, outcome)
                    .with_content(self.content(), self.is_untrusted())
            }),
            reason: self.reason,
            ownership: self.ownership.as_deref(),
            progress_dropped: self.progress_dropped,
        }
        .serialize(serializer)
    }
}

/// Whose call a row or an event is about, as both are written.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CallWire<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) run_id: Option<&'a str>,
    pub(super) tool_call_id: &'a CallId,
    pub(super) tool_name: &'a str,
}

/// How a row is written.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordWire<'a> {
    #[serde(flatten)]
    call: CallWire<'a>,
    status: RecordStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    started_at: Option<Millis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    progress: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    progress_metadata: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    progress_at: Option<Millis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finished_at: Option<Millis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<ResultRef<'a, ContentRecord>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<BlockReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ownership: Option<&'a OwnershipScope>,
    #[serde(skip_serializing_if = "is_zero")]
    progress_dropped: u64,
}

/// Counts written only when something was counted, so rows and events keep their usual shape.
pub(crate) fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl ToolCallRecord {
    /// A row with only the identifying fields set.
    pub fn new(tool_call_id: CallId, tool_name: Arc<str>, status: RecordStatus) -> Self {
        Self {
            session_id: None,
            run_id: None,
            tool_call_id,
            tool_name,
            status,
            started_at: None,
            arguments: None,
            progress: None,
            progress_metadata: None,
            progress_at: None,
            finished_at: None,
            outcome: None,
            output: None,
            reason: None,
            ownership: None,
            progress_dropped: 0,
        }
    }

    /// This row with every secret replaced in its tool name, arguments, progress, result and
    /// content records. The name is the one the call asked for, which the model chose.
    pub fn redacted(mut self, redactor: &SecretRedactor) -> Self {
        if redactor.is_empty() {
            return self;
        }
        if let std::borrow::Cow::Owned(name) = redactor.redact_str(&self.tool_name) {
            self.tool_name = name.into();
        }
        for value in [
            &mut self.arguments,
            &mut self.progress,
            &mut self.progress_metadata,
        ]
        .into_iter()
        .flatten()
        {
            redactor.redact_value_in_place(value);
        }
        if let Some(outcome) = &mut self.outcome {
            redactor.redact_outcome(outcome);
        }
        if let Some(output) = &mut self.output {
            redactor.redact_content_records(&mut output.content);
        }
        self
    }

    /// The records of the content blocks the tool returned (terminal rows only).
    pub fn content(&self) -> &[ContentRecord] {
        self.output.as_ref().map_or(&[], |output| &output.content)
    }

    /// Whether the row records the output of a tool whose output is untrusted.
    pub fn is_untrusted(&self) -> bool {
        self.output.as_ref().is_some_and(|output| output.untrusted)
    }
}

/// A ledger failure, reported by [`RunLedger::flush`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerError(pub String);

impl fmt::Display for LedgerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ledger failure: {}", self.0)
    }
}

impl std::error::Error for LedgerError {}

/// Receives ledger rows.
///
/// Rows are lent, not given: the dispatcher builds each row from parts it keeps using (the ids,
/// the result it returns), so a ledger that only writes or counts rows costs no copies, and one
/// that keeps them clones what it keeps.
pub trait RunLedger: Send + Sync + 'static {
    /// Takes one row. Must not block; a durable ledger queues a copy.
    fn append(&self, record: &ToolCallRecord);

    /// Waits until every appended row is stored, or reports why some are not: rows still
    /// waiting to be stored, rows lost, and the cause.
    fn flush(&self) -> Result<(), LedgerError> {
        Ok(())
    }
}

/// A ledger in memory; for tests and examples.
///
/// ```
/// use prism::dispatch::{InMemoryLedger, RunLedger};
///
/// let ledger = InMemoryLedger::new();
/// assert!(ledger.records().is_empty());
/// ```
#[derive(Clone, Default)]
pub struct InMemoryLedger(Arc<Mutex<Vec<ToolCallRecord>>>);

impl InMemoryLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every row, in append order.
    pub fn records(&self) -> Vec<ToolCallRecord> {
        self.lock().clone()
    }

    /// The rows of one call, in order.
    pub fn records_for_call(&self, id: &str) -> Vec<ToolCallRecord> {
        self.lock()
            .iter()
            .filter(|record| record.tool_call_id.as_str() == id)
            .cloned()
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ToolCallRecord>> {
        self.0.lock().unwrap_or_else(|poison| poison.into_inner())
    }
}

impl RunLedger for InMemoryLedger {
    fn append(&self, record: &ToolCallRecord) {
        self.lock().push(record.clone());
    }
}

impl fmt::Debug for InMemoryLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("InMemoryLedger")
            .field(&self.lock().len())
            .finish()
    }
}

// A ledger is given to the builder like a guard: itself, an `Arc` of one, or an `Option`.
crate::slot::impl_into_slot!(RunLedger);
