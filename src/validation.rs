//! Checking arguments against each tool's `parameters` schema.
//!
//! [`SchemaValidator`] adapts a [`SchemaEngine`] into an
//! [`ArgumentValidator`](crate::guard::ArgumentValidator); the JSON Schema engine,
//! `JsonSchemaEngine`, comes with the `json-schema` feature. Everything in this module is for
//! users, so it re-exports `prism_tools::validation` whole (feature-gated items included).

pub use prism_tools::validation::*;
