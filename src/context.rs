//! What a tool receives beside its arguments.
//!
//! [`ToolExecutionContext`](crate::ToolExecutionContext) and [`State`](crate::State) are at the
//! crate root. Here are the context's parts ([`CancellationToken`], [`ProgressUpdate`]) and the
//! extractor traits: a parameter whose type implements [`FromToolContext`] (answering an
//! [`Extraction`]) is made from the call instead of the model's arguments, and [`FromState`]
//! takes one part of a host's shared state.

pub use prism_tools::context::{CancellationToken, ProgressUpdate};
pub use prism_tools::extract::{Extraction, FromState, FromToolContext, PendingExtraction};
