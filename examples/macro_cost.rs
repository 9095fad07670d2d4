//! Dispatches one tool many times, so that an instruction counter can compare a `#[tool]`
//! function with the same tool written by hand against the `Tool` trait.
//!
//! ```text
//! cargo build --release --example macro_cost
//! valgrind --tool=callgrind --callgrind-out-file=macro.out \
//!     --toggle-collect='macro_cost::dispatch_many' target/release/examples/macro_cost add-macro 2000
//! ```
//!
//! Modes: `add-macro` / `add-hand` (a synchronous tool over two integers) and `lookup-macro` /
//! `lookup-hand` (an async tool taking a string, shared state and the context, returning a
//! `Result`). Only [`dispatch_many`] is counted, so set-up (including the clock's one-off
//! calibration, whose length varies under valgrind) is left out: the instructions collected
//! divided by the calls are the cost of one dispatch, building its call included.

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;
use std::process::ExitCode;
use std::sync::Arc;

use prism::{
    Dispatcher, State, Tool, ToolCall, ToolDefinition, ToolError, ToolExecutionContext,
    ToolRegistry, schema, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// `add`, written by hand.
#[derive(Clone)]
struct AddByHand;

impl Tool for AddByHand {
    const NAME: &'static str = "add";
    type Args = AddArgs;
    type Output = i64;
    type Error = Infallible;

    fn description(&self) -> Option<Cow<'static, str>> {
        Some("Adds two integers.".into())
    }

    fn parameters(&self) -> Option<Value> {
        Some(schema::parameters_for::<AddArgs>())
    }

    // As `#[tool]` says for a function that takes no context.
    fn reads_context(&self) -> bool {
        false
    }

    async fn call(self, args: AddArgs, _ctx: ToolExecutionContext) -> Result<i64, Infallible> {
        Ok(args.a.wrapping_add(args.b))
    }
}

/// A phone book.
struct Directory {
    numbers: HashMap<String, u32>,
}

/// Looks a name up in the directory.
#[tool]
async fn lookup(
    name: String,
    directory: State<Directory>,
    ctx: ToolExecutionContext,
) -> Result<u32, String> {
    if ctx.is_cancelled() {
        return Err("cancelled".to_owned());
    }
    directory
        .numbers
        .get(&name)
        .copied()
        .ok_or_else(|| format!("{name} is not listed"))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LookupArgs {
    name: String,
}

/// `lookup`, written by hand.
#[derive(Clone)]
struct LookupByHand {
    directory: Arc<Directory>,
}

impl Tool for LookupByHand {
    const NAME: &'static str = "lookup";
    type Args = LookupArgs;
    type Output = u32;
    type Error = ToolError;

    fn description(&self) -> Option<Cow<'static, str>> {
        Some("Looks a name up in the directory.".into())
    }

    fn parameters(&self) -> Option<Value> {
        Some(schema::parameters_for::<LookupArgs>())
    }

    async fn call(self, args: LookupArgs, ctx: ToolExecutionContext) -> Result<u32, ToolError> {
        if ctx.is_cancelled() {
            return Err("cancelled".into());
        }
        let name = args.name;
        self.directory
            .numbers
            .get(&name)
            .copied()
            .ok_or_else(|| format!("{name} is not listed").into())
    }
}

fn directory() -> Arc<Directory> {
    Arc::new(Directory {
        numbers: HashMap::from([("ada".to_owned(), 1815), ("alan".to_owned(), 1912)]),
    })
}

/// The measured part: `count` dispatches of one call.
#[inline(never)]
fn dispatch_many(
    runtime: &tokio::runtime::Runtime,
    dispatcher: &Dispatcher,
    ctx: &ToolExecutionContext,
    name: &str,
    arguments: &Value,
    count: u64,
) -> u64 {
    runtime.block_on(async {
        let mut successes = 0u64;
        for _ in 0..count {
            let call = ToolCall::new("call", name, arguments.clone());
            let result = dispatcher.dispatch(call, ctx).await.expect("no guardrail");
            successes += u64::from(result.is_success());
        }
        successes
    })
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(count)) = (args.next(), args.next().and_then(|n| n.parse::<u64>().ok()))
    else {
        eprintln!("usage: macro_cost <add-macro|add-hand|lookup-macro|lookup-hand> <calls>");
        return ExitCode::FAILURE;
    };
    let (definition, arguments): (ToolDefinition, Value) = match mode.as_str() {
        "add-macro" => (add::definition(), json!({"a": 40, "b": 2})),
        "add-hand" => (
            ToolDefinition::from_tool(AddByHand),
            json!({"a": 40, "b": 2}),
        ),
        "lookup-macro" => (lookup::definition(directory()), json!({"name": "ada"})),
        "lookup-hand" => (
            ToolDefinition::from_tool(LookupByHand {
                directory: directory(),
            }),
            json!({"name": "ada"}),
        ),
        other => {
            eprintln!("unknown mode {other}");
            return ExitCode::FAILURE;
        }
    };
    let name = definition.name().to_owned();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([definition])).build();
    let ctx = ToolExecutionContext::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let successes = dispatch_many(&runtime, &dispatcher, &ctx, &name, &arguments, count);
    println!("{mode}: {successes} of {count} calls succeeded");
    if successes == count {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
