//! The dispatcher's observers for one call: events, ledger rows and redaction in one place, so the
//! pipeline in `mod.rs` says *what* happened and this file says how it is reported.
//!
//! Each transition is reported once as a [`ToolEvent`] to every sink, and the same event then
//! becomes the ledger row, which the ledger borrows. Ids, names, arguments and results are moved
//! into the event, on into the row, and back out again: the session and run ids are copied once
//! per call, the terminal result is handed back to the caller rather than copied, and a call
//! costs no more reference-count traffic than its ids need (each copy of an `Arc` is two atomic
//! operations, which on a fully observed call used to be most of the dispatcher's time).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use tracing::Span;

use crate::call::{
    BlockReason, Blocks, CallId, ErrorCode, ErrorInfo, OutputRecord, ToolOutcome, ToolResult,
    blocks,
};
use crate::context::{ProgressListener, ProgressUpdate, ToolExecutionContext};
use crate::dispatch::ledger::RecordStatus;
use crate::dispatch::span::record_end;
use crate::dispatch::{
    ERROR_CODE_LIMIT, ERROR_MESSAGE_LIMIT, MESSAGE_LIMIT, OwnershipScope, Pipeline, RunLedger,
    ToolCallRecord, ToolEvent, ToolEventKind, output_too_large,
};
use crate::effects::RecordedOutcome;
use crate::error::Refusal;
use crate::limits::check_output;
use crate::panic::guarded;
use crate::redact::{cut_marked, truncate_at_char_boundary};

/// Reports one call. Owns the call id, which the terminal methods move into the result, and,
/// when anyone watches, the session and run ids its events and rows carry.
pub(crate) struct Observe<'a> {
    p: &'a Pipeline,
    id: CallId,
    session_id: Option<Arc<str>>,
    run_id: Option<Arc<str>>,
    /// Progress updates dropped while the tool ran, for the terminal event and row.
    progress_dropped: u64,
    /// Whether the call's end carries the output of a tool marked untrusted (see
    /// [`marked`](Self::marked)).
    untrusted: bool,
    /// The call's `execute_tool` span, when a tracing subscriber wants it.
    span: Option<Box<Span>>,
}

impl<'a> Observe<'a> {
    pub(crate) fn new(
        p: &'a Pipeline,
        id: CallId,
        ctx: &'a ToolExecutionContext,
        span: Option<Box<Span>>,
    ) -> Self {
        let (session_id, run_id) = if is_watched(p) {
            ctx.session_and_run()
        } else {
            (None, None)
        };
        Self {
            p,
            id,
            session_id,
            run_id,
            progress_dropped: 0,
            untrusted: false,
            span,
        }
    }

    /// Marks the call's end as carrying the tool's own output (its value and content, or the
    /// error it returned, or an error about its output, which a replay of the call's effect
    /// cannot tell apart) when `untrusted`. A blocked end is never marked: its message is the
    /// pipeline's.
    pub(crate) fn marked(mut self, untrusted: bool) -> Self {
        self.untrusted = untrusted;
        self
    }

    /// The call's span, when a subscriber wants it.
    pub(crate) fn span(&self) -> Option<&Span> {
        self.span.as_deref()
    }

    /// Records how many progress updates were dropped while the tool ran.
    pub(crate) fn set_progress_dropped(&mut self, dropped: u64) {
        self.progress_dropped = dropped;
    }

    /// The call's id.
    pub(crate) fn id(&self) -> &CallId {
        &self.id
    }

    /// True when anyone receives events or rows (so progress is worth relaying).
    pub(crate) fn is_watching(&self) -> bool {
        is_watched(self.p)
    }

    /// A guard refused the call: blocked event, blocked row, blocked result.
    #[cold]
    pub(crate) fn blocked(
        self,
        name: Arc<str>,
        reason: BlockReason,
        refusal: Refusal,
    ) -> ToolResult {
        let mut error = ErrorInfo {
            code: refusal.code.unwrap_or_else(|| reason.into()),
            message: refusal.message,
            reason: Some(reason),
        };
        self.p.redactor.redact_error(&mut error);
        if reason == BlockReason::GuardrailBlocked {
            truncate_at_char_boundary(&mut error.message, MESSAGE_LIMIT);
        }
        bound_error(&mut error);
        self.end(name, ToolOutcome::Blocked(error), None)
    }

    /// The call failed: error event, error row, error result.
    #[cold]
    pub(crate) fn error(self, name: Arc<str>, mut error: ErrorInfo) -> ToolResult {
        self.p.redactor.redact_error(&mut error);
        bound_error(&mut error);
        self.end(name, ToolOutcome::Error(error), None)
    }

    /// The call was never dispatched: the error row `end` would record, but no event, and the
    /// result.
    #[cold]
    pub(crate) fn unstarted(self, name: Arc<str>, mut error: ErrorInfo) -> ToolResult {
        self.p.redactor.redact_error(&mut error);
        let p = self.p;
        let Some(ledger) = &p.ledger else {
            return ToolResult::new(self.id, name, ToolOutcome::Error(error));
        };
        let event = self.event(name, ToolEventKind::ToolExecutionError { error }, None);
        let row = row_of(event, p.ownership.clone());
        append(ledger.as_ref(), &row);
        take_result(row)
    }

    /// The tool returned a value and content blocks: finished event, finished row, value
    /// result.
    ///
    /// The output bounds were checked before redaction, so no redactor walks an output over
    /// them; but a redacted output can be longer (the marker is longer than a short secret), so
    /// one that redaction changed is checked again, and over the bounds ends the call as
    /// `output_too_large`, as the tool's own output would. Results, events, rows and the effect
    /// store never carry an output over the bounds.
    pub(crate) fn finished(self, name: Arc<str>, value: Value, mut content: Blocks) -> ToolResult {
        let redactor = &self.p.redactor;
        let (value, mut changed) = match redactor.redact_value(&value) {
            Cow::Borrowed(_) => (value, false),
            Cow::Owned(redacted) => (redacted, true),
        };
        if let Some(content) = &mut content {
            changed |= redactor.redact_content_changed(content);
        }
        let limits = &self.p.limits;
        if changed
            && let Err(exceeded) = check_output(
                &value,
                blocks(&content),
                limits.max_output_bytes,
                limits.max_output_depth,
            )
        {
            let error = output_too_large(self.p, &name, exceeded, value, "");
            return self.error(name, error);
        }
        self.end(name, ToolOutcome::Value(value), content)
    }

    /// The effect store already holds this call's outcome: report it as the call's end. A
    /// recorded value is redacted by today's secrets, which may lengthen it past the output
    /// bounds: then it ends as `output_too_large`, as in [`finished`](Self::finished).
    #[cold]
    pub(crate) fn replayed(self, name: Arc<str>, outcome: RecordedOutcome) -> ToolResult {
        let (outcome, mut content) = outcome.into_parts();
        let outcome = match outcome {
            ToolOutcome::Value(value) => {
                let content = (!content.is_empty()).then(|| Box::new(content));
                return self.finished(name, value, content);
            }
            mut failed => {
                self.p.redactor.redact_outcome(&mut failed);
                failed
            }
        };
        self.p.redactor.redact_content(&mut content);
        let content = (!content.is_empty()).then(|| Box::new(content));
        self.end(name, outcome, content)
    }

    /// The tool is about to run. The name is lent to the event and row and handed back.
    pub(crate) fn started(&mut self, name: Arc<str>, arguments: Value) -> Arc<str> {
        if !self.is_watching() {
            return name;
        }
        let arguments = self.p.redactor.redact_owned_value(arguments);
        let event = ToolEvent {
            session_id: self.session_id.take(),
            run_id: self.run_id.take(),
            tool_call_id: self.id.clone(),
            tool_name: name,
            at: self.p.now(),
            kind: ToolEventKind::ToolExecutionStarted { arguments },
            progress_dropped: 0,
            output: None,
        };
        let row = report(self.p, event);
        self.session_id = row.session_id;
        self.run_id = row.run_id;
        row.tool_name
    }

    /// The tool reported progress: the context's `listener` (an MCP server's relay) hears it,
    /// then the sinks and the ledger, all redacted. Rare enough to copy the ids rather than lend
    /// them, which lets the body's executor report through a shared borrow.
    pub(crate) fn progress(
        &self,
        name: &Arc<str>,
        update: ProgressUpdate,
        listener: Option<&ProgressListener>,
    ) {
        let redact = |value: Value| self.p.redactor.redact_owned_value(value);
        let update = ProgressUpdate {
            progress: redact(update.progress),
            metadata: update.metadata.map(redact),
        };
        if let Some(listener) = listener
            && guarded(|| listener(&update)).is_err()
        {
            tracing::error!(target: "prism_tools", call = %self.id.shown(), "a progress listener panicked; the update was dropped for it");
        }
        if !self.is_watching() {
            return;
        }
        let ProgressUpdate { progress, metadata } = update;
        report(
            self.p,
            ToolEvent {
                session_id: self.session_id.clone(),
                run_id: self.run_id.clone(),
                tool_call_id: self.id.clone(),
                tool_name: Arc::clone(name),
                at: self.p.now(),
                kind: ToolEventKind::ToolExecutionProgress { progress, metadata },
                progress_dropped: 0,
                output: None,
            },
        );
    }

    /// Reports the call's last transition and hands back its result, whose content blocks are
    /// whole; the event and the row get their records.
    fn end(self, name: Arc<str>, outcome: ToolOutcome, content: Blocks) -> ToolResult {
        tracing::debug!(
            target: "prism_tools",
            call = %self.id.shown(),
            tool = %name,
            outcome = match &outcome {
                ToolOutcome::Value(_) => "finished",
                ToolOutcome::Blocked(_) => "blocked",
                ToolOutcome::Error(_) => "error",
            },
            "tool call ended"
        );
        if let Some(span) = &self.span {
            record_end(span, &outcome);
        }
        let untrusted = self.untrusted && !matches!(outcome, ToolOutcome::Blocked(_));
        if !self.is_watching() {
            return ToolResult::new(self.id, name, outcome).attach(content, untrusted);
        }
        let output = OutputRecord::of(blocks(&content), untrusted);
        let kind = match outcome {
            ToolOutcome::Value(value) => ToolEventKind::ToolExecutionFinished { value },
            ToolOutcome::Blocked(error) => ToolEventKind::ToolExecutionBlocked {
                reason: error.reason.unwrap_or(BlockReason::GuardrailBlocked),
                error,
            },
            ToolOutcome::Error(error) => ToolEventKind::ToolExecutionError { error },
        };
        let p = self.p;
        take_result(report(p, self.event(name, kind, output))).attach(content, untrusted)
    }

    /// The event of the call's last transition, carrying its ids. Always inlined, as is
    /// [`row_of`]: each is built in place on the reporting path instead of moved through a call.
    #[inline(always)]
    fn event(
        self,
        name: Arc<str>,
        kind: ToolEventKind,
        output: Option<Box<OutputRecord>>,
    ) -> ToolEvent {
        ToolEvent {
            session_id: self.session_id,
            run_id: self.run_id,
            tool_call_id: self.id,
            tool_name: name,
            at: self.p.now(),
            kind,
            progress_dropped: self.progress_dropped,
            output,
        }
    }
}

fn is_watched(p: &Pipeline) -> bool {
    !p.events.is_empty() || p.ledger.is_some()
}

/// Emits `event` to every sink, then lends it to the ledger as a row, which it returns so the
/// caller can take back what it still needs.
fn report(p: &Pipeline, event: ToolEvent) -> ToolCallRecord {
    for sink in &p.events {
        if guarded(|| sink.emit(&event)).is_err() {
            tracing::error!(target: "prism_tools", call = %event.tool_call_id.shown(), "an event sink panicked; the event was dropped for it");
        }
    }
    let row = row_of(event, p.ownership.clone());
    if let Some(ledger) = &p.ledger {
        append(ledger.as_ref(), &row);
    }
    row
}

/// Lends `row` to `ledger`; a panicking ledger loses the row, never the call.
fn append(ledger: &dyn RunLedger, row: &ToolCallRecord) {
    if guarded(|| ledger.append(row)).is_err() {
        tracing::error!(target: "prism_tools", call = %row.tool_call_id.shown(), "the ledger panicked while appending a row");
    }
}

/// The result a terminal row records, handed back once the row has been reported.
fn take_result(row: ToolCallRecord) -> ToolResult {
    // `row_of` gives every terminal row its outcome.
    let outcome = row.outcome.expect("a terminal row carries its outcome");
    ToolResult::new(row.tool_call_id, row.tool_name, outcome)
}

/// The ledger row that records what `event` reports, made of its contents.
#[inline(always)]
fn row_of(event: ToolEvent, ownership: Option<Arc<OwnershipScope>>) -> ToolCallRecord {
    let ToolEvent {
        session_id,
        run_id,
        tool_call_id,
        tool_name,
        at,
        kind,
        progress_dropped,
        output,
    } = event;
    let (status, outcome, reason, in_flight) = match kind {
        ToolEventKind::ToolExecutionFinished { value } => (
            RecordStatus::Finished,
            Some(ToolOutcome::Value(value)),
            None,
            None,
        ),
        ToolEventKind::ToolExecutionBlocked { reason, error } => (
            RecordStatus::Blocked,
            Some(ToolOutcome::Blocked(error)),
            Some(reason),
            None,
        ),
        ToolEventKind::ToolExecutionError { error } => (
            RecordStatus::Error,
            Some(ToolOutcome::Error(error)),
            None,
            None,
        ),
        started_or_progress => (RecordStatus::Started, None, None, Some(started_or_progress)),
    };
    let mut record = ToolCallRecord::new(tool_call_id, tool_name, status);
    record.session_id = session_id;
    record.run_id = run_id;
    record.ownership = ownership;
    record.outcome = outcome;
    record.reason = reason;
    record.progress_dropped = progress_dropped;
    record.output = output;
    match in_flight {
        Some(ToolEventKind::ToolExecutionStarted { arguments }) => {
            record.started_at = Some(at);
            record.arguments = Some(arguments);
        }
        Some(ToolEventKind::ToolExecutionProgress { progress, metadata }) => {
            record.progress = Some(progress);
            record.progress_metadata = metadata;
            record.progress_at = Some(at);
        }
        _ => record.finished_at = Some(at),
    }
    record
}

/// Cuts a redacted error to its bounds: a guard's refusal or a tool's error (a remote one
/// included) chooses its message and code, and must not fill results, events and rows with them.
fn bound_error(error: &mut ErrorInfo) {
    cut_marked(&mut error.message, ERROR_MESSAGE_LIMIT);
    if let ErrorCode::Custom(code) = &mut error.code
        && code.len() > ERROR_CODE_LIMIT
    {
        truncate_at_char_boundary(code.to_mut(), ERROR_CODE_LIMIT);
    }
}
