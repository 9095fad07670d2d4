//! [`ToolEvent`]: what the dispatcher tells observers as a call moves through the pipeline.
//!
//! Events carry redacted data only. They serialise with the wire names hosts already know
//! (`"type": "tool_execution_started"`, `toolCallId`, …). Content blocks a tool returned appear as
//! [`ContentRecord`]s: kind, media type, size, links and text, never base64 data.

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::call::{BlockReason, CallId, ContentRecord, ErrorInfo, OutputRecord, ResultRef};
use crate::clock::Millis;
use crate::dispatch::ledger::CallWire;
use crate::shared_log::SharedLog;

/// One lifecycle event of one tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolEvent {
    /// The session, when the context named one.
    pub session_id: Option<Arc<str>>,
    /// The run, when the context named one.
    pub run_id: Option<Arc<str>>,
    /// The call.
    pub tool_call_id: CallId,
    /// The tool (after middleware).
    pub tool_name: Arc<str>,
    /// When it happened.
    pub at: Millis,
    /// What happened.
    pub kind: ToolEventKind,
    /// How many progress updates of the call were dropped (the queue was full, or they nested
    /// too deep), on the call's terminal event; 0 on every other event. Written as
    /// `progressDropped`, and left out when 0.
    pub progress_dropped: u64,
    /// On the terminal event of a call whose tool returned content blocks or is marked
    /// [`untrusted_output`](crate::definition::ToolDefinition::untrusted_output): the records of
    /// the redacted blocks (written inside `result`, as `content`) and the untrusted mark
    /// (written as `untrusted`; it covers the tool's value and content, or the error it
    /// returned). `None` otherwise, and on every other event.
    pub output: Option<Box<OutputRecord>>,
}

impl ToolEvent {
    /// The records of the content blocks the tool returned (terminal events only).
    pub fn content(&self) -> &[ContentRecord] {
        self.output.as_ref().map_or(&[], |output| &output.content)
    }

    /// Whether the event carries the output of a tool whose output is untrusted.
    pub fn is_untrusted(&self) -> bool {
        self.output.as_ref().is_some_and(|output| output.untrusted)
    }
}

/// What happened.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ToolEventKind {
    /// A guard refused the call (or an output guardrail its result).
    ToolExecutionBlocked {
        /// Which guard.
        reason: BlockReason,
        /// The redacted error the model sees.
        error: ErrorInfo,
    },
    /// The tool is about to run.
    ToolExecutionStarted {
        /// The redacted arguments.
        arguments: Value,
    },
    /// The tool reported progress.
    ToolExecutionProgress {
        /// The redacted progress value.
        progress: Value,
        /// Redacted extra detail.
        metadata: Option<Value>,
    },
    /// The tool returned a value (after `tool_result` middleware). On the wire it is the whole
    /// result, `"result": {"toolCallId": …, "name": …, "value": …}`; here the event's own ids
    /// say whose value it is.
    ToolExecutionFinished {
        /// The redacted value (the event's [`content`](ToolEvent::content) holds the records
        /// of any content blocks beside it).
        value: Value,
    },
    /// The tool failed, panicked, was cancelled, or its effect could not be settled.
    ToolExecutionError {
        /// The redacted error.
        error: ErrorInfo,
    },
}

impl ToolEventKind {
    /// The wire name, e.g. `"tool_execution_started"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::ToolExecutionBlocked { .. } => "tool_execution_blocked",
            Self::ToolExecutionStarted { .. } => "tool_execution_started",
            Self::ToolExecutionProgress { .. } => "tool_execution_progress",
            Self::ToolExecutionFinished { .. } => "tool_execution_finished",
            Self::ToolExecutionError { .. } => "tool_execution_error",
        }
    }
}

impl Serialize for ToolEvent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let kind = match &self.kind {
            ToolEventKind::ToolExecutionBlocked { reason, error } => {
                KindWire::ToolExecutionBlocked { reason, error }
            }
            ToolEventKind::ToolExecutionStarted { arguments } => {
                KindWire::ToolExecutionStarted { arguments }
            }
            ToolEventKind::ToolExecutionProgress { progress, metadata } => {
                KindWire::ToolExecutionProgress {
                    progress,
                    metadata: metadata.as_ref(),
                }
            }
            ToolEventKind::ToolExecutionFinished { value } => KindWire::ToolExecutionFinished {
                result: ResultRef::value(&self.tool_call_id, &self.tool_name, value)
                    .with_content(self.content(), false),
            },
            ToolEventKind::ToolExecutionError { error } => KindWire::ToolExecutionError { error },
        };
        EventWire {
            call: CallWire {
                session_id: self.session_id.as_deref(),
                run_id: self.run_id.as_deref(),
                tool_call_id: &self.tool_call_id,
                tool_name: &self.tool_name,
            },
            at: self.at,
            kind,
            progress_dropped: self.progress_dropped,
            untrusted: self.is_untrusted(),
        }
        .serialize(serializer)
    }
}

/// How an event is written.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventWire<'a> {
    #[serde(flatten)]
    call: CallWire<'a>,
    at: Millis,
    #[serde(flatten)]
    kind: KindWire<'a>,
    #[serde(skip_serializing_if = "crate::dispatch::ledger::is_zero")]
    progress_dropped: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    untrusted: bool,
}

#[derive(Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
// The variant names are the wire names, which all start alike.
#[allow(clippy::enum_variant_names)]
enum KindWire<'a> {
    ToolExecutionBlocked {
        reason: &'a BlockReason,
        error: &'a ErrorInfo,
    },
    ToolExecutionStarted {
        arguments: &'a Value,
    },
    ToolExecutionProgress {
        progress: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        metadata: Option<&'a Value>,
    },
    ToolExecutionFinished {
        result: ResultRef<'a, ContentRecord>,
    },
    ToolExecutionError {
        error: &'a ErrorInfo,
    },
}

/// Receives events. Called inline on the dispatching task, so keep it quick: hand slow work to a
/// channel. A panicking sink is caught and logged; it cannot change a call's result.
pub trait EventSink: Send + Sync + 'static {
    /// One event.
    fn emit(&self, event: &ToolEvent);
}

/// An event sink from a closure.
///
/// ```
/// use prism::dispatch::event_fn;
///
/// let log = event_fn(|event| println!("{} {}", event.tool_call_id, event.kind.type_name()));
/// # let _ = log;
/// ```
pub fn event_fn<F>(sink: F) -> impl EventSink
where
    F: Fn(&ToolEvent) + Send + Sync + 'static,
{
    EventFn(sink)
}

struct EventFn<F>(F);

impl<F: Fn(&ToolEvent) + Send + Sync + 'static> EventSink for EventFn<F> {
    fn emit(&self, event: &ToolEvent) {
        (self.0)(event);
    }
}

/// Keeps every event in memory; for tests, examples and short-lived tools.
#[derive(Clone, Default)]
pub struct CollectingSink(SharedLog<ToolEvent>);

impl CollectingSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// The events so far.
    pub fn events(&self) -> Vec<ToolEvent> {
        self.0.snapshot()
    }

    /// Takes the events so far, leaving the sink empty.
    pub fn take(&self) -> Vec<ToolEvent> {
        self.0.take()
    }
}

impl EventSink for CollectingSink {
    fn emit(&self, event: &ToolEvent) {
        self.0.push(event.clone());
    }
}

impl fmt::Debug for CollectingSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CollectingSink")
            .field(&self.0.len())
            .finish()
    }
}

// A sink is given to the builder like a guard: itself, an `Arc` of one, or an `Option`.
crate::slot::impl_into_slot!(EventSink);
