//! [`ProviderEvent`]: a response as it streams in, and [`ResponseFold`], which folds the events
//! back into the whole [`ProviderResponse`].
//!
//! A user interface wants to show text as it is written and tool calls as they form; the run
//! wants the finished response. Streaming decoders emit events, and the response is defined as
//! their fold, so the two views cannot disagree: folding the events of a response gives that
//! response back ([`ProviderResponse::to_events`] is the other direction).

use serde::{Deserialize, Serialize};

use crate::call::{CallId, ReplayState, ToolCall};
use crate::run::{ProviderResponse, StopReason, Usage};

/// One step of a streamed response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum ProviderEvent {
    /// The response began; the provider's id and model, when it said.
    ResponseStarted {
        /// The provider's response id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The model that answers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// More assistant text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// The model began a tool call. `index` counts the response's calls from 0.
    ToolCallStarted {
        /// Which call.
        index: usize,
        /// The call's id.
        id: CallId,
        /// The tool's registered name.
        name: String,
    },
    /// More of a call's argument text (JSON, incomplete until the call is done).
    ToolCallArgumentsDelta {
        /// Which call.
        index: usize,
        /// The new text.
        delta: String,
    },
    /// A call is complete: arguments parsed (or `arguments_error` set), replay state attached.
    ToolCallDone {
        /// Which call.
        index: usize,
        /// The whole call.
        call: ToolCall,
    },
    /// The message's replay state, whole (it replaces any earlier one).
    Replay {
        /// The state.
        state: ReplayState,
    },
    /// The usage so far, as totals (the latest replaces earlier ones).
    Usage {
        /// The totals.
        usage: Usage,
    },
    /// Why the model stopped.
    Stop {
        /// The reason.
        reason: StopReason,
    },
    /// The turn failed before its answer began and is tried again after a wait (HTTP
    /// providers). Nothing of the failed attempt was decoded, so the fold ignores it.
    Retrying {
        /// Which retry, from 1.
        attempt: u32,
        /// How long the provider waits before it, in milliseconds.
        wait_ms: u64,
        /// Why: the error's kind (`rate_limited`, `overloaded`, `transport`…).
        reason: String,
        /// The HTTP status, when there was one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
}

/// Folds [`ProviderEvent`]s into the [`ProviderResponse`] they describe.
///
/// ```
/// use prism::ToolCall;
/// use prism::ProviderResponse;
/// use prism::run::{ProviderEvent, ResponseFold, StopReason};
/// use serde_json::json;
///
/// let response = ProviderResponse::calls([ToolCall::new("c1", "add", json!({"a": 2}))])
///     .with_text("Adding.");
/// let mut fold = ResponseFold::new();
/// for event in response.to_events() {
///     fold.push(event);
/// }
/// assert_eq!(fold.finish(), response);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ResponseFold {
    response: ProviderResponse,
    /// Finished calls by index; the response lists them in index order.
    calls: Vec<(usize, ToolCall)>,
    stopped: bool,
}

impl ResponseFold {
    /// An empty fold.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one event in.
    pub fn push(&mut self, event: ProviderEvent) {
        match event {
            ProviderEvent::ResponseStarted { id, model } => {
                self.response.id = id.or(self.response.id.take());
                self.response.model = model.or(self.response.model.take());
            }
            ProviderEvent::TextDelta { text } => self.response.text.push_str(&text),
            ProviderEvent::ToolCallStarted { .. }
            | ProviderEvent::ToolCallArgumentsDelta { .. }
            | ProviderEvent::Retrying { .. } => {}
            ProviderEvent::ToolCallDone { index, call } => {
                match self.calls.binary_search_by_key(&index, |(i, _)| *i) {
                    Ok(slot) => self.calls[slot].1 = call,
                    Err(slot) => self.calls.insert(slot, (index, call)),
                }
            }
            ProviderEvent::Replay { state } => self.response.replay = Some(state),
            ProviderEvent::Usage { usage } => self.response.usage = Some(usage),
            ProviderEvent::Stop { reason } => {
                self.response.stop_reason = reason;
                self.stopped = true;
            }
        }
    }

    /// True once a [`ProviderEvent::Stop`] was folded in.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// The response so far; its calls are the finished ones.
    pub fn finish(mut self) -> ProviderResponse {
        self.response.tool_calls = self.calls.into_iter().map(|(_, call)| call).collect();
        self.response
    }
}

impl ProviderResponse {
    /// The events a streaming provider would have sent for this response, in order: start,
    /// text, each call (started, its whole arguments as one delta, done), replay state, usage,
    /// stop. A provider that does not stream reports these to a run's event observer.
    pub fn to_events(&self) -> Vec<ProviderEvent> {
        let mut events = Vec::with_capacity(5 + 3 * self.tool_calls.len());
        if self.id.is_some() || self.model.is_some() {
            events.push(ProviderEvent::ResponseStarted {
                id: self.id.clone(),
                model: self.model.clone(),
            });
        }
        if !self.text.is_empty() {
            events.push(ProviderEvent::TextDelta {
                text: self.text.clone(),
            });
        }
        for (index, call) in self.tool_calls.iter().enumerate() {
            events.push(ProviderEvent::ToolCallStarted {
                index,
                id: call.id.clone(),
                name: call.name.clone(),
            });
            if call.arguments_error.is_none() {
                events.push(ProviderEvent::ToolCallArgumentsDelta {
                    index,
                    delta: call.arguments.to_string(),
                });
            }
            events.push(ProviderEvent::ToolCallDone {
                index,
                call: call.clone(),
            });
        }
        if let Some(state) = &self.replay {
            events.push(ProviderEvent::Replay {
                state: state.clone(),
            });
        }
        if let Some(usage) = self.usage {
            events.push(ProviderEvent::Usage { usage });
        }
        events.push(ProviderEvent::Stop {
            reason: self.stop_reason.clone(),
        });
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_fold_in_index_order_whatever_order_they_finish_in() {
        let mut fold = ResponseFold::new();
        fold.push(ProviderEvent::ToolCallDone {
            index: 1,
            call: ToolCall::new("b", "second", json!({})),
        });
        fold.push(ProviderEvent::ToolCallDone {
            index: 0,
            call: ToolCall::new("a", "first", json!({})),
        });
        fold.push(ProviderEvent::TextDelta { text: "x".into() });
        fold.push(ProviderEvent::TextDelta { text: "y".into() });
        assert!(!fold.is_stopped());
        fold.push(ProviderEvent::Stop {
            reason: StopReason::ToolCalls,
        });
        assert!(fold.is_stopped());
        let response = fold.finish();
        assert_eq!(response.text, "xy");
        let ids: Vec<_> = response.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn a_full_response_survives_events_and_back() {
        let response = ProviderResponse {
            text: "Let me check.".into(),
            tool_calls: vec![
                ToolCall::new("c1", "lookup", json!({"q": "x"}))
                    .with_replay(ReplayState::new("gemini", json!({"thoughtSignature": "s"}))),
                ToolCall::malformed("c2", "lookup", "expected value at line 1"),
            ],
            stop_reason: StopReason::ToolCalls,
            usage: Some(Usage {
                input_tokens: 5,
                output_tokens: 7,
                cached_input_tokens: Some(1),
                reasoning_tokens: None,
            }),
            replay: Some(ReplayState::new("anthropic", json!([{"type": "thinking"}]))),
            id: Some("resp_1".into()),
            model: Some("m".into()),
        };
        let mut fold = ResponseFold::new();
        for event in response.to_events() {
            let wire = serde_json::to_value(&event).unwrap();
            fold.push(serde_json::from_value(wire).unwrap());
        }
        assert_eq!(fold.finish(), response);
    }
}
