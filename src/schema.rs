//! JSON Schema generation for tool parameters and outputs, with the settings models expect.
//!
//! `#[tool]` calls [`parameters_for`] for you; call it yourself when building a
//! [`ToolDefinition`](crate::ToolDefinition) by hand from a Rust type. The `schemars` crate is
//! re-exported for `#[derive(prism::schema::schemars::JsonSchema)]` without a dependency of your
//! own.

pub use prism_tools::schema::{output_schema_for, parameters_for, schemars};
