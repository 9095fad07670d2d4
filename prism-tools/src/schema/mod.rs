//! JSON Schema for tool parameters: generation with fixed settings, and lowering to each
//! provider's dialect.
//!
//! ## Generation
//!
//! Models read these schemas, so they are kept lean and predictable: draft 2020-12, no `$schema`
//! and no `title` (the name of a generated argument struct must not leak into the prompt),
//! `Option<T>` fields not required, and an object at the root, because tool arguments are always
//! a JSON object. Add `#[serde(deny_unknown_fields)]` to an argument type to get
//! `additionalProperties: false`; `#[tool]` does so for the argument structs it generates.
//!
//! Properties are listed in the order their parameters or fields are declared, and `required`
//! too: a model reads the schema as text, top to bottom, and the author's order (the subject
//! first, options last) is the one that reads best. This needs serde_json's `preserve_order`
//! feature, which this crate turns on; Cargo then turns it on for every crate of the build,
//! which is what most programs that send schemas to models do anyway (rmcp and rig do). With
//! it, a `serde_json::Map` is an insertion-ordered hash map instead of a sorted tree: key order
//! is kept in every JSON value, and nothing in this crate depends on sorted keys. Digests of JSON
//! values (effect keys, approval keys, `ids_hash`) use the canonical form of RFC 8785, which
//! sorts keys itself, so they are the same whichever order a value's keys arrived in.
//!
//! ## Lowering
//!
//! One canonical schema per tool (what `#[tool]` generated, what the host gave the builder, what
//! a remote MCP server sent); each provider gets it through [`lower`], a pure function of the
//! schema and a [`Dialect`] that returns a [`LoweredSchema`]: the schema to send, the strict flag
//! to send with it, every change made ([`Downgrade`]: JSON pointer, keyword, what was done), and
//! what [`LoweredSchema::restore_arguments`] needs to decode a strict call exactly. What cannot be
//! lowered is a [`LoweringError`] with the pointer; nothing panics and nothing changes silently.
//! [`LoweringCache`] keeps the result per definition and dialect.
//!
//! Strict modes (OpenAI, Anthropic) need closed objects, so a schema with an open map
//! (`additionalProperties` a schema or `true`: `HashMap<String, T>`, common in MCP servers), a
//! tuple, or a subschema accepting any value (`serde_json::Value`) is lowered non-strict for that
//! tool, with [`LoweredSchema::non_strict_reason`]. Under OpenAI's strict mode every property is
//! required, so an optional one becomes nullable and the model sends `null` to leave it out;
//! [`LoweredSchema::restore_arguments`] removes those `null`s before decoding, so `#[serde(default)]`
//! and `Option<T>` fields decode exactly as if the property had been absent.
//!
//! The dialects without references (Gemini `parameters`, [`Dialect::NoRef`]) inline every local
//! `$ref`; a recursive type cannot be inlined and is an error
//! ([`LoweringErrorKind::RecursiveReference`]): lower it for a dialect that keeps references.

mod anthropic;
mod cache;
mod dialect;
mod edit;
mod formats;
mod gemini;
mod gemini_json;
pub(crate) mod keywords;
mod lower;
mod lowered;
mod lowering_error;
mod nullable;
mod openai;
mod references;
mod restore;
mod strict;
mod walk;

pub use cache::LoweringCache;
pub use dialect::Dialect;
pub use lower::lower;
pub use lowered::{Downgrade, DowngradeAction, LoweredSchema};
pub use lowering_error::{LoweringError, LoweringErrorKind};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

pub use schemars;

/// The schema of `T` as tool parameters.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// # #[derive(serde::Deserialize)]
/// struct Search {
///     /// What to look for.
///     query: String,
///     limit: Option<u32>,
/// }
///
/// let schema = prism::schema::parameters_for::<Search>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["query"]));
/// assert_eq!(schema["additionalProperties"], false);
/// assert!(schema.get("title").is_none() && schema.get("$schema").is_none());
/// ```
///
/// A type whose schema is not an object (a bare integer, say) cannot be a parameter list; its
/// schema is returned as it is so that the mistake shows, and `#[tool]` never produces one.
pub fn parameters_for<T: JsonSchema>() -> Value {
    schema_for::<T>()
}

/// The schema of `T` as a tool output (no `$schema`, no `title`): what `T` serializes to, so
/// `skip_serializing_if` and serialize-only renames are described as the output has them.
pub fn output_schema_for<T: JsonSchema>() -> Value {
    schema_with::<T>(SchemaSettings::draft2020_12().for_serialize())
}

fn schema_for<T: JsonSchema>() -> Value {
    schema_with::<T>(SchemaSettings::draft2020_12())
}

fn schema_with<T: JsonSchema>(settings: SchemaSettings) -> Value {
    let generator = settings
        .with(|settings| settings.meta_schema = None)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut schema {
        // Shifted out, not swapped: the keys after it keep their order.
        root.shift_remove("title");
    }
    schema
}
