//! A response's finished output items, one at a time: calls out of `function_call` items, text
//! out of `message` items, and every item kept, in order, as the message's replay state.
//!
//! The API wants its own output back unchanged on the next turn when nothing is stored on its
//! side (`store: false`): reasoning items with their encrypted content, function calls with their
//! `fc_…` ids, messages, and the items of hosted tools (MCP listings and calls, tool searches,
//! programs). Items that are not our calls (hosted MCP calls, approval requests, tool searches,
//! custom tool calls) are kept the same way and never fail a turn; the ones that wait on the
//! client name the stop reason when the model made no call of ours.

use serde_json::{Value, json};

use super::NAME;
use super::calls::{CallItem, push_calls};
use super::wire_types::{OutputSummary, waits_for_client};
use crate::call::{ReplayState, ToolCall};
use crate::provider::wire::ToolTable;

/// The finished items of one response.
#[derive(Default)]
pub(super) struct OutputItems {
    items: Vec<(usize, Value)>,
    pub summary: OutputSummary,
}

/// What one item added to the answer.
#[derive(Default)]
pub(super) struct ItemParts {
    /// Calls, in order.
    pub calls: Vec<ToolCall>,
    /// Text (a message's `output_text` and `refusal` parts, joined).
    pub text: String,
    /// True when the item was a message.
    pub is_message: bool,
}

impl OutputItems {
    /// Takes a finished item at `index` in the output.
    pub fn take(&mut self, index: usize, mut item: Value, tools: &ToolTable) -> ItemParts {
        let mut parts = ItemParts::default();
        match item_type(&item) {
            "function_call" => {
                // Written into the item too, so its replay names the call its result answers.
                let call_id = call_id_of(&item, index);
                item["call_id"] = Value::String(call_id);
                let text = |key: &str| item.get(key).and_then(Value::as_str);
                let call = CallItem {
                    item_id: text("id"),
                    call_id: text("call_id").unwrap_or_default(),
                    name: text("name").unwrap_or_default(),
                    arguments: text("arguments").unwrap_or_default(),
                };
                push_calls(&call, tools, &mut parts.calls);
                self.summary.calls += parts.calls.len();
            }
            "message" => {
                parts.is_message = true;
                let content = item.get("content").and_then(Value::as_array);
                for part in content.into_iter().flatten() {
                    match (item_type(part), part.get("text"), part.get("refusal")) {
                        ("output_text", Some(Value::String(text)), _) => parts.text.push_str(text),
                        ("refusal", _, Some(Value::String(refusal))) => {
                            self.summary.refused = true;
                            parts.text.push_str(refusal);
                        }
                        _ => {}
                    }
                }
            }
            other => {
                let execution = item.get("execution").and_then(Value::as_str);
                if waits_for_client(other, execution) {
                    self.summary.waiting_on = Some(other.to_owned());
                }
            }
        }
        let slot = self.items.partition_point(|(at, _)| *at <= index);
        self.items.insert(slot, (index, item));
        parts
    }

    /// Whether the item at `index` was taken already.
    pub fn contains(&self, index: usize) -> bool {
        self.items
            .binary_search_by_key(&index, |(at, _)| *at)
            .is_ok()
    }

    /// The items as the message's replay state, in output order; `None` when there were none.
    pub fn replay(&self) -> Option<ReplayState> {
        if self.items.is_empty() {
            return None;
        }
        let items: Vec<&Value> = self.items.iter().map(|(_, item)| item).collect();
        Some(ReplayState::new(NAME, json!({ "items": items })))
    }
}

/// The `call_id` of a function call item at `output_index`; one made of its item id (or, without
/// one, its place in the output) when the server sent none, so that two such calls never share
/// the empty id.
pub(super) fn call_id_of(item: &Value, output_index: usize) -> String {
    let text = |key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
    };
    match text("call_id").or_else(|| text("id")) {
        Some(id) => id.to_owned(),
        None => format!("call_{output_index}"),
    }
}

/// An item's (or a content part's) `type`, empty when it has none.
pub(super) fn item_type(item: &Value) -> &str {
    item.get("type").and_then(Value::as_str).unwrap_or_default()
}
