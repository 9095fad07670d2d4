//! JSON Schema generation for tool parameters, with fixed settings.
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

/// The schema of `T` as a tool output (no `$schema`, no `title`).
pub fn output_schema_for<T: JsonSchema>() -> Value {
    schema_for::<T>()
}

fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut schema {
        // Shifted out, not swapped: the keys after it keep their order.
        root.shift_remove("title");
    }
    schema
}
