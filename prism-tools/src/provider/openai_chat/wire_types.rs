//! The response shapes of Chat Completions as borrowed serde structs: a whole completion, a
//! stream chunk, and the parts they share (the message or delta, tool call fragments, usage).
//!
//! Strings borrow from the body unless they hold escapes, and fields nobody reads are skipped
//! without being built, which keeps decoding a stream close to the cost of parsing it. Servers
//! that speak the format differ in details, so the structs accept what they send: `arguments` as
//! a JSON object, missing indexes and ids, `null` where OpenAI leaves a field out.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A whole (non-streamed) completion, or an error body.
#[derive(Deserialize)]
pub(super) struct Completion<'a> {
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub object: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<Value>,
}

/// One choice of a whole completion.
#[derive(Deserialize)]
pub(super) struct Choice<'a> {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(borrow, default)]
    pub message: Option<Delta<'a>>,
    #[serde(borrow, default)]
    pub finish_reason: Option<Cow<'a, str>>,
}

/// One streamed chunk.
#[derive(Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub choices: Option<Vec<ChunkChoice<'a>>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    /// Groq puts the stream's usage here instead of in `usage`.
    #[serde(default)]
    pub x_groq: Option<GroqExtra>,
    #[serde(default)]
    pub error: Option<Value>,
}

/// One choice of a chunk.
#[derive(Deserialize)]
pub(super) struct ChunkChoice<'a> {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(borrow, default)]
    pub delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    pub finish_reason: Option<Cow<'a, str>>,
}

/// A message (whole completion) or a delta (stream): the fields are the same.
#[derive(Deserialize)]
pub(super) struct Delta<'a> {
    #[serde(borrow, default)]
    pub content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub refusal: Option<Cow<'a, str>>,
    /// DeepSeek, vLLM and others send the model's reasoning here…
    #[serde(borrow, default)]
    pub reasoning_content: LenientText<'a>,
    /// …or here (OpenRouter, newer vLLM).
    #[serde(borrow, default)]
    pub reasoning: LenientText<'a>,
    #[serde(borrow, default)]
    pub tool_calls: Option<Vec<ToolCallPart<'a>>>,
}

/// A tool call, or a fragment of one in a stream.
#[derive(Deserialize)]
pub(super) struct ToolCallPart<'a> {
    #[serde(default)]
    pub index: Option<usize>,
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub function: Option<FunctionPart<'a>>,
}

/// The function of a tool call (fragment).
#[derive(Deserialize)]
pub(super) struct FunctionPart<'a> {
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub arguments: Option<Arguments<'a>>,
}

/// Argument text as OpenAI sends it, or a JSON value as some compatible servers do.
pub(super) enum Arguments<'a> {
    Text(Cow<'a, str>),
    Json(Value),
}

impl Arguments<'_> {
    /// The arguments as JSON text.
    pub fn into_text(self) -> String {
        match self {
            Self::Text(text) => text.into_owned(),
            Self::Json(value) => value.to_string(),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Arguments<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ArgumentsVisitor;

        impl<'de> Visitor<'de> for ArgumentsVisitor {
            type Value = Arguments<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("argument text or a JSON value")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Arguments::Text(Cow::Borrowed(text)))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Arguments::Text(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(Arguments::Text(Cow::Owned(text)))
            }

            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Self::Value, M::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(Arguments::Json)
            }

            fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<Self::Value, S::Error> {
                Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Arguments::Json)
            }

            fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
                Ok(Arguments::Json(Value::Bool(value)))
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
                Ok(Arguments::Json(Value::from(value)))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
                Ok(Arguments::Json(Value::from(value)))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
                Ok(Arguments::Json(Value::from(value)))
            }
        }

        deserializer.deserialize_any(ArgumentsVisitor)
    }
}

/// A text field that some servers fill with other shapes: text is kept, anything else (an
/// object, a list, `null`) reads as absent instead of failing the chunk.
#[derive(Default)]
pub(super) struct LenientText<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for LenientText<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;

        impl<'de> Visitor<'de> for TextVisitor {
            type Value = LenientText<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("text, or anything else to ignore")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(LenientText(Some(Cow::Borrowed(text))))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(LenientText(Some(Cow::Owned(text.to_owned()))))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(LenientText(Some(Cow::Owned(text))))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientText(None))
            }

            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientText(None))
            }
        }

        deserializer.deserialize_any(TextVisitor)
    }
}

/// Token counts as Chat Completions reports them.
#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    pub completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek's count of prompt tokens read from its cache.
    #[serde(default)]
    pub prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct PromptDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct CompletionDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// Groq's extra chunk field.
#[derive(Deserialize)]
pub(super) struct GroqExtra {
    #[serde(default)]
    pub usage: Option<WireUsage>,
}
