//! The response shapes of `generateContent` and `streamGenerateContent`, read borrowed.
//!
//! Only the fields the decoder uses are named; serde skips the rest (safety ratings, citation
//! metadata, token details by modality) without building them.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Number, Value};

/// One response, or one chunk of a streamed one (a chunk has the same shape).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Chunk<'a> {
    #[serde(default, borrow)]
    pub candidates: Vec<Candidate<'a>>,
    #[serde(default)]
    pub usage_metadata: Option<UsageMetadata>,
    #[serde(default, borrow)]
    pub model_version: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub response_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub prompt_feedback: Option<PromptFeedback<'a>>,
    #[serde(default, borrow)]
    pub error: Option<ApiError<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Candidate<'a> {
    #[serde(default, borrow)]
    pub content: Option<Content<'a>>,
    #[serde(default, borrow)]
    pub finish_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    pub index: Option<u32>,
}

#[derive(Deserialize)]
pub(super) struct Content<'a> {
    #[serde(default, borrow)]
    pub parts: Vec<Part<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Part<'a> {
    #[serde(default, borrow)]
    pub text: Option<Cow<'a, str>>,
    #[serde(default)]
    pub thought: bool,
    #[serde(default, borrow)]
    pub thought_signature: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub function_call: Option<FunctionCall<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FunctionCall<'a> {
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(default)]
    pub args: Option<Value>,
    #[serde(default, borrow)]
    pub partial_args: Vec<PartialArg<'a>>,
    #[serde(default)]
    pub will_continue: bool,
}

/// One piece of a Vertex streamed call's arguments: a value at a JSON path.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PartialArg<'a> {
    #[serde(borrow)]
    pub json_path: Cow<'a, str>,
    #[serde(default, borrow)]
    pub string_value: Option<Cow<'a, str>>,
    #[serde(default)]
    pub number_value: Option<Number>,
    #[serde(default)]
    pub bool_value: Option<bool>,
    #[serde(default)]
    pub null_value: Option<IgnoredAny>,
    #[serde(default)]
    pub will_continue: bool,
}

#[derive(Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(super) struct UsageMetadata {
    #[serde(default)]
    pub prompt_token_count: Option<u64>,
    #[serde(default)]
    pub candidates_token_count: Option<u64>,
    #[serde(default)]
    pub cached_content_token_count: Option<u64>,
    #[serde(default)]
    pub thoughts_token_count: Option<u64>,
    #[serde(default)]
    pub tool_use_prompt_token_count: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PromptFeedback<'a> {
    #[serde(default, borrow)]
    pub block_reason: Option<Cow<'a, str>>,
}

/// `{"error": {"code", "message", "status"}}`, in a body or as a stream event.
#[derive(Deserialize)]
pub(super) struct ApiError<'a> {
    #[serde(default)]
    pub code: Option<u16>,
    #[serde(default, borrow)]
    pub message: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub status: Option<Cow<'a, str>>,
}
