//! How a generated tool decodes its arguments.
//!
//! serde's derive would decode a tool's argument struct through code generated, and compiled,
//! for every tool: a visitor, and every routine of the JSON deserializer it drives, twice over
//! (once fast, once tracking the path for the error message). For an argument list without serde
//! attributes the macro instead writes one small loop over the object's entries, which hands
//! each value to [`decode_field`]: generic over the field's type only, so compiled once per type
//! (an `i64`, a `String`) for every tool of the crate. The behaviour is serde's, message for
//! message: entries in the object's order, the first unknown key refused, missing arguments
//! reported in declaration order, an `Option` left out decoded as `None`.

use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use serde_path_to_error::Segment;

use super::{ToolArgument, WholeArguments};
use crate::call::json_kind;
use crate::error::Refusal;
use crate::tool::{decode_arguments, invalid_arguments as refusal};

/// Arguments decoded from a call's JSON by the code `#[tool]` generates.
pub trait DecodeArguments: Sized {
    /// Decodes `arguments`; a failure names the tool `tool` and the JSON path of the offending
    /// field.
    fn decode(tool: &str, arguments: &Value) -> Result<Self, Refusal>;
}

impl<S: ?Sized, T: ToolArgument> DecodeArguments for WholeArguments<S, T> {
    #[inline]
    fn decode(tool: &str, arguments: &Value) -> Result<Self, Refusal> {
        decode_arguments::<T>(tool, arguments).map(|value| Self(value, PhantomData))
    }
}

/// Decodes arguments through their own serde `Deserialize` (arguments with serde attributes).
#[inline]
pub fn decode_with_serde<A: DeserializeOwned>(tool: &str, arguments: &Value) -> Result<A, Refusal> {
    decode_arguments::<A>(tool, arguments)
}

/// `Deserialize` for generated arguments that decode themselves: through a JSON value. Nothing
/// calls it on the dispatch path; it makes the arguments satisfy `Tool::Args`.
pub fn deserialize_decoded<'de, A, D>(tool: &str, deserializer: D) -> Result<A, D::Error>
where
    A: DecodeArguments,
    D: Deserializer<'de>,
{
    let value = Value::deserialize(deserializer)?;
    A::decode(tool, &value).map_err(|refusal| de::Error::custom(refusal.message))
}

/// The entries of the arguments. The dispatcher refuses arguments that are not an object before
/// any tool sees them; a caller that goes around it gets a refusal here.
pub fn arguments_object<'a>(
    tool: &str,
    arguments: &'a Value,
) -> Result<&'a Map<String, Value>, Refusal> {
    arguments.as_object().ok_or_else(|| {
        refusal(
            tool,
            "the top level",
            &format!(
                "expected a JSON object of arguments, not {}",
                json_kind(arguments)
            ),
        )
    })
}

/// Decodes the value of the argument `key`.
#[inline]
pub fn decode_field<T: DeserializeOwned>(
    tool: &str,
    key: &str,
    value: &Value,
) -> Result<T, Refusal> {
    T::deserialize(value).map_err(|first| field_refusal::<T>(tool, key, value, &first))
}

/// The value of an argument the model left out: `None` for an `Option` (as serde decodes a
/// missing field), a refusal otherwise.
pub fn missing_field<T: DeserializeOwned>(tool: &str, key: &'static str) -> Result<T, Refusal> {
    T::deserialize(Missing(key)).map_err(|error| refusal(tool, "the top level", &error.to_string()))
}

/// The refusal of a key that names no argument; `expected` lists the arguments.
#[cold]
pub fn unknown_field(tool: &str, key: &str, expected: &'static [&'static str]) -> Refusal {
    let error = <serde_json::Error as de::Error>::unknown_field(key, expected);
    refusal(tool, &format!("`{key}`"), &error.to_string())
}

/// Decodes the field again, tracking the path inside it, for the message.
#[cold]
fn field_refusal<T: DeserializeOwned>(
    tool: &str,
    key: &str,
    value: &Value,
    first: &serde_json::Error,
) -> Refusal {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Err(error) => {
            let inner = error.path();
            let location = match inner.iter().next() {
                None => format!("`{key}`"),
                Some(Segment::Seq { .. }) => format!("`{key}{inner}`"),
                Some(_) => format!("`{key}.{inner}`"),
            };
            refusal(tool, &location, &error.into_inner().to_string())
        }
        // A decoder that fails once and then succeeds is not deterministic: report the first
        // failure at the field rather than invent a path inside it.
        Ok(_) => refusal(tool, &format!("`{key}`"), &first.to_string()),
    }
}

/// What serde's derive decodes a missing field from: nothing, which an `Option` takes as `None`
/// and every other type refuses with "missing field".
struct Missing(&'static str);

impl<'de> Deserializer<'de> for Missing {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}
