//! The Messages API's response shapes, borrowed from the bytes they arrive in.
//!
//! Only what the decoder reads is typed; a content block is kept as raw JSON until its type is
//! known, so blocks this crate does not model (server tool results, compaction, fallback…) pass
//! through whole into the replay state.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

/// One streamed event, or the envelope of an error body.
#[derive(Deserialize)]
pub(super) struct Event<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(default)]
    pub index: Option<usize>,
    #[serde(default, borrow)]
    pub message: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub content_block: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub delta: Option<&'a RawValue>,
    #[serde(default)]
    pub usage: Option<UsageWire>,
    #[serde(default, borrow)]
    pub error: Option<ErrorWire<'a>>,
}

/// A whole message: the body of a non-streamed response, or `message_start`'s message.
#[derive(Deserialize)]
pub(super) struct MessageWire<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub content: Vec<&'a RawValue>,
    #[serde(default, borrow)]
    pub stop_reason: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub stop_details: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub container: Option<&'a RawValue>,
    #[serde(default)]
    pub usage: Option<UsageWire>,
    #[serde(default, borrow)]
    pub error: Option<ErrorWire<'a>>,
}

/// `message_delta`'s delta.
#[derive(Default, Deserialize)]
pub(super) struct MessageDeltaWire<'a> {
    #[serde(default, borrow)]
    pub stop_reason: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub stop_details: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub container: Option<&'a RawValue>,
}

/// A content block delta of the kinds the decoder follows closely.
#[derive(Deserialize)]
pub(super) struct BlockDeltaWire<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(default, borrow)]
    pub text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub partial_json: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub thinking: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub signature: Option<Cow<'a, str>>,
}

/// The start of a content block: its type, and for a tool call its id and name.
#[derive(Deserialize)]
pub(super) struct BlockHeadWire<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub text: Option<Cow<'a, str>>,
}

/// Token counts; every field may be missing from a `message_delta`.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub(super) struct UsageWire {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens_details: Option<OutputDetailsWire>,
}

/// The breakdown of output tokens.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub(super) struct OutputDetailsWire {
    #[serde(default)]
    pub thinking_tokens: Option<u64>,
}

/// `{"type": "overloaded_error", "message": "…"}`.
#[derive(Deserialize)]
pub(super) struct ErrorWire<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub message: Option<Cow<'a, str>>,
}
