//! The typed [`Tool`] trait: a tool whose arguments and output are Rust types.
//!
//! `#[tool]` expands to an implementation of this trait; implement it by hand for tools that
//! need generics or hold state. [`ToolDefinition::from_tool`] turns any `Tool` into a definition
//! that the registry stores. Arguments are decoded straight from the borrowed JSON (no clone)
//! inside the handler's `prepare` step, then [`Tool::prepare`] takes what the body needs from the
//! call's context, so a decoding failure or a failed extraction is reported before any guard
//! that follows and before any side effect.
//!
//! The body future is made in one place, `typed_body`, whether preparation was ready at once
//! or had to wait: a tool's body is instantiated once, and a ready preparation allocates nothing.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::call::{IntoToolOutput, ToolOutput};
use crate::context::ToolExecutionContext;
use crate::definition::{
    NotPrepared, Prepared, ToolAnnotations, ToolDefinition, ToolFuture, ToolHandler,
};
use crate::effects::EffectPolicy;
use crate::error::{Refusal, ToolError};
use crate::extract::Extraction;

/// A tool with typed arguments and output.
///
/// Every call gets its own clone of the tool, moved into the future [`call`](Self::call)
/// returns, as axum gives every request its own clone of a handler. A tool without fields clones
/// for nothing; keep heavier state behind an [`Arc`], so that a clone only
/// counts one more reference.
///
/// ```
/// use prism::{Tool, ToolDefinition, ToolExecutionContext, schema};
/// use serde::Deserialize;
///
/// #[derive(Deserialize, schemars::JsonSchema)]
/// struct AddArgs { a: i64, b: i64 }
///
/// #[derive(Clone)]
/// struct Add;
///
/// impl Tool for Add {
///     const NAME: &'static str = "add";
///     type Args = AddArgs;
///     type Output = i64;
///     type Error = std::convert::Infallible;
///
///     fn description(&self) -> Option<std::borrow::Cow<'static, str>> {
///         Some("Adds two integers.".into())
///     }
///
///     fn parameters(&self) -> Option<serde_json::Value> {
///         Some(schema::parameters_for::<AddArgs>())
///     }
///
///     async fn call(self, args: AddArgs, _ctx: ToolExecutionContext) -> Result<i64, Self::Error> {
///         Ok(args.a + args.b)
///     }
/// }
///
/// let add = ToolDefinition::from_tool(Add);
/// assert_eq!(add.parameters().unwrap()["required"], serde_json::json!(["a", "b"]));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "this type does not implement `prism::Tool`",
    note = "annotate a function with `#[tool]`, or implement `Tool` for the type by hand"
)]
pub trait Tool: Clone + Send + Sync + 'static {
    /// The tool's name, in the MCP character set `[A-Za-z0-9_.-]`, 1 to 128 characters.
    const NAME: &'static str;
    /// The decoded arguments.
    type Args: DeserializeOwned + Send + 'static;
    /// What the tool returns: any `Serialize` type, serialised to JSON for the model, or content
    /// blocks alone or beside a value (see [`IntoToolOutput`]).
    type Output: IntoToolOutput;
    /// The tool's error; any `Display` type converts into [`ToolError`].
    type Error: Into<ToolError> + Send + 'static;

    /// What the tool does, for the model.
    fn description(&self) -> Option<Cow<'static, str>> {
        None
    }

    /// The JSON Schema of [`Args`](Self::Args); see [`schema::parameters_for`](crate::schema::parameters_for).
    fn parameters(&self) -> Option<Value> {
        None
    }

    /// The JSON Schema of [`Output`](Self::Output), when known.
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// Behaviour hints.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// True when a turn calling this tool must run sequentially.
    fn exclusive(&self) -> bool {
        false
    }

    /// True when a run must suspend before every call of this tool until a decision approves
    /// the exact call (see the run layer's approvals). `#[tool(requires_approval)]` answers
    /// `true`.
    fn requires_approval(&self) -> bool {
        false
    }

    /// True when the tool's output comes from outside the host's trust (a web page, a remote MCP
    /// server); see [`ToolDefinition::untrusted_output`]. `#[tool(untrusted_output)]` answers
    /// `true`.
    fn untrusted_output(&self) -> bool {
        false
    }

    /// The effect policy, for tools whose side effect must happen at most once.
    fn effect(&self) -> Option<EffectPolicy> {
        None
    }

    /// Whether [`call`](Self::call) reads its context. A tool that never does can answer
    /// `false`: the dispatcher then skips making the call's context and passes an empty one (no
    /// run, no ids, no metadata; progress goes nowhere). `#[tool]` answers from the function's
    /// parameters: `false` when it takes no context and no extractor.
    fn reads_context(&self) -> bool {
        true
    }

    /// The body, run on this call's own clone of the tool. It owns what it needs (the tool, the
    /// arguments, the context), so the future it returns is `'static` and can run on any
    /// executor thread.
    fn call(
        self,
        args: Self::Args,
        ctx: ToolExecutionContext,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send + 'static;

    /// Prepares one call once its arguments are decoded: takes what the body needs from the
    /// call's context and returns the body, unpolled. The default takes nothing and returns
    /// [`call`](Self::call)'s body, ready.
    ///
    /// This is where extractors run, so a value that cannot be made refuses the call (a blocked
    /// `extraction_failed` result) before the before-execute policy, the effect claim and the
    /// `started` row. Returning [`Extraction::Pending`] lets the preparation wait (on an
    /// authorisation service, say); the dispatcher awaits it before any side effect. `#[tool]`
    /// writes this method for functions that take `#[ctx]` extractors.
    fn prepare(
        self,
        args: Self::Args,
        ctx: ToolExecutionContext,
    ) -> Extraction<impl Future<Output = Result<Self::Output, Self::Error>> + Send + 'static, Refusal>
    {
        Extraction::Ready(Ok(self.call(args, ctx)))
    }
}

impl ToolDefinition {
    /// A definition for a typed tool.
    pub fn from_tool<T: Tool>(tool: T) -> Self {
        let parts = ToolParts::of(&tool);
        parts.build(TypedHandler(tool))
    }
}

/// What a [`Tool`] says about itself, gathered once so that the definition is built by one
/// function for every tool type.
pub(crate) struct ToolParts {
    name: &'static str,
    description: Option<Cow<'static, str>>,
    parameters: Option<Value>,
    output_schema: Option<Value>,
    annotations: ToolAnnotations,
    exclusive: bool,
    requires_approval: bool,
    untrusted_output: bool,
    effect: Option<EffectPolicy>,
}

impl ToolParts {
    /// Asks `tool`.
    pub(crate) fn of<T: Tool>(tool: &T) -> Self {
        Self {
            name: T::NAME,
            description: tool.description(),
            parameters: tool.parameters(),
            output_schema: tool.output_schema(),
            annotations: tool.annotations(),
            exclusive: tool.exclusive(),
            requires_approval: tool.requires_approval(),
            untrusted_output: tool.untrusted_output(),
            effect: tool.effect(),
        }
    }

    /// The definition running `handler`.
    pub(crate) fn build(self, handler: impl ToolHandler) -> ToolDefinition {
        self.build_shared(Arc::new(handler))
    }

    fn build_shared(self, handler: Arc<dyn ToolHandler>) -> ToolDefinition {
        let mut builder = ToolDefinition::builder(self.name)
            .annotations(self.annotations)
            .exclusive(self.exclusive)
            .requires_approval(self.requires_approval)
            .untrusted_output(self.untrusted_output);
        if let Some(description) = self.description {
            builder = builder.description(description);
        }
        if let Some(parameters) = self.parameters {
            builder = builder.parameters(parameters);
        }
        if let Some(output) = self.output_schema {
            builder = builder.output_schema(output);
        }
        if let Some(effect) = self.effect {
            builder = builder.effect(effect);
        }
        builder.handler_arc(handler)
    }
}

/// Adapts a [`Tool`] to [`ToolHandler`].
struct TypedHandler<T>(T);

impl<T: Tool> ToolHandler for TypedHandler<T> {
    fn reads_context(&self) -> bool {
        self.0.reads_context()
    }

    fn prepare(
        &self,
        arguments: &Value,
        ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        let args = decode_arguments::<T::Args>(T::NAME, arguments)?;
        prepared(self.0.clone().prepare(args, ctx), typed_body::<T, _>)
    }
}

/// What a handler returns for a tool's preparation: the body, made by `body` from what
/// [`Tool::prepare`] produced, now or once it is ready; or why there is none.
pub(crate) fn prepared<F, B>(
    extraction: Extraction<F, Refusal>,
    body: B,
) -> Result<Prepared, NotPrepared>
where
    F: Send + 'static,
    B: FnOnce(F) -> ToolFuture + Send + 'static,
{
    match extraction {
        Extraction::Ready(Ok(ready)) => Ok(Prepared::Ready(body(ready))),
        Extraction::Ready(Err(refusal)) => Err(NotPrepared::extraction_failed(refusal)),
        Extraction::Pending(pending) => Ok(Prepared::pending(async move {
            match pending.await {
                Ok(ready) => Ok(body(ready)),
                Err(refusal) => Err(NotPrepared::extraction_failed(refusal)),
            }
        })),
    }
}

/// The erased body of a typed tool: awaits `body` and converts its output (see
/// [`IntoToolOutput`]). The one place a tool's body becomes a [`ToolFuture`], for ready and
/// pending preparations alike.
fn typed_body<T, F>(body: F) -> ToolFuture
where
    T: Tool,
    F: Future<Output = Result<T::Output, T::Error>> + Send + 'static,
{
    ToolFuture::from_output(async move {
        let output = body.await.map_err(Into::into)?;
        serialized_output(T::NAME, output)
    })
}

/// A tool's output with its value as JSON, or the error saying it could not be serialised.
pub(crate) fn serialized_output<O: IntoToolOutput>(
    tool: &str,
    output: O,
) -> Result<ToolOutput, ToolError> {
    output
        .into_tool_output()
        .map_err(|error| unserialisable(tool, &error))
}

fn unserialisable(tool: &str, error: &serde_json::Error) -> ToolError {
    ToolError::new(format!(
        "The output of tool `{tool}` could not be serialised: {error}"
    ))
}

/// Decodes tool arguments from borrowed JSON. On failure the message names the JSON path of the
/// offending field; the path is only tracked on the second, failing attempt, so the happy path
/// pays nothing for it.
pub fn decode_arguments<A: DeserializeOwned>(tool: &str, arguments: &Value) -> Result<A, Refusal> {
    let first = match A::deserialize(arguments) {
        Ok(args) => return Ok(args),
        Err(error) => error,
    };
    let (location, detail) = match serde_path_to_error::deserialize::<_, A>(arguments) {
        Err(error) => {
            let path = error.path().to_string();
            let location = if path == "." || path.is_empty() {
                "the top level".to_owned()
            } else {
                format!("`{path}`")
            };
            (location, error.into_inner().to_string())
        }
        // A decoder that fails once and then succeeds is not deterministic: report the first
        // failure rather than invent a path.
        Ok(_) => ("the top level".to_owned(), first.to_string()),
    };
    Err(invalid_arguments(tool, &location, &detail))
}

/// The one wording of arguments that do not decode: the tool, where, and serde's message.
pub(crate) fn invalid_arguments(tool: &str, location: &str, detail: &str) -> Refusal {
    Refusal::new(format!(
        "Invalid arguments for tool `{tool}` at {location}: {detail}"
    ))
}
