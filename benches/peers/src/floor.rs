//! The floors: the least a name-dispatched, JSON-argument tool call can cost, written by hand.
//!
//! Both floors look the tool up in a hash map, decode the arguments into [`AddArgs`], call the body
//! and serialise its output back to JSON. They differ in one thing only:
//!
//! - [`Floor::call_cloning`] (arm a1) decodes with `serde_json::from_value`, which consumes its
//!   input, from a clone of the arguments: what a framework pays when it keeps the call's
//!   arguments for its own records while the tool decodes them.
//! - [`Floor::call_borrowing`] (arm a2) decodes straight from `&Value`, with no clone. Nothing
//!   that still decodes JSON into a Rust type and looks the tool up by name can do much less.

use std::collections::HashMap;

use prism_tools::ToolCall;
use serde::Deserialize;
use serde_json::Value;

use crate::{AddArgs, add};

/// A tool body of the floor: plain function pointers, no boxing, no async.
type Body = fn(AddArgs) -> i64;

/// A map from tool name to body, with the same hasher as Prism's registry.
pub struct Floor {
    tools: HashMap<String, Body, foldhash::fast::RandomState>,
}

impl Default for Floor {
    fn default() -> Self {
        let mut tools = HashMap::with_hasher(foldhash::fast::RandomState::default());
        tools.insert("add".to_owned(), add as Body);
        Self { tools }
    }
}

impl Floor {
    /// A floor that knows `add`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Arm a1: lookup, `from_value` of a cloned argument object, call, `to_value`.
    pub fn call_cloning(&self, call: ToolCall) -> Result<Value, String> {
        let body = self.lookup(&call.name)?;
        let args: AddArgs =
            serde_json::from_value(call.arguments.clone()).map_err(|error| error.to_string())?;
        serde_json::to_value(body(args)).map_err(|error| error.to_string())
    }

    /// Arm a2: lookup, decoding from the borrowed arguments, call, `to_value`.
    pub fn call_borrowing(&self, call: ToolCall) -> Result<Value, String> {
        let body = self.lookup(&call.name)?;
        let args = AddArgs::deserialize(&call.arguments).map_err(|error| error.to_string())?;
        serde_json::to_value(body(args)).map_err(|error| error.to_string())
    }

    fn lookup(&self, name: &str) -> Result<Body, String> {
        self.tools
            .get(name)
            .copied()
            .ok_or_else(|| format!("Unknown tool: {name}"))
    }
}
