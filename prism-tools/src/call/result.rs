//! [`ToolResult`]: the one answer every call gets, its [`ToolOutcome`] and its wire shape
//! (`{"toolCallId", "name", "value"}` or `{"toolCallId", "name", "error": {…}}`).

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::content::ContentBlock;
use super::error_info::{BlockReason, ErrorInfo};
use super::output::Blocks;
use super::tool_call::CallId;

/// How a call ended.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolOutcome {
    /// The tool ran and returned this value.
    Value(Value),
    /// A guard refused the call (or, for output guardrails, its result). `error.reason` is set.
    Blocked(ErrorInfo),
    /// The tool ran (or was about to) and failed.
    Error(ErrorInfo),
}

impl ToolOutcome {
    /// What `error` ended: a blocked call when it names the guard that refused (its `reason`),
    /// a failed one otherwise.
    pub(crate) fn from_error(error: ErrorInfo) -> Self {
        if error.reason.is_some() {
            Self::Blocked(error)
        } else {
            Self::Error(error)
        }
    }
}

/// The one result every tool call gets.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub tool_call_id: CallId,
    /// The tool's name (after middleware; for unknown tools, the name the model used).
    pub name: Arc<str>,
    /// How it ended.
    pub outcome: ToolOutcome,
    /// Content blocks and the untrusted mark, boxed: most results have neither, and a result is
    /// moved through every step of the pipeline.
    extras: Option<Box<ResultExtras>>,
}

/// What few results carry; see [`ToolResult::content`] and [`ToolResult::is_untrusted`].
#[derive(Clone, Debug, Default, PartialEq)]
struct ResultExtras {
    content: Vec<ContentBlock>,
    untrusted: bool,
}

impl ToolResult {
    /// A successful result.
    pub fn value(tool_call_id: CallId, name: impl Into<Arc<str>>, value: Value) -> Self {
        Self::new(tool_call_id, name.into(), ToolOutcome::Value(value))
    }

    /// A blocked result.
    pub fn blocked(
        tool_call_id: CallId,
        name: impl Into<Arc<str>>,
        reason: BlockReason,
        message: impl Into<String>,
    ) -> Self {
        Self::new(
            tool_call_id,
            name.into(),
            ToolOutcome::Blocked(ErrorInfo::blocked(reason, message)),
        )
    }

    /// A failed result.
    pub fn error(tool_call_id: CallId, name: impl Into<Arc<str>>, error: ErrorInfo) -> Self {
        Self::new(tool_call_id, name.into(), ToolOutcome::Error(error))
    }

    /// A result with this outcome, no content blocks, trusted.
    pub fn new(tool_call_id: CallId, name: Arc<str>, outcome: ToolOutcome) -> Self {
        Self {
            tool_call_id,
            name,
            outcome,
            extras: None,
        }
    }

    fn extras_mut(&mut self) -> &mut ResultExtras {
        self.extras.get_or_insert_with(Box::default)
    }

    /// Adds content blocks: what the tool returned beside (or, with a `null` value, instead of)
    /// its value.
    pub fn with_content(mut self, content: impl IntoIterator<Item = ContentBlock>) -> Self {
        let mut content = content.into_iter().peekable();
        if content.peek().is_some() {
            self.extras_mut().content.extend(content);
        }
        self
    }

    /// Marks the output as coming from outside the host's trust (a web page, a remote MCP
    /// server): wire formats fence it as data for the model.
    pub fn with_untrusted(mut self, untrusted: bool) -> Self {
        if untrusted || self.extras.is_some() {
            self.extras_mut().untrusted = untrusted;
        }
        self
    }

    /// This result with `content` and the untrusted mark; a plain result (no blocks, trusted)
    /// comes back untouched, without a call.
    #[inline]
    pub(crate) fn attach(self, content: Blocks, untrusted: bool) -> Self {
        if content.is_none() && !untrusted {
            return self;
        }
        self.attach_extras(content, untrusted)
    }

    #[cold]
    #[inline(never)]
    fn attach_extras(mut self, content: Blocks, untrusted: bool) -> Self {
        let extras = self.extras_mut();
        if let Some(content) = content {
            extras.content.extend(*content);
        }
        extras.untrusted = untrusted;
        self
    }

    /// The content blocks, in the order the tool returned them.
    pub fn content(&self) -> &[ContentBlock] {
        self.extras.as_ref().map_or(&[], |extras| &extras.content)
    }

    /// True when the output comes from outside the host's trust.
    pub fn is_untrusted(&self) -> bool {
        self.extras.as_ref().is_some_and(|extras| extras.untrusted)
    }

    /// The value, when the call succeeded.
    pub fn as_value(&self) -> Option<&Value> {
        match &self.outcome {
            ToolOutcome::Value(value) => Some(value),
            _ => None,
        }
    }

    /// The error, when the call was blocked or failed.
    pub fn error_info(&self) -> Option<&ErrorInfo> {
        match &self.outcome {
            ToolOutcome::Value(_) => None,
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => Some(error),
        }
    }

    /// The block reason, when a guard refused the call.
    pub fn block_reason(&self) -> Option<BlockReason> {
        match &self.outcome {
            ToolOutcome::Blocked(error) => error.reason,
            _ => None,
        }
    }

    /// True when the tool ran and returned a value.
    pub fn is_success(&self) -> bool {
        matches!(self.outcome, ToolOutcome::Value(_))
    }
}

/// A result as it is read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolResultWire<'a> {
    tool_call_id: CallId,
    name: Cow<'a, str>,
    #[serde(default)]
    value: Option<Cow<'a, Value>>,
    #[serde(default)]
    error: Option<Cow<'a, ErrorInfo>>,
    #[serde(default)]
    content: Vec<ContentBlock>,
    #[serde(default)]
    untrusted: bool,
}

/// An outcome as it is read: `value`, or `error` (whose `reason` says whether it was blocked).
#[derive(Deserialize)]
struct OutcomeWire<'a> {
    #[serde(default)]
    value: Option<Cow<'a, Value>>,
    #[serde(default)]
    error: Option<Cow<'a, ErrorInfo>>,
}

impl OutcomeWire<'_> {
    fn into_outcome(self) -> ToolOutcome {
        match (self.value, self.error) {
            (_, Some(error)) => ToolOutcome::from_error(error.into_owned()),
            (Some(value), None) => ToolOutcome::Value(value.into_owned()),
            // A result whose value is JSON null omits nothing but is still a value.
            (None, None) => ToolOutcome::Value(Value::Null),
        }
    }
}

impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ResultRef::new(&self.tool_call_id, &self.name, &self.outcome)
            .with_content(self.content(), self.is_untrusted())
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = ToolResultWire::deserialize(deserializer)?;
        Ok(Self {
            tool_call_id: wire.tool_call_id,
            name: Arc::from(wire.name.as_ref()),
            outcome: OutcomeWire {
                value: wire.value,
                error: wire.error,
            }
            .into_outcome(),
            extras: None,
        }
        .with_content(wire.content)
        .with_untrusted(wire.untrusted))
    }
}

/// A result as it is written, borrowed from wherever its parts are kept (a ledger row, an event).
/// Its content is the blocks themselves (`C` = [`ContentBlock`]) or their records
/// ([`ContentRecord`](super::ContentRecord)).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResultRef<'a, C: Serialize = ContentBlock> {
    tool_call_id: &'a CallId,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorInfo>,
    #[serde(skip_serializing_if = "<[C]>::is_empty")]
    content: &'a [C],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    untrusted: bool,
}

impl<'a, C: Serialize> ResultRef<'a, C> {
    /// A value result.
    pub(crate) fn value(tool_call_id: &'a CallId, name: &'a str, value: &'a Value) -> Self {
        Self {
            tool_call_id,
            name,
            value: Some(value),
            error: None,
            content: &[],
            untrusted: false,
        }
    }

    pub(crate) fn new(tool_call_id: &'a CallId, name: &'a str, outcome: &'a ToolOutcome) -> Self {
        let (value, error) = match outcome {
            ToolOutcome::Value(value) => (Some(value), None),
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => (None, Some(error)),
        };
        Self {
            tool_call_id,
            name,
            value,
            error,
            content: &[],
            untrusted: false,
        }
    }

    /// This result with content blocks (or their records) and the untrusted mark.
    pub(crate) fn with_content(mut self, content: &'a [C], untrusted: bool) -> Self {
        self.content = content;
        self.untrusted = untrusted;
        self
    }
}

/// A written result as a ledger row reads it back: its outcome and its output record.
pub(crate) type WrittenResult = (ToolOutcome, Option<Box<super::OutputRecord>>);

/// Reads a written result's outcome and its output record together; its ids, which the row carries
/// beside it, are ignored.
pub(crate) fn optional_result<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<WrittenResult>, D::Error> {
    #[derive(Deserialize)]
    struct Written {
        #[serde(default)]
        value: Option<Value>,
        #[serde(default)]
        error: Option<ErrorInfo>,
        #[serde(default)]
        content: Vec<super::ContentRecord>,
        #[serde(default)]
        untrusted: bool,
    }
    Ok(
        Option::<Written>::deserialize(deserializer)?.map(|written| {
            let outcome = OutcomeWire {
                value: written.value.map(Cow::Owned),
                error: written.error.map(Cow::Owned),
            };
            let output = super::OutputRecord::boxed(written.content, written.untrusted);
            (outcome.into_outcome(), output)
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::call::ErrorCode;

    #[test]
    fn results_round_trip_through_the_wire_shape() {
        let ok = ToolResult::value("c1".into(), "add", json!(3));
        let text = serde_json::to_value(&ok).unwrap();
        assert_eq!(text, json!({"toolCallId": "c1", "name": "add", "value": 3}));
        assert_eq!(serde_json::from_value::<ToolResult>(text).unwrap(), ok);

        let blocked = ToolResult::blocked(
            "c2".into(),
            "x",
            BlockReason::UnknownTool,
            "Unknown tool: x",
        );
        let text = serde_json::to_value(&blocked).unwrap();
        assert_eq!(
            text,
            json!({"toolCallId": "c2", "name": "x", "error": {"code": "unknown_tool", "message": "Unknown tool: x", "reason": "unknown_tool"}})
        );
        assert_eq!(serde_json::from_value::<ToolResult>(text).unwrap(), blocked);

        let failed = ToolResult::error(
            "c3".into(),
            "y",
            ErrorInfo::new(ErrorCode::ToolError, "boom"),
        );
        let back: ToolResult =
            serde_json::from_value(serde_json::to_value(&failed).unwrap()).unwrap();
        assert_eq!(back, failed);

        let rich = ToolResult::value("c4".into(), "chart", Value::Null)
            .with_content([ContentBlock::image_bytes(b"png", "image/png")])
            .with_untrusted(true);
        let text = serde_json::to_value(&rich).unwrap();
        assert_eq!(
            text,
            json!({"toolCallId": "c4", "name": "chart", "value": null,
                   "content": [{"type": "image", "data": "cG5n", "mimeType": "image/png"}],
                   "untrusted": true})
        );
        assert_eq!(serde_json::from_value::<ToolResult>(text).unwrap(), rich);
    }
}
