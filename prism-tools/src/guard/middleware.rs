//! Middleware: rewrite a call before the guards see it, or a successful result after the tool ran.
//!
//! A `tool_call` middleware may change the tool name and the arguments, never the call id (the
//! type gives it no way to). Whatever it produces goes through lookup, filtering and the
//! argument checks again, so renaming a call grants nothing. Several middlewares compose in the
//! order they were added, for calls and for results alike.

use serde_json::Value;

use crate::call::{Blocks, CallId, ContentBlock, blocks};

/// The parts of a call that `tool_call` middleware may change.
#[derive(Debug)]
pub struct CallRewrite<'a> {
    pub(crate) id: &'a CallId,
    pub(crate) name: &'a mut String,
    pub(crate) arguments: &'a mut Value,
}

impl CallRewrite<'_> {
    /// The call id (read-only).
    pub fn id(&self) -> &CallId {
        self.id
    }

    /// The tool name the call asks for.
    pub fn name(&self) -> &str {
        self.name
    }

    /// Points the call at another tool. Lookup, filters and the grant are checked on the new name.
    pub fn set_name(&mut self, name: impl Into<String>) {
        *self.name = name.into();
    }

    /// The arguments.
    pub fn arguments(&self) -> &Value {
        self.arguments
    }

    /// The arguments, to edit in place.
    pub fn arguments_mut(&mut self) -> &mut Value {
        self.arguments
    }
}

/// A successful result that `tool_result` middleware may change.
#[derive(Debug)]
pub struct ResultRewrite<'a> {
    pub(crate) id: &'a CallId,
    pub(crate) name: &'a str,
    pub(crate) value: &'a mut Value,
    pub(crate) content: &'a mut Blocks,
    /// Set once the value or the content was handed out to edit: only then does the dispatcher
    /// check the output's bounds again.
    pub(crate) rewritten: &'a mut bool,
}

impl ResultRewrite<'_> {
    /// The call id (read-only).
    pub fn id(&self) -> &CallId {
        self.id
    }

    /// The tool that produced the value.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The value.
    pub fn value(&self) -> &Value {
        self.value
    }

    /// The value, to edit in place.
    pub fn value_mut(&mut self) -> &mut Value {
        *self.rewritten = true;
        self.value
    }

    /// The content blocks the tool returned beside the value.
    pub fn content(&self) -> &[ContentBlock] {
        blocks(self.content)
    }

    /// The content blocks, to edit, add to or remove.
    pub fn content_mut(&mut self) -> &mut Vec<ContentBlock> {
        *self.rewritten = true;
        self.content.get_or_insert_default()
    }
}

/// Rewrites calls before dispatch and successful results after it.
pub trait ToolMiddleware: Send + Sync + 'static {
    /// Runs first, before guardrails and lookup.
    fn on_tool_call(&self, _call: &mut CallRewrite<'_>) {}

    /// Runs on successful results, after output guardrails and before the finished event.
    fn on_tool_result(&self, _result: &mut ResultRewrite<'_>) {}
}

/// A `tool_call` middleware from a closure.
///
/// ```
/// use prism::guard::call_middleware;
///
/// // Models sometimes say "Add" for "add".
/// let lowercase = call_middleware(|call| {
///     let name = call.name().to_ascii_lowercase();
///     call.set_name(name);
/// });
/// # let _ = lowercase;
/// ```
pub fn call_middleware<F>(rewrite: F) -> impl ToolMiddleware
where
    F: Fn(&mut CallRewrite<'_>) + Send + Sync + 'static,
{
    CallFn(rewrite)
}

/// A `tool_result` middleware from a closure.
///
/// ```
/// use prism::guard::result_middleware;
/// use serde_json::json;
///
/// let envelope = result_middleware(|result| {
///     let value = result.value_mut().take();
///     *result.value_mut() = json!({ "data": value });
/// });
/// # let _ = envelope;
/// ```
pub fn result_middleware<F>(rewrite: F) -> impl ToolMiddleware
where
    F: Fn(&mut ResultRewrite<'_>) + Send + Sync + 'static,
{
    ResultFn(rewrite)
}

struct CallFn<F>(F);

impl<F> ToolMiddleware for CallFn<F>
where
    F: Fn(&mut CallRewrite<'_>) + Send + Sync + 'static,
{
    fn on_tool_call(&self, call: &mut CallRewrite<'_>) {
        (self.0)(call);
    }
}

struct ResultFn<F>(F);

impl<F> ToolMiddleware for ResultFn<F>
where
    F: Fn(&mut ResultRewrite<'_>) + Send + Sync + 'static,
{
    fn on_tool_result(&self, result: &mut ResultRewrite<'_>) {
        (self.0)(result);
    }
}
