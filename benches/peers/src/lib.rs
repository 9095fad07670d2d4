//! The arms of the dispatch benchmark: one tool, `add({a, b}) -> a + b`, called through Prism's
//! dispatcher, through two hand-written floors, and through the tool routers of rmcp and rig.
//!
//! Every arm starts from the same owned [`ToolCall`] and ends with the sum in whatever result type
//! its framework returns, so the differences the benchmark shows are what each framework does
//! between "a model asked for a tool" and "the model's answer is ready". The arms live in this
//! library rather than in the bench file so that `cargo test` can check that each one really
//! computes `2 + 3` before anyone reads a timing.
//!
//! This crate is its own workspace: the main workspace never builds rmcp or rig.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod floor;
pub mod prism_arms;
pub mod rig_arm;
pub mod rmcp_arm;
pub mod sink;

use prism_tools::ToolCall;
use serde::Deserialize;
use serde_json::json;

/// The arguments of `add`, shared by every arm that decodes into a Rust type.
///
/// Unknown fields are ignored, so the same tool serves the call that carries a 1 KiB note.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// The first addend.
    pub a: i64,
    /// The second addend.
    pub b: i64,
}

/// The body every arm runs.
pub fn add(args: AddArgs) -> i64 {
    args.a + args.b
}

/// The call every arm is fed: `add({"a": 2, "b": 3})`.
pub fn add_call() -> ToolCall {
    ToolCall::new("call_1", "add", json!({"a": 2, "b": 3}))
}

/// Length of the note carried by [`add_call_with_note`].
pub const NOTE_BYTES: usize = 1024;

/// `add` with 1 KiB of string arguments beside the numbers, as a model might send a long free-text
/// field; `add` ignores it, but every guard that reads arguments (limits, redaction of the started
/// row and event) has to walk it.
pub fn add_call_with_note() -> ToolCall {
    let note: String = "The quick brown fox jumps over the lazy dog. "
        .chars()
        .cycle()
        .take(NOTE_BYTES)
        .collect();
    ToolCall::new("call_1", "add", json!({"a": 2, "b": 3, "note": note}))
}
