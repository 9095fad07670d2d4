//! How a generated tool becomes a definition.
//!
//! A generated tool's `call` already returns its output as JSON (and content blocks), so its body is stored as it is,
//! with no second future around it; its arguments decode through [`DecodeArguments`]; and a tool
//! without `#[ctx]` extractors has no pending preparation to compile. Everything that does not
//! depend on the tool's type (building the definition, caching a schema, serialising an output
//! of a given type) is an ordinary function, compiled once.

use std::marker::PhantomData;
use std::sync::OnceLock;

use serde_json::Value;

use super::{DecodeArguments, ToolReturn};
use crate::call::ToolOutput;
use crate::context::ToolExecutionContext;
use crate::definition::{NotPrepared, Prepared, ToolDefinition, ToolFuture, ToolHandler};
use crate::error::ToolError;
use crate::tool::{Tool, ToolParts, prepared, serialized_output};

/// The definition of a generated tool without `#[ctx]` extractors.
pub fn definition<T>(tool: T) -> ToolDefinition
where
    T: Tool<Output = ToolOutput, Error = ToolError>,
    T::Args: DecodeArguments,
{
    ToolParts::of(&tool).build(Handler(tool, PhantomData::<Direct>))
}

/// The definition of a generated tool with `#[ctx]` extractors, which its `prepare` runs.
pub fn definition_with_extractors<T>(tool: T) -> ToolDefinition
where
    T: Tool<Output = ToolOutput, Error = ToolError>,
    T::Args: DecodeArguments,
{
    ToolParts::of(&tool).build(Handler(tool, PhantomData::<Extracting>))
}

/// A generated tool, its arguments decoded, its body made as `B` says.
struct Handler<T, B>(T, PhantomData<B>);

/// How a generated handler makes the body. A type rather than a flag, so that a tool compiles
/// only the way it uses.
trait MakeBody {
    fn body<T: Tool<Output = ToolOutput, Error = ToolError>>(
        tool: T,
        args: T::Args,
        ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared>;
}

/// The body is the tool's `call`, ready at once.
struct Direct;

impl MakeBody for Direct {
    fn body<T: Tool<Output = ToolOutput, Error = ToolError>>(
        tool: T,
        args: T::Args,
        ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        Ok(Prepared::Ready(ToolFuture::from_output(
            tool.call(args, ctx),
        )))
    }
}

/// The body comes from the tool's `prepare`, once its extractors have answered.
struct Extracting;

impl MakeBody for Extracting {
    fn body<T: Tool<Output = ToolOutput, Error = ToolError>>(
        tool: T,
        args: T::Args,
        ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        prepared(tool.prepare(args, ctx), ToolFuture::from_output)
    }
}

impl<T, B> ToolHandler for Handler<T, B>
where
    T: Tool<Output = ToolOutput, Error = ToolError>,
    T::Args: DecodeArguments,
    B: MakeBody + Send + Sync + 'static,
{
    fn reads_context(&self) -> bool {
        self.0.reads_context()
    }

    fn prepare(
        &self,
        arguments: &Value,
        ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        let args = T::Args::decode(T::NAME, arguments)?;
        B::body(self.0.clone(), args, ctx)
    }
}

/// The parameters' schema, made by `make` on the first call only.
pub fn cached_parameters(cell: &'static OnceLock<Value>, make: fn() -> Value) -> Option<Value> {
    Some(cell.get_or_init(make).clone())
}

/// The output schema, if any, made by `make` on the first call only.
pub fn cached_output_schema(
    cell: &'static OnceLock<Option<Value>>,
    make: fn() -> Option<Value>,
) -> Option<Value> {
    cell.get_or_init(make).clone()
}

/// What a generated body ends with: the function's output (its value as JSON, and any content
/// blocks), or its error.
#[inline]
pub fn serialized<T: ToolReturn>(
    tool: &str,
    result: Result<T, ToolError>,
) -> Result<ToolOutput, ToolError> {
    serialized_output(tool, result?)
}
