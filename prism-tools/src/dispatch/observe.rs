//! The dispatcher's observers for one call: events, ledger rows and redaction in one place, so the
//! pipeline in `mod.rs` says *what* happened and this file says how it is reported.
//!
//! Each transition is reported once as a [`ToolEvent`] to every sink, and the same event then
//! becomes the ledger row: the row takes over the event's ids, names, arguments or result rather
//! than copying them again. Reference counts are atomic and every copy of an `Arc` costs two of
//! them, which on a fully observed call used to be most of the dispatcher's time.

use std::sync::Arc;

use serde_json::Value;

use crate::call::{BlockReason, CallId, ErrorInfo, ToolOutcome, ToolResult};
use crate::clock::Millis;
use crate::context::{ProgressUpdate, ToolExecutionContext};
use crate::dispatch::ledger::RecordStatus;
use crate::dispatch::{
    MESSAGE_LIMIT, OwnershipScope, Pipeline, ToolCallRecord, ToolEvent, ToolEventKind,
};
use crate::effects::RecordedOutcome;
use crate::error::Refusal;
use crate::panic::guarded;
use crate::redact::truncate_at_char_boundary;

/// Reports one call. Owns the call id, which the terminal methods move into the result.
pub(crate) struct Observe<'a> {
    p: &'a Pipeline,
    id: CallId,
    ctx: &'a ToolExecutionContext,
}

impl<'a> Observe<'a> {
    pub(crate) fn new(p: &'a Pipeline, id: CallId, ctx: &'a ToolExecutionContext) -> Self {
        Self { p, id, ctx }
    }

    /// The call's id.
    pub(crate) fn id(&self) -> &CallId {
        &self.id
    }

    /// True when anyone receives events or rows (so progress is worth relaying).
    pub(crate) fn is_watching(&self) -> bool {
        !self.p.events.is_empty() || self.p.ledger.is_some()
    }

    /// A guard refused the call: blocked event, blocked row, blocked result.
    pub(crate) fn blocked(
        self,
        name: Arc<str>,
        reason: BlockReason,
        refusal: Refusal,
    ) -> ToolResult {
        let mut message = refusal.message;
        self.p.redactor.redact_string(&mut message);
        if reason == BlockReason::GuardrailBlocked {
            truncate_at_char_boundary(&mut message, MESSAGE_LIMIT);
        }
        let error = ErrorInfo {
            code: refusal.code.unwrap_or_else(|| reason.into()),
            message,
            reason: Some(reason),
        };
        self.end(name, ToolOutcome::Blocked(error))
    }

    /// The call failed: error event, error row, error result.
    pub(crate) fn error(self, name: Arc<str>, mut error: ErrorInfo) -> ToolResult {
        self.p.redactor.redact_string(&mut error.message);
        self.end(name, ToolOutcome::Error(error))
    }

    /// The call was never dispatched: an error row, no event, and the result.
    pub(crate) fn unstarted(self, name: Arc<str>, mut error: ErrorInfo) -> ToolResult {
        self.p.redactor.redact_string(&mut error.message);
        if self.p.ledger.is_some() {
            let kind = ToolEventKind::ToolExecutionError {
                error: error.clone(),
            };
            self.append(self.event(&name, self.p.now(), kind));
        }
        ToolResult {
            tool_call_id: self.id,
            name,
            outcome: ToolOutcome::Error(error),
        }
    }

    /// The tool returned a value: finished event, finished row, value result.
    pub(crate) fn finished(self, name: Arc<str>, value: Value) -> ToolResult {
        let value = self.p.redactor.redact_owned_value(value);
        self.end(name, ToolOutcome::Value(value))
    }

    /// The effect store already holds this call's outcome: report it as the call's end.
    pub(crate) fn replayed(self, name: Arc<str>, outcome: RecordedOutcome) -> ToolResult {
        let mut outcome = match outcome {
            RecordedOutcome::Value(value) => ToolOutcome::Value(value),
            RecordedOutcome::Error(error) if error.reason.is_some() => ToolOutcome::Blocked(error),
            RecordedOutcome::Error(error) => ToolOutcome::Error(error),
        };
        crate::dispatch::redact_outcome(&mut outcome, &self.p.redactor);
        self.end(name, outcome)
    }

    /// The tool is about to run.
    pub(crate) fn started(&self, name: &Arc<str>, arguments: Value) {
        if !self.is_watching() {
            return;
        }
        let arguments = Arc::new(self.p.redactor.redact_owned_value(arguments));
        self.report(name, ToolEventKind::ToolExecutionStarted { arguments });
    }

    /// The tool reported progress.
    pub(crate) fn progress(&self, name: &Arc<str>, update: ProgressUpdate) {
        let redact = |value: Value| self.p.redactor.redact_owned_value(value);
        let progress = redact(update.progress);
        let metadata = update.metadata.map(redact);
        self.report(
            name,
            ToolEventKind::ToolExecutionProgress { progress, metadata },
        );
    }

    /// Reports the call's last transition and hands back its result.
    fn end(self, name: Arc<str>, outcome: ToolOutcome) -> ToolResult {
        tracing::debug!(
            target: "prism_tools",
            call = %self.id,
            tool = %name,
            outcome = match &outcome {
                ToolOutcome::Value(_) => "finished",
                ToolOutcome::Blocked(_) => "blocked",
                ToolOutcome::Error(_) => "error",
            },
            "tool call ended"
        );
        if self.is_watching() {
            let kind = match &outcome {
                ToolOutcome::Value(_) => ToolEventKind::ToolExecutionFinished {
                    result: ToolResult {
                        tool_call_id: self.id.clone(),
                        name: Arc::clone(&name),
                        outcome: outcome.clone(),
                    },
                },
                ToolOutcome::Blocked(error) => ToolEventKind::ToolExecutionBlocked {
                    reason: error.reason.unwrap_or(BlockReason::GuardrailBlocked),
                    error: error.clone(),
                },
                ToolOutcome::Error(error) => ToolEventKind::ToolExecutionError {
                    error: error.clone(),
                },
            };
            self.report(&name, kind);
        }
        ToolResult {
            tool_call_id: self.id,
            name,
            outcome,
        }
    }

    /// Emits one event to every sink, then appends it to the ledger as a row.
    fn report(&self, name: &Arc<str>, kind: ToolEventKind) {
        let event = self.event(name, self.p.now(), kind);
        for sink in &self.p.events {
            if guarded(|| sink.emit(&event)).is_err() {
                tracing::error!(target: "prism_tools", call = %self.id, "an event sink panicked; the event was dropped for it");
            }
        }
        self.append(event);
    }

    fn event(&self, name: &Arc<str>, at: Millis, kind: ToolEventKind) -> ToolEvent {
        let (session_id, run_id) = self.ctx.session_and_run();
        ToolEvent {
            session_id,
            run_id,
            tool_call_id: self.id.clone(),
            tool_name: Arc::clone(name),
            at,
            kind,
        }
    }

    /// Appends `event` to the ledger, if there is one, as a row.
    fn append(&self, event: ToolEvent) {
        let Some(ledger) = &self.p.ledger else {
            return;
        };
        // The row is built inside the guarded call so that it is moved as few times as possible.
        let appended = guarded(|| ledger.append(row_of(event, self.p.ownership.clone())));
        if appended.is_err() {
            tracing::error!(target: "prism_tools", call = %self.id, "the ledger panicked while appending a row");
        }
    }
}

/// The ledger row that records what `event` reports, reusing its contents.
fn row_of(event: ToolEvent, ownership: Option<Arc<OwnershipScope>>) -> ToolCallRecord {
    let ToolEvent {
        session_id,
        run_id,
        tool_call_id,
        tool_name,
        at,
        kind,
    } = event;
    let status = match &kind {
        ToolEventKind::ToolExecutionStarted { .. }
        | ToolEventKind::ToolExecutionProgress { .. } => RecordStatus::Started,
        ToolEventKind::ToolExecutionFinished { .. } => RecordStatus::Finished,
        ToolEventKind::ToolExecutionBlocked { .. } => RecordStatus::Blocked,
        ToolEventKind::ToolExecutionError { .. } => RecordStatus::Error,
    };
    let mut record = ToolCallRecord::new(tool_call_id, tool_name, status);
    record.session_id = session_id;
    record.run_id = run_id;
    record.ownership = ownership;
    // Blocked and error events carry only the error; the row keeps the whole result.
    let ended = |record: &ToolCallRecord, outcome| ToolResult {
        tool_call_id: record.tool_call_id.clone(),
        name: Arc::clone(&record.tool_name),
        outcome,
    };
    match kind {
        ToolEventKind::ToolExecutionStarted { arguments } => {
            record.started_at = Some(at);
            record.arguments = Some(arguments);
        }
        ToolEventKind::ToolExecutionProgress { progress, metadata } => {
            record.progress = Some(progress);
            record.progress_metadata = metadata;
            record.progress_at = Some(at);
        }
        ToolEventKind::ToolExecutionFinished { result } => {
            record.finished_at = Some(at);
            record.result = Some(result);
        }
        ToolEventKind::ToolExecutionBlocked { reason, error } => {
            record.finished_at = Some(at);
            record.reason = Some(reason);
            record.result = Some(ended(&record, ToolOutcome::Blocked(error)));
        }
        ToolEventKind::ToolExecutionError { error } => {
            record.finished_at = Some(at);
            record.result = Some(ended(&record, ToolOutcome::Error(error)));
        }
    }
    record
}
