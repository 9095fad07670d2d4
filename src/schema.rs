//! JSON Schema generation for tool parameters and outputs, with the settings models expect.
//!
//! `#[tool]` calls [`parameters_for`] for you; call it yourself when building a
//! [`ToolDefinition`](crate::ToolDefinition) by hand from a Rust type. The `schemars` crate is
//! re-exported for `#[derive(prism::schema::schemars::JsonSchema)]` without a dependency of your
//! own.
//!
//! Each provider reads a different dialect of JSON Schema. [`lower`] turns a tool's canonical
//! schema into one [`Dialect`] (OpenAI strict and not, Anthropic, Gemini, MCP, no-`$ref`),
//! listing every [`Downgrade`]; a [`LoweringCache`] keeps each definition's lowering.

pub use prism_tools::schema::{
    Dialect, Downgrade, DowngradeAction, LoweredSchema, LoweringCache, LoweringError,
    LoweringErrorKind, lower, output_schema_for, parameters_for, schemars,
};
