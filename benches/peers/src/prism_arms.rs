//! Prism's arms: `add` as a hand-written [`Tool`], dispatched bare (arm b) and through the full
//! guard chain with observers and a redactor (arms c, c' and the concurrent and traced variants);
//! and `add` as a `#[tool]` function, dispatched bare (arm bt).

use std::borrow::Cow;

use prism_tools::{
    Dispatcher, Refusal, SecretRedactor, Tool, ToolAnnotations, ToolDefinition,
    ToolExecutionContext, ToolFilter, ToolRegistry, before_execute_fn, call_middleware,
    permission_fn, schema, trust_fn, validator_fn,
};
use serde_json::Value;

use crate::sink::CountingSink;
use crate::{AddArgs, add};

/// `add` through the typed [`Tool`] trait, as a host writes a tool by hand.
#[derive(Clone)]
pub struct Add;

impl Tool for Add {
    const NAME: &'static str = "add";
    type Args = AddArgs;
    type Output = i64;
    type Error = std::convert::Infallible;

    fn description(&self) -> Option<Cow<'static, str>> {
        Some("Adds two integers.".into())
    }

    fn parameters(&self) -> Option<Value> {
        Some(schema::parameters_for::<AddArgs>())
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: Some(true),
            idempotent: Some(true),
            ..ToolAnnotations::default()
        }
    }

    // `add` never looks at its context, and says so, as `#[tool]` does for a function that takes
    // none: the dispatcher then makes no per-call context for it.
    fn reads_context(&self) -> bool {
        false
    }

    async fn call(self, args: AddArgs, _ctx: ToolExecutionContext) -> Result<i64, Self::Error> {
        Ok(add(args))
    }
}

/// The secrets the full chain's redactor knows: ten, shaped like real API keys and passwords.
pub const SECRETS: [&str; 10] = [
    "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e",
    "sk-test-0a1b2c3d4e5f6a7b8c9d0e1f",
    "ghp_R4nd0mT0k3nF0rB3nchm4rk1ngXYZ",
    "xoxb-1234567890-0987654321-AbCdEf",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "hunter2-but-much-longer-password",
    "postgres://admin:s3cr3t@db.internal/prod",
    "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.sig",
    "AIzaSyD-benchmark-google-api-key-00",
];

/// A registry holding [`Add`] and a few neighbours, so lookups and filters search a real set.
pub fn registry() -> ToolRegistry {
    let other = |name: &str| {
        ToolDefinition::builder(name)
            .description("Another tool the model could call.")
            .run_sync(|args: &Value, _ctx| Ok(args.clone()))
    };
    ToolRegistry::from_iter([
        ToolDefinition::from_tool(Add),
        other("subtract"),
        other("search"),
        other("read_file"),
        other("write_file"),
        noop_tool::definition(),
    ])
}

/// Does nothing and answers with empty text: the no-op tool of the MCP round-trip measure.
#[prism::tool(name = "noop", read_only, idempotent)]
pub fn noop_tool() -> String {
    String::new()
}

/// Arm b: the dispatcher with no guards and no observers.
pub fn bare_dispatcher() -> Dispatcher {
    Dispatcher::builder(registry()).build()
}

/// Adds two integers.
#[prism::tool(name = "add", read_only, idempotent)]
pub fn add_tool(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    add(AddArgs { a, b })
}

/// Arm bt: arm b with `add` written as a `#[tool]` function instead of a hand-written [`Tool`],
/// so the code the macro generates is what runs.
pub fn bare_dispatcher_macro() -> Dispatcher {
    let tools = registry();
    tools.remove("add");
    tools
        .register(add_tool::definition())
        .expect("`add` was just removed");
    Dispatcher::builder(tools).build()
}

/// Arm c: every guard stage the happy path runs, each doing a small realistic check, with `sink`
/// receiving every event and ledger row and a redactor of ten secrets.
pub fn full_chain(sink: &CountingSink) -> Dispatcher {
    Dispatcher::builder(registry())
        // Models sometimes capitalise tool names; fold them before lookup.
        .middleware(call_middleware(|call| {
            if call.name().bytes().any(|byte| byte.is_ascii_uppercase()) {
                let folded = call.name().to_ascii_lowercase();
                call.set_name(folded);
            }
        }))
        .filter(
            ToolFilter::allow(["add", "noop", "subtract", "search", "read_file"])
                .and_deny(["write_file"]),
        )
        .trust(trust_fn(|tool, _ctx| match tool.annotations().open_world {
            Some(true) => Err(format!("{} reaches outside this host", tool.name()).into()),
            _ => Ok(()),
        }))
        .permission(permission_fn(|tool, _args, _ctx| {
            match tool.annotations().destructive {
                Some(true) => Err("destructive tools need a person's approval".into()),
                _ => Ok(()),
            }
        }))
        .validate(validator_fn(|tool, args| {
            required_fields_present(tool, args)
        }))
        .before_execute(before_execute_fn(|tool, _args, ctx| {
            let dry_run = ctx
                .metadata()
                .get("dry_run")
                .is_some_and(|flag| flag == true);
            if dry_run && tool.annotations().read_only != Some(true) {
                Err("dry run: only read-only tools execute".into())
            } else {
                Ok(())
            }
        }))
        .events(sink.clone())
        .ledger(sink.clone())
        .redactor(SecretRedactor::new(SECRETS))
        .build()
}

/// The validator of the full chain: every field the schema requires is present. Both maps hold a
/// handful of entries, so it scans them rather than hashing (with rig in this binary, serde_json
/// maps hash with SipHash, which would make this check cost more than the dispatcher around it).
fn required_fields_present(tool: &ToolDefinition, args: &Value) -> Result<(), Refusal> {
    fn entry<'m>(map: &'m serde_json::Map<String, Value>, name: &str) -> Option<&'m Value> {
        map.iter()
            .find_map(|(key, value)| (key == name).then_some(value))
    }
    let required = tool
        .parameters()
        .and_then(Value::as_object)
        .and_then(|schema| entry(schema, "required"))
        .and_then(Value::as_array);
    let args = args.as_object().ok_or("arguments must be an object")?;
    for field in required.into_iter().flatten().filter_map(Value::as_str) {
        if entry(args, field).is_none() {
            return Err(format!("missing required field `{field}`").into());
        }
    }
    Ok(())
}

/// The run context every Prism arm dispatches with: a session and a run, as an agent has.
pub fn run_context() -> ToolExecutionContext {
    ToolExecutionContext::new()
        .with_session_id("session-1")
        .with_run_id("run-1")
}

/// A `tracing` subscriber as a service typically runs one: formatted output at INFO, written to
/// a sink so the benchmark measures formatting and filtering, not a terminal.
pub fn info_subscriber() -> tracing::Dispatch {
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(std::io::sink)
        .finish();
    tracing::Dispatch::new(subscriber)
}
