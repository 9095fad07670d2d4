//! The `execute_tool {name}` span of one dispatch, with OpenTelemetry's GenAI attributes.
//!
//! Dispatch is the hot path, so the span costs next to nothing when no subscriber wants it: the
//! callsite check says no, no span is made, and the call's observer carries an empty
//! `Option<Box<_>>`. When a subscriber does want it, the span is created once the call's
//! middleware ran (so it names the tool that runs), entered whenever the tool's body is polled
//! (so the tool's own spans and events nest under it), and told the outcome when the call ends:
//! `error.type` is the error code of a call that failed or was blocked. The call's arguments and
//! result are recorded only under [`CONTENT_TARGET`] at `TRACE`, redacted.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use serde_json::Value;
use tracing::field::Empty;
use tracing::{Level, Span};

use crate::call::{ToolCall, ToolOutcome};
use crate::redact::SecretRedactor;
use crate::semconv::{
    CONTENT_TARGET, ERROR_TYPE, GEN_AI_OPERATION_NAME, GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID, GEN_AI_TOOL_CALL_RESULT, GEN_AI_TOOL_NAME, OPERATION_EXECUTE_TOOL,
    OTEL_NAME,
};

/// A span for `call` when a subscriber is interested, else `None`.
#[inline]
pub(crate) fn tool_span(call: &ToolCall, redactor: &SecretRedactor) -> Option<Box<Span>> {
    let span = tracing::info_span!(
        target: "prism_tools",
        "execute_tool",
        { OTEL_NAME } = Empty,
        { GEN_AI_OPERATION_NAME } = OPERATION_EXECUTE_TOOL,
        { GEN_AI_TOOL_NAME } = Empty,
        // Cut, as in messages: the provider or the model chose it, and nothing bounds it.
        { GEN_AI_TOOL_CALL_ID } = &*call.id.shown(),
        { ERROR_TYPE } = Empty,
        { GEN_AI_TOOL_CALL_ARGUMENTS } = Empty,
        { GEN_AI_TOOL_CALL_RESULT } = Empty,
    );
    if span.is_disabled() {
        return None;
    }
    Some(Box::new(describe(span, call, redactor)))
}

#[cold]
fn describe(span: Span, call: &ToolCall, redactor: &SecretRedactor) -> Span {
    let name = super::shown_name(redactor, &call.name);
    span.record(OTEL_NAME, format!("{OPERATION_EXECUTE_TOOL} {name}"));
    span.record(GEN_AI_TOOL_NAME, &*name);
    span
}

/// Records the call's arguments when content capture is on. Called once they are within the
/// size and depth limits: serialising them walks them recursively, and copies them whole.
#[cold]
pub(crate) fn record_arguments(span: &Span, arguments: &Value, redactor: &SecretRedactor) {
    if content_wanted() {
        let arguments = redactor.redact_value(arguments);
        span.record(GEN_AI_TOOL_CALL_ARGUMENTS, arguments.to_string());
    }
}

fn content_wanted() -> bool {
    tracing::enabled!(target: CONTENT_TARGET, Level::TRACE)
}

/// Records how the call ended; `outcome` is already redacted.
#[cold]
pub(crate) fn record_end(span: &Span, outcome: &ToolOutcome) {
    let error = match outcome {
        ToolOutcome::Value(_) => None,
        ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => Some(error),
    };
    if let Some(error) = error {
        span.record(ERROR_TYPE, error.code.as_str());
    }
    if content_wanted() {
        let json = match outcome {
            ToolOutcome::Value(value) => value.to_string(),
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => {
                serde_json::to_string(error).unwrap_or_default()
            }
        };
        span.record(GEN_AI_TOOL_CALL_RESULT, json);
    }
}

pin_project! {
    /// A tool body that enters the call's span (when there is one) each time it is polled.
    pub(crate) struct InSpan<'s, F> {
        #[pin]
        inner: F,
        span: Option<&'s Span>,
    }
}

impl<'s, F> InSpan<'s, F> {
    pub(crate) fn new(inner: F, span: Option<&'s Span>) -> Self {
        Self { inner, span }
    }
}

impl<F: Future> Future for InSpan<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.map(Span::enter);
        this.inner.poll(cx)
    }
}
