//! The dispatcher's observers for one call: events, ledger rows and redaction in one place, so the
//! pipeline in `mod.rs` says *what* happened and this file says how it is reported.

use std::sync::Arc;

use serde_json::Value;

use crate::call::{BlockReason, CallId, ErrorInfo, ToolOutcome, ToolResult};
use crate::context::{ProgressUpdate, ToolExecutionContext};
use crate::dispatch::ledger::RecordStatus;
use crate::dispatch::{MESSAGE_LIMIT, Pipeline, ToolCallRecord, ToolEvent, ToolEventKind};
use crate::effects::RecordedOutcome;
use crate::error::Refusal;
use crate::panic::guarded;
use crate::redact::truncate_at_char_boundary;

pub(crate) struct Observe<'a> {
    p: &'a Pipeline,
    id: &'a CallId,
    ctx: &'a ToolExecutionContext,
}

impl<'a> Observe<'a> {
    pub(crate) fn new(p: &'a Pipeline, id: &'a CallId, ctx: &'a ToolExecutionContext) -> Self {
        Self { p, id, ctx }
    }

    /// True when anyone receives events or rows (so progress is worth relaying).
    pub(crate) fn is_watching(&self) -> bool {
        !self.p.events.is_empty() || self.p.ledger.is_some()
    }

    /// A guard refused the call: blocked event, blocked row, blocked result.
    pub(crate) fn blocked(
        &self,
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
        let result = ToolResult {
            tool_call_id: self.id.clone(),
            name,
            outcome: ToolOutcome::Blocked(error),
        };
        self.terminal(&result);
        result
    }

    /// The call failed: error event, error row, error result.
    pub(crate) fn error(&self, name: Arc<str>, mut error: ErrorInfo) -> ToolResult {
        self.p.redactor.redact_string(&mut error.message);
        let result = ToolResult {
            tool_call_id: self.id.clone(),
            name,
            outcome: ToolOutcome::Error(error),
        };
        self.terminal(&result);
        result
    }

    /// The call was never dispatched: an error row, no event, and the result.
    pub(crate) fn unstarted(&self, name: Arc<str>, mut error: ErrorInfo) -> ToolResult {
        self.p.redactor.redact_string(&mut error.message);
        let result = ToolResult {
            tool_call_id: self.id.clone(),
            name,
            outcome: ToolOutcome::Error(error),
        };
        let at = self.p.clock.now_millis();
        self.append(&result.name, RecordStatus::Error, |record| {
            record.finished_at = Some(at);
            record.result = Some(result.clone());
        });
        result
    }

    /// The tool returned a value: finished event, finished row, value result.
    pub(crate) fn finished(&self, name: Arc<str>, value: Value) -> ToolResult {
        let value = match self.p.redactor.redact_value(&value) {
            std::borrow::Cow::Borrowed(_) => value,
            std::borrow::Cow::Owned(clean) => clean,
        };
        let result = ToolResult {
            tool_call_id: self.id.clone(),
            name,
            outcome: ToolOutcome::Value(value),
        };
        self.terminal(&result);
        result
    }

    /// The effect store already holds this call's outcome: report it as the call's end.
    pub(crate) fn replayed(&self, name: Arc<str>, outcome: RecordedOutcome) -> ToolResult {
        let outcome = match outcome {
            RecordedOutcome::Value(value) => ToolOutcome::Value(value),
            RecordedOutcome::Error(error) if error.reason.is_some() => ToolOutcome::Blocked(error),
            RecordedOutcome::Error(error) => ToolOutcome::Error(error),
        };
        let mut result = ToolResult {
            tool_call_id: self.id.clone(),
            name,
            outcome,
        };
        crate::dispatch::redact_result(&mut result, &self.p.redactor);
        self.terminal(&result);
        result
    }

    /// The tool is about to run.
    pub(crate) fn started(&self, name: &Arc<str>, arguments: Value) {
        if !self.is_watching() {
            return;
        }
        let arguments = Arc::new(match self.p.redactor.redact_value(&arguments) {
            std::borrow::Cow::Borrowed(_) => arguments,
            std::borrow::Cow::Owned(clean) => clean,
        });
        let at = self.p.now();
        self.emit(name, at, || ToolEventKind::ToolExecutionStarted {
            arguments: Arc::clone(&arguments),
        });
        self.append(name, RecordStatus::Started, |record| {
            record.started_at = Some(at);
            record.arguments = Some(arguments);
        });
    }

    /// The tool reported progress.
    pub(crate) fn progress(&self, name: &Arc<str>, update: ProgressUpdate) {
        let redact = |value: Value| match self.p.redactor.redact_value(&value) {
            std::borrow::Cow::Borrowed(_) => value,
            std::borrow::Cow::Owned(clean) => clean,
        };
        let progress = redact(update.progress);
        let metadata = update.metadata.map(redact);
        let at = self.p.now();
        self.emit(name, at, || ToolEventKind::ToolExecutionProgress {
            progress: progress.clone(),
            metadata: metadata.clone(),
        });
        self.append(name, RecordStatus::Started, |record| {
            record.progress = Some(progress);
            record.progress_metadata = metadata;
            record.progress_at = Some(at);
        });
    }

    fn terminal(&self, result: &ToolResult) {
        tracing::debug!(
            target: "prism_tools",
            call = %result.tool_call_id,
            tool = %result.name,
            outcome = match &result.outcome {
                ToolOutcome::Value(_) => "finished",
                ToolOutcome::Blocked(_) => "blocked",
                ToolOutcome::Error(_) => "error",
            },
            "tool call ended"
        );
        if !self.is_watching() {
            return;
        }
        let at = self.p.now();
        let (kind, status, reason) = match &result.outcome {
            ToolOutcome::Value(_) => (
                ToolEventKind::ToolExecutionFinished {
                    result: result.clone(),
                },
                RecordStatus::Finished,
                None,
            ),
            ToolOutcome::Blocked(error) => {
                let reason = error.reason.unwrap_or(BlockReason::GuardrailBlocked);
                (
                    ToolEventKind::ToolExecutionBlocked {
                        reason,
                        error: error.clone(),
                    },
                    RecordStatus::Blocked,
                    Some(reason),
                )
            }
            ToolOutcome::Error(error) => (
                ToolEventKind::ToolExecutionError {
                    error: error.clone(),
                },
                RecordStatus::Error,
                None,
            ),
        };
        self.emit(&result.name, at, || kind);
        self.append(&result.name, status, |record| {
            record.finished_at = Some(at);
            record.reason = reason;
            record.result = Some(result.clone());
        });
    }

    fn emit(&self, name: &Arc<str>, at: u64, kind: impl FnOnce() -> ToolEventKind) {
        if self.p.events.is_empty() {
            return;
        }
        let (session_id, run_id) = self.ctx.session_and_run();
        let event = ToolEvent {
            session_id,
            run_id,
            tool_call_id: self.id.clone(),
            tool_name: Arc::clone(name),
            at,
            kind: kind(),
        };
        for sink in &self.p.events {
            if guarded(|| sink.emit(&event)).is_err() {
                tracing::error!(target: "prism_tools", call = %self.id, "an event sink panicked; the event was dropped for it");
            }
        }
    }

    fn append(
        &self,
        name: &Arc<str>,
        status: RecordStatus,
        fill: impl FnOnce(&mut ToolCallRecord),
    ) {
        let Some(ledger) = &self.p.ledger else {
            return;
        };
        let (session_id, run_id) = self.ctx.session_and_run();
        let mut record = ToolCallRecord::new(self.id.clone(), Arc::clone(name), status);
        record.session_id = session_id;
        record.run_id = run_id;
        record.ownership = self.p.ownership.clone();
        fill(&mut record);
        if guarded(|| ledger.append(record)).is_err() {
            tracing::error!(target: "prism_tools", call = %self.id, "the ledger panicked while appending a row");
        }
    }
}
