//! Defining a tool without the macros, and the handler behind every definition.
//!
//! `#[tool]` and [`Tool`](crate::Tool) cover most tools. Build a
//! [`ToolDefinition`](crate::ToolDefinition) from a closure with [`ToolDefinitionBuilder`]
//! (`ToolDefinition::builder(name)`) when the schema is only known at run time, or implement
//! [`ToolHandler`] for full control over the two steps of a call: `prepare` decodes the arguments
//! (refusing with a [`Refusal`]) and returns the unpolled body, a [`ToolFuture`]; awaiting it is
//! the side effect.

pub use prism_tools::definition::{
    NotPrepared, PendingBody, Prepared, ToolAnnotations, ToolDefinitionBuilder, ToolFuture,
    ToolHandler, ToolIcon,
};
pub use prism_tools::error::Refusal;
pub use prism_tools::tool::decode_arguments;
