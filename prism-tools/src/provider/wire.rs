//! [`WireFormat`]: one provider API's request and response shapes, as pure data code.
//!
//! A wire format encodes a [`ProviderRequest`] into the JSON body its API takes, decodes a whole
//! response body, and decodes a stream one server-sent event at a time. It does no I/O: the HTTP
//! providers put transport, retries and cancellation around it, and tests feed it recorded
//! bytes. Everything a format needs to know about the turn's tools (the name the model saw, the
//! lowered schema that decides how arguments are restored) is in the request's [`ToolTable`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::provider::names::{NameRewriter, NameRule, unlisted_wire};
use crate::run::{ProviderError, ProviderEvent, ProviderRequest, ProviderResponse};

/// One server-sent event: its `event:` name, when it had one, and its `data:` text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The event's name; `None` for the default `message`.
    pub event: Option<&'a str>,
    /// The event's data (several `data:` lines joined with `\n`).
    pub data: &'a str,
}

impl<'a> SseEvent<'a> {
    /// An unnamed event.
    pub fn data(data: &'a str) -> Self {
        Self { event: None, data }
    }
}

/// Per-request model settings a wire format puts into the body.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ModelSettings {
    /// The model's name, as the API spells it.
    pub model: String,
    /// The most output tokens (required by Anthropic's API; others leave it out when `None`).
    pub max_output_tokens: Option<u32>,
    /// Whether to ask for a stream.
    pub stream: bool,
    /// Extra top-level body fields, copied as they are (temperature, reasoning effort…); a field
    /// the format sets itself is not overwritten.
    pub extra: Map<String, Value>,
}

impl ModelSettings {
    /// Settings for `model`, streaming.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            max_output_tokens: None,
            stream: true,
            extra: Map::new(),
        }
    }

    /// Sets the output token limit.
    pub fn with_max_output_tokens(mut self, tokens: u32) -> Self {
        self.max_output_tokens = Some(tokens);
        self
    }

    /// Asks for a whole response instead of a stream.
    pub fn without_stream(mut self) -> Self {
        self.stream = false;
        self
    }

    /// Copies the extra fields into `body`. A field the format set itself is kept, with a note,
    /// unless the format already merged the extra value into it (`merged`).
    pub fn merge_extra(
        &self,
        body: &mut Map<String, Value>,
        merged: &[&str],
        notes: &mut Vec<EncodeNote>,
    ) {
        for (key, value) in &self.extra {
            if !body.contains_key(key) {
                body.insert(key.clone(), value.clone());
            } else if !merged.contains(&key.as_str()) {
                notes.push(EncodeNote {
                    at: format!("extra/{key}"),
                    note: format!(
                        "`{key}` is set by the format itself; the extra value was not sent"
                    ),
                });
            }
        }
    }

    /// Adds an extra top-level body field.
    pub fn with_extra(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }
}

/// Something a wire format could not send as it was, and what it did instead. Nothing is
/// dropped without one of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeNote {
    /// Where: a tool name, a transcript row (`transcript/3`), a content block.
    pub at: String,
    /// What was done, in a sentence.
    pub note: String,
}

impl fmt::Display for EncodeNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.note)
    }
}

/// A request body and the notes of what had to change.
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedRequest {
    /// The JSON body.
    pub body: Value,
    /// What could not be sent as it was.
    pub notes: Vec<EncodeNote>,
}

/// A request the wire format cannot encode at all (a forced tool that is not described, two
/// tools whose wire names collide).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError {
    message: String,
}

impl EncodeError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EncodeError {}

/// Puts a model's arguments back into a tool's canonical shape.
///
/// A strict schema makes every optional property required and nullable, so the model sends
/// `null` where the tool's own schema says "absent"; the lowering that made the strict schema
/// knows which nulls to remove.
pub trait RestoreArguments: Send + Sync + fmt::Debug {
    /// Restores `arguments` in place.
    fn restore_arguments(&self, arguments: &mut Value);
}

/// One tool as a wire format sends it this turn.
#[derive(Clone, Debug)]
pub struct PreparedTool {
    /// The registered name: what the dispatcher, the ledger and the host see.
    pub name: String,
    /// The name the model sees.
    pub wire_name: String,
    /// The description.
    pub description: Option<String>,
    /// The parameters schema in the format's dialect.
    pub parameters: Value,
    /// Whether the provider is told to enforce the schema strictly.
    pub strict: bool,
    /// What puts the model's arguments back in canonical shape, when the lowering changed it.
    pub restore: Option<Arc<dyn RestoreArguments>>,
}

impl PreparedTool {
    /// A tool sent under its own name with this schema, not strict.
    pub fn new(name: impl Into<String>, parameters: Value) -> Self {
        let name = name.into();
        Self {
            wire_name: name.clone(),
            name,
            description: None,
            parameters,
            strict: false,
            restore: None,
        }
    }

    /// Sends it under another name.
    pub fn with_wire_name(mut self, wire_name: impl Into<String>) -> Self {
        self.wire_name = wire_name.into();
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Marks the schema strict, with what restores its arguments.
    pub fn with_strict(mut self, restore: Option<Arc<dyn RestoreArguments>>) -> Self {
        self.strict = true;
        self.restore = restore;
        self
    }
}

/// A turn's tools as one wire format sends them, with both directions of the name mapping.
#[derive(Clone, Debug, Default)]
pub struct ToolTable {
    tools: Vec<PreparedTool>,
    by_wire: HashMap<String, usize>,
    by_name: HashMap<String, usize>,
    rewriter: NameRewriter,
    /// The provider's rule, for names outside the table.
    rule: Option<NameRule>,
}

impl ToolTable {
    /// A table of these tools, in request order. Two tools with one wire name (or one
    /// registered name) are an error naming both.
    pub fn new(tools: Vec<PreparedTool>) -> Result<Self, EncodeError> {
        let mut by_wire = HashMap::with_capacity(tools.len());
        let mut by_name = HashMap::with_capacity(tools.len());
        for (index, tool) in tools.iter().enumerate() {
            if let Some(other) = by_wire.insert(tool.wire_name.clone(), index) {
                return Err(EncodeError::new(format!(
                    "tools `{}` and `{}` would both be sent as `{}`",
                    tools[other].name, tool.name, tool.wire_name
                )));
            }
            if by_name.insert(tool.name.clone(), index).is_some() {
                return Err(EncodeError::new(format!(
                    "tool `{}` is described twice",
                    tool.name
                )));
            }
        }
        let rewriter = NameRewriter::new(
            tools
                .iter()
                .map(|tool| (tool.name.clone(), tool.wire_name.clone()))
                .collect(),
        );
        Ok(Self {
            tools,
            by_wire,
            by_name,
            rewriter,
            rule: None,
        })
    }

    /// The same table, sending a name outside it (a past call to a tool this turn does not
    /// offer) as `rule` accepts: `billing.refund` as `billing_refund` for OpenAI.
    pub fn with_name_rule(mut self, rule: NameRule) -> Self {
        self.rule = Some(rule);
        self
    }

    /// The tools, in request order.
    pub fn tools(&self) -> &[PreparedTool] {
        &self.tools
    }

    /// The tool the model called by `wire_name`.
    pub fn by_wire_name(&self, wire_name: &str) -> Option<&PreparedTool> {
        self.by_wire.get(wire_name).map(|&index| &self.tools[index])
    }

    /// The tool registered as `name`.
    pub fn by_name(&self, name: &str) -> Option<&PreparedTool> {
        self.by_name.get(name).map(|&index| &self.tools[index])
    }

    /// The registered name of what the model called: the mapped name, or the model's own text
    /// when it called a tool it was not shown (the dispatcher then answers `unknown_tool`).
    pub fn registered_name<'a>(&'a self, wire_name: &'a str) -> &'a str {
        self.by_wire_name(wire_name)
            .map_or(wire_name, |tool| tool.name.as_str())
    }

    /// The name the model saw for the tool registered as `name`. A name not in the table is
    /// itself, made valid under the table's name rule when it has one
    /// ([`with_name_rule`](Self::with_name_rule)).
    pub fn wire_name<'a>(&'a self, name: &'a str) -> Cow<'a, str> {
        if let Some(tool) = self.by_name(name) {
            return Cow::Borrowed(&tool.wire_name);
        }
        match self.rule {
            Some(rule) => {
                let taken = |wire: &str| self.by_wire.contains_key(wire);
                match unlisted_wire(rule, name, taken) {
                    wire if wire == name => Cow::Borrowed(name),
                    wire => Cow::Owned(wire),
                }
            }
            None => Cow::Borrowed(name),
        }
    }

    /// `text` with every registered name that the model saw under another name replaced by that
    /// name, whole words only, so an error message speaks the model's names.
    pub fn to_wire_text<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        self.rewriter.rewrite(text)
    }

    /// Arguments the model sent for the tool registered as `name`, back in the tool's canonical
    /// shape (a strict schema's `null` for an optional field becomes absent).
    pub fn restore_arguments(&self, name: &str, arguments: &mut Value) {
        if let Some(restore) = self.by_name(name).and_then(|tool| tool.restore.as_ref()) {
            restore.restore_arguments(arguments);
        }
    }
}

/// Decodes one response stream, event by event.
pub trait StreamDecoder: Send {
    /// Decodes one server-sent event, pushing what it completes to `out`. An `error` event from
    /// the provider is an `Err` with the provider's kind and message.
    fn feed(
        &mut self,
        event: SseEvent<'_>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError>;

    /// The stream ended: the whole response, or, when it ended before the provider said it was
    /// done, a [`TruncatedStream`](crate::run::ProviderErrorKind::TruncatedStream) error
    /// carrying what was complete.
    fn finish(
        self: Box<Self>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<ProviderResponse, ProviderError>;

    /// Whether the provider has said the response is done (`[DONE]`, `message_stop`,
    /// `response.completed`). The HTTP reader then waits only a moment for the body's end
    /// before it calls [`finish`](Self::finish), so a server that holds the connection open
    /// after its end marker costs no long wait. A format without an end marker keeps the
    /// default, `false`, and is read to the end of the body.
    fn is_done(&self) -> bool {
        false
    }
}

/// One provider API's shapes.
pub trait WireFormat: Send + Sync + 'static {
    /// The format's name, written into the [`ReplayState`](crate::call::ReplayState) it keeps:
    /// `openai-chat`, `openai-responses`, `anthropic`, `gemini`.
    fn name(&self) -> &'static str;

    /// The request body for one turn.
    fn encode_request(
        &self,
        request: &ProviderRequest<'_>,
        tools: &ToolTable,
        settings: &ModelSettings,
    ) -> Result<EncodedRequest, EncodeError>;

    /// A whole (non-streamed) response body.
    fn decode_response(
        &self,
        body: &[u8],
        tools: &ToolTable,
    ) -> Result<ProviderResponse, ProviderError>;

    /// A decoder for one streamed response.
    fn stream_decoder(&self, tools: Arc<ToolTable>) -> Box<dyn StreamDecoder>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table() -> ToolTable {
        ToolTable::new(vec![
            PreparedTool::new("billing.refund", json!({"type": "object"}))
                .with_wire_name("billing_refund"),
            PreparedTool::new("billing", json!({"type": "object"})),
        ])
        .unwrap()
    }

    #[test]
    fn names_map_both_ways_and_unknown_names_pass_through() {
        let table = table();
        assert_eq!(table.registered_name("billing_refund"), "billing.refund");
        assert_eq!(table.registered_name("billing"), "billing");
        assert_eq!(table.registered_name("made_up"), "made_up");
        assert_eq!(table.wire_name("billing.refund"), "billing_refund");
        assert_eq!(
            table.to_wire_text("Tool billing.refund is not allowed; billing is."),
            "Tool billing_refund is not allowed; billing is."
        );
    }

    #[test]
    fn two_tools_with_one_wire_name_are_refused_by_name() {
        let error = ToolTable::new(vec![
            PreparedTool::new("a.b", json!({})).with_wire_name("a_b"),
            PreparedTool::new("a_b", json!({})),
        ])
        .unwrap_err();
        assert_eq!(
            error.message(),
            "tools `a.b` and `a_b` would both be sent as `a_b`"
        );
    }

    #[derive(Debug)]
    struct DropNulls;

    impl RestoreArguments for DropNulls {
        fn restore_arguments(&self, arguments: &mut Value) {
            if let Value::Object(map) = arguments {
                map.retain(|_, value| !value.is_null());
            }
        }
    }

    #[test]
    fn strict_tools_restore_their_arguments_and_others_are_left_alone() {
        let table = ToolTable::new(vec![
            PreparedTool::new("strict", json!({})).with_strict(Some(Arc::new(DropNulls))),
            PreparedTool::new("loose", json!({})),
        ])
        .unwrap();
        let mut arguments = json!({"a": 1, "b": null});
        table.restore_arguments("strict", &mut arguments);
        assert_eq!(arguments, json!({"a": 1}));
        let mut arguments = json!({"a": 1, "b": null});
        table.restore_arguments("loose", &mut arguments);
        assert_eq!(arguments, json!({"a": 1, "b": null}));
    }
}
