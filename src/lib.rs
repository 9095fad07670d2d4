//! # Prism: typed Rust functions as language-model tools
//!
//! Write a function, mark it `#[tool]`, register it, and let the [`Dispatcher`] run the model's
//! calls through a fixed pipeline of guards. The macro derives the JSON Schema the model reads
//! from the parameter types and the description from the doc comments; the dispatcher decodes
//! each call's arguments into those types before any side effect.
//!
//! ```
//! use prism::{Dispatcher, State, ToolCall, ToolExecutionContext, ToolRegistry, tool};
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//!
//! #[derive(Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "lowercase")]
//! enum Unit {
//!     Celsius,
//!     Fahrenheit,
//! }
//!
//! #[derive(Serialize, schemars::JsonSchema)]
//! struct Weather {
//!     city: String,
//!     degrees: f64,
//! }
//!
//! struct Stations {
//!     paris: f64,
//! }
//!
//! /// Looks up the current weather for a city.
//! #[tool(read_only)]
//! async fn get_weather(
//!     /// City name, for example "Paris".
//!     city: String,
//!     /// Temperature unit; Celsius when absent.
//!     unit: Option<Unit>,
//!     stations: State<Stations>,
//!     ctx: ToolExecutionContext,
//! ) -> Result<Weather, String> {
//!     if ctx.is_cancelled() {
//!         return Err("cancelled".into());
//!     }
//!     let celsius = match city.as_str() {
//!         "Paris" => stations.paris,
//!         other => return Err(format!("no station in {other}")),
//!     };
//!     let degrees = match unit {
//!         Some(Unit::Fahrenheit) => celsius * 9.0 / 5.0 + 32.0,
//!         Some(Unit::Celsius) | None => celsius,
//!     };
//!     Ok(Weather { city, degrees })
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let registry = ToolRegistry::from_iter([get_weather::definition(Stations { paris: 21.5 })]);
//! let weather = registry.get("get_weather").unwrap();
//! assert_eq!(weather.description(), Some("Looks up the current weather for a city."));
//! assert_eq!(weather.parameters().unwrap()["required"], json!(["city"]));
//!
//! let dispatcher = Dispatcher::builder(registry).build();
//! let ctx = ToolExecutionContext::new();
//! let call = ToolCall::new("call_1", "get_weather", json!({"city": "Paris", "unit": "fahrenheit"}));
//! let result = dispatcher.dispatch(call, &ctx).await.unwrap();
//! assert_eq!(result.as_value(), Some(&json!({"city": "Paris", "degrees": 70.7})));
//!
//! // Arguments are decoded before anything runs; a bad one names its path.
//! let call = ToolCall::new("call_2", "get_weather", json!({"city": "Paris", "unit": "kelvin"}));
//! let result = dispatcher.dispatch(call, &ctx).await.unwrap();
//! let error = result.error_info().unwrap();
//! assert_eq!(error.code.as_str(), "invalid_arguments");
//! assert!(error.message.contains("`unit`"), "{}", error.message);
//! # });
//! ```
//!
//! The function stays an ordinary function. Beside it, `#[tool]` adds a struct of the same name
//! (a function and a braced struct live in different namespaces) whose `definition` returns the
//! [`ToolDefinition`] to register: `get_weather::definition(state)` here, `add::definition()` for
//! a tool without state. This works wherever the function is declared, including inside another
//! function.
//!
//! ## What `#[tool]` derives
//!
//! - **Name**: the function's name (without `r#`), or `#[tool(name = "…")]`. Names use the MCP
//!   character set `[A-Za-z0-9_.-]`, 1 to 128 characters, checked at compile time.
//! - **Description**: the doc comment (`#[doc = include_str!("…")]` works), or
//!   `#[tool(description = "…")]`. A tool without one does not compile: the model reads it to
//!   decide when to call the tool.
//! - **Parameters**: a JSON Schema of a generated struct with one field per argument, built once
//!   per tool with [`schema::parameters_for`]: an object at the root, no `$schema`, no `title`,
//!   `additionalProperties: false` (unknown keys are refused when decoding, too), `Option<T>`
//!   arguments not required. Doc comments on parameters become their descriptions;
//!   `#[serde(rename = "…")]`, `#[serde(default)]` and `#[schemars(…)]` on a parameter apply as
//!   on a struct field. Argument types are anything `Deserialize + JsonSchema`, including your own
//!   structs and enums.
//! - **Output schema**: the return type's schema, when it implements `JsonSchema`.
//! - **Hints**: `title = "…"`, `read_only`, `destructive`, `idempotent`, `open_world` (each alone
//!   or `= true`/`= false`), `exclusive`, `requires_approval` (each call waits for a person's
//!   approval: a run with an approval store suspends until it is decided, an MCP server asks the
//!   client; where nobody can be asked, as in a bare `dispatch` or an agent without a store, the
//!   call is refused), `untrusted_output` (results carry output from outside the host's
//!   trust), and `effect` (the default [`EffectPolicy`](effects::EffectPolicy)) or
//!   `effect = <expression>`.
//!
//! Without a `schemars` dependency of your own, derive through the re-export:
//! `#[derive(prism::schema::schemars::JsonSchema)]` with
//! `#[schemars(crate = "prism::schema::schemars")]`.
//!
//! ## Parameters the model does not fill in
//!
//! A parameter whose type is [`ToolExecutionContext`] (by value or `&`) or [`State<T>`] is
//! supplied at dispatch and never appears in the schema. `State<T>` is the `Arc<T>` given to
//! `definition(state)`. `#[tool(state = AppState)]` names the state type when no `State<T>`
//! parameter does, or when the tool takes parts of one host state: each `State<T>` parameter is
//! then the part `T: FromState<AppState>` (every type is a part of itself), so a tool can take
//! `State<Db>` and `State<Config>` of one `AppState`. A `#[tools]` method takes parts of `Self`
//! the same way.
//!
//! Any type implementing [`FromToolContext`](context::FromToolContext) (a caller id read from the run's metadata, a
//! session looked up in another service) is supplied the same way when the parameter is marked
//! `#[ctx]`; `#[ctx]` also marks an alias of the context type. Extractors run when the call is
//! prepared, after the arguments are decoded and before the before-execute policy, any effect
//! claim and the `started` row. An extractor answers with an [`Extraction`](context::Extraction): ready at once, or
//! pending on a future, which the dispatcher awaits there. Its rejection (its own
//! `FromToolContext::Rejection` type) refuses the call: a blocked `extraction_failed` result,
//! message redacted, and the body never runs.
//!
//! A single parameter marked `#[args]` takes the whole argument object: its type (a struct with
//! named fields, ideally `#[serde(deny_unknown_fields)]`) is the schema. A number, a string, a
//! list, a tuple or an `Option` there is a compile error: the arguments are always one object.
//!
//! ## What a tool returns
//!
//! Any `Serialize` value, or a `Result<T, E>` (an alias such as `std::io::Result<T>` too) whose
//! error is any `Display` type (`String`, `std::io::Error`, `anyhow::Error`…) or a [`ToolError`]
//! with a code of its own. An `Err` is the call's error; the model sees its message after
//! redaction.
//!
//! A tool may also return content blocks ([`ContentBlock`](call::ContentBlock): text, an image, audio, a resource
//! link, an embedded resource), in a `Result` or not:
//!
//! | return type | result value | result content |
//! | --- | --- | --- |
//! | `T: Serialize` | `T` as JSON | none |
//! | `ContentBlock` or `Vec<ContentBlock>` | `null` | the blocks |
//! | [`ToolOutput<T>`](call::ToolOutput) | `T` as JSON | the blocks |
//!
//! The same holds for `#[tools]` methods, `#[derive(Tool)]` run bodies and a hand-written
//! [`Tool`]'s `Output` (any [`IntoToolOutput`](call::IntoToolOutput)); builder closures return a
//! `ToolOutput` through
//! `run_output` / `run_output_sync`. The host's [`ToolResult`] (and the transcript) keeps the
//! blocks whole; events and ledger rows record them as
//! [`ContentRecord`](call::ContentRecord)s: kind, media type, decoded size, links and text, never
//! base64 data. Blocks count toward the output byte limit with their JSON (an image too large is
//! `output_too_large`), output guardrails see their text before redaction, the redactor replaces
//! secrets in their text (never inside base64), and an effect store records and replays them.
//!
//! `#[tool(untrusted_output)]` (or `ToolDefinition::builder(…).untrusted_output(true)`) says the
//! tool's output comes from outside the host's trust, as a web page or a remote MCP server's
//! does: its results, events and rows are marked `untrusted`, and wire formats fence such output
//! as data for the model.
//!
//! Arguments are decoded in the handler's `prepare` step, after the validators and before the
//! before-execute policy and any effect claim: a decoding failure is a blocked
//! `invalid_arguments` result naming the JSON path of the bad field, and the body never runs.
//! Extractors run right after it, still in `prepare`; a rejection refuses the call.
//! A synchronous function runs on the dispatching task when the body is awaited: use an
//! `async fn` with `spawn_blocking` for long blocking work.
//!
//! ## Methods: `#[tools]`
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicI64, Ordering};
//! use prism::{ToolRegistry, tools};
//!
//! struct Counter {
//!     value: AtomicI64,
//! }
//!
//! #[tools]
//! impl Counter {
//!     /// Adds to the counter and returns the new value.
//!     #[tool]
//!     fn add(&self, by: i64) -> i64 {
//!         self.value.fetch_add(by, Ordering::SeqCst) + by
//!     }
//!
//!     /// Reads the counter.
//!     #[tool(read_only)]
//!     async fn read(&self) -> i64 {
//!         self.value.load(Ordering::SeqCst)
//!     }
//! }
//!
//! let counter = Arc::new(Counter { value: AtomicI64::new(0) });
//! let registry = ToolRegistry::from_iter(Arc::clone(&counter).tools());
//! assert_eq!(registry.len(), 2);
//! ```
//!
//! The `#[tool]` methods of the block take `&self` and share the one `Arc<Self>` given to the
//! generated `tools` method; other methods stay as they are. `#[tools(name = admin_tools)]` names
//! the generated method differently, so two impl blocks of one type do not collide.
//!
//! ## A type per tool: `#[derive(Tool)]`
//!
//! ```
//! use prism::{Tool, ToolExecutionContext};
//! use serde::Deserialize;
//!
//! /// Converts degrees Celsius to Fahrenheit.
//! #[derive(Deserialize, schemars::JsonSchema, Tool)]
//! #[serde(deny_unknown_fields)]
//! #[tool(read_only)]
//! struct ToFahrenheit {
//!     /// Degrees Celsius.
//!     celsius: f64,
//! }
//!
//! impl ToFahrenheit {
//!     async fn run(self, _ctx: ToolExecutionContext) -> Result<f64, String> {
//!         Ok(self.celsius * 9.0 / 5.0 + 32.0)
//!     }
//! }
//!
//! let definition = ToFahrenheit::definition();
//! assert_eq!(definition.name(), "to_fahrenheit");
//! ```
//!
//! The struct's fields are the arguments, so it derives `Deserialize` and `JsonSchema` itself,
//! with `#[serde(deny_unknown_fields)]` (required). The tool's name is the struct's name in
//! snake case unless `#[tool(name = "…")]` says otherwise; `#[tool(...)]` takes the same keys as
//! on a function. The body is an inherent `async fn run(self, ctx: ToolExecutionContext)`
//! returning a `Result`; with `#[tool(state = S)]` it takes a third parameter `state: State<S>`
//! and `definition(state)` takes the state.
//!
//! ## Mistakes are compile errors
//!
//! A bad name, a missing description, two arguments with one JSON name, a reference or
//! `impl Trait` argument, a generic or `const` function, two contexts of one kind, `self` outside
//! `#[tools]`, an unknown key (with the closest known one suggested): each is reported at its
//! span, all of them in one compiler run, and the function is still emitted so nothing else fails
//! because of them. A parameter type that cannot be decoded, a return type that cannot be
//! serialised or an error type that does not convert fails with one sentence naming the type.
//!
//! ## Implementing [`Tool`] by hand
//!
//! The macros expand to implementations of the typed [`Tool`] trait; implement it yourself for a
//! generic tool or one built at run time. A hand-written implementation and the macro's cost the
//! same per call. A tool whose schema is only known at run time is a
//! [`ToolDefinition::builder`] closure; the handler behind every definition is in
//! [`definition`].
//!
//! ## What is at the root, and why
//!
//! The root holds what a first program names, and nothing else: every other item has exactly one
//! public path, in the module of its concern. Importing from the root is enough to define tools,
//! answer a model's calls and run a model:
//!
//! | job | root items |
//! | --- | --- |
//! | define a tool | [`tool`], [`tools`](macro@tools), derive [`Tool`](derive@Tool) and the [`Tool`] trait, [`ToolDefinition`] (hand-built tools), [`ToolError`] (an error with a code of its own) |
//! | what a tool receives | [`ToolExecutionContext`], [`State`] |
//! | register and dispatch | [`ToolRegistry`], [`Dispatcher`], [`ToolCall`], [`ToolResult`] |
//! | run a model | [`Agent`], [`Session`], [`RunOptions`], [`RunOutcome`], [`RunError`], [`Message`] |
//! | connect a model | [`Provider`], [`ProviderRequest`], [`ProviderResponse`], [`ProviderError`] |
//!
//! Guards, observers, storage and search come later: the builder methods that take them
//! (`Dispatcher::builder(registry).permission(…)`) lead to their modules. [`prelude`] brings the
//! traits' methods into scope (`use prism::prelude::*;`) without adding names.
//!
//! ## Where items live
//!
//! | module | what it holds | from `prism_tools` |
//! | --- | --- | --- |
//! | [`call`] | a call's outcome, error and codes | `call` |
//! | [`definition`] | tools without the macros: builder, handler, annotations, [`Refusal`](definition::Refusal) | `definition`, `tool`, `error` |
//! | [`context`] | the context's parts, extractors | `context`, `extract` |
//! | [`schema`] | JSON Schema generation, and its lowering per provider dialect | `schema` |
//! | [`provider`] | provider wire formats: OpenAI Chat and Responses, Anthropic, Gemini; tool names and lowering per turn | `provider` |
//! | [`registry`] | registry errors, filters, grants, scopes, contributed tools | `registry`, `filter`, `grant`, `scope`, `contributions` |
//! | [`dispatch`] | the builder, secure dispatcher, events, ledger, limits, redactor, clock | `dispatch`, `limits`, `redact`, `clock`, `slot` |
//! | [`dispatch::stage`] | the builder's typestate markers, never named by users | `dispatch::stage`, the builder's bounds, `guard`'s presence markers |
//! | [`guard`] | middleware, guardrails, trust, permission, validators, before-execute | `guard` |
//! | [`effects`] | at most once, or unknown | `effects` |
//! | [`validation`] | schema validation of arguments (all of it) | `validation` |
//! | [`run`] | everything of the run layer not at the root | `run` |
//! | [`search`] | search disclosure and custom scorers; not the index internals | `search` |
//! | [`storage`] | durable stores (all of it) | `storage` |
//! | `mcp` | MCP (feature `mcp`): a dispatcher served to MCP clients (`McpServer`), and a remote server's tools as definitions behind the dispatcher (`McpClient`, `RemoteServer`) | `mcp` |
//! | [`tools`](mod@tools) | first-party tools: `tools::web` (feature `web`): fetch, readable extraction and search under one URL policy; `tools::browser` (feature `browser`): four exclusive tools over a host-supplied Chromium | `tools` |
//!
//! **Adding a public item** to `prism_tools`: re-export it in the facade module that the table
//! lists for its `prism_tools` module (one file each: `src/<module>.rs`), and nowhere else. A new
//! `prism_tools` module gets a facade module of the same name in its own file, declared below;
//! when every item of it is for users, that file may re-export it whole with a glob, as
//! `validation` and `storage` do, which also carries feature-gated items. Promote an item to the
//! root only if a first program needs it, and then remove it from its module. `.ci/public_paths.py`
//! (run by `.ci/run`) fails when any item is reachable by two public paths.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use prism_tools::run::{
    Agent, Message, Provider, ProviderError, ProviderRequest, ProviderResponse, RunError,
    RunOptions, RunOutcome, Session,
};
pub use prism_tools::{
    Dispatcher, State, Tool, ToolCall, ToolDefinition, ToolError, ToolExecutionContext,
    ToolRegistry, ToolResult,
};
pub use prism_tools_derive::{Tool, tool, tools};

pub mod call;
pub mod context;
pub mod definition;
pub mod dispatch;
pub mod effects;
pub mod guard;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod prelude;
pub mod provider;
pub mod registry;
pub mod run;
pub mod schema;
pub mod search;
pub use prism_tools::semconv;
pub mod storage;
pub mod tools;
pub mod validation;

/// What the macros' generated code refers to. Not an API.
#[doc(hidden)]
pub mod __private {
    pub use prism_tools::macro_support::*;
    pub use prism_tools::schema::parameters_for;
    pub use prism_tools::{
        EffectPolicy, FromToolContext, State, Tool, ToolAnnotations, ToolDefinition, ToolError,
        ToolExecutionContext,
    };
    pub use schemars;
    pub use serde;
    pub use serde_json::Value;
}
