//! Values a tool takes from its call rather than from the model's arguments.
//!
//! A `#[tool]` function may ask for more than its JSON arguments: the call's
//! [`ToolExecutionContext`], shared state handed over when the tool was defined ([`State`]), or
//! anything a host derives from those two (the caller's user id from the run's metadata, a
//! database handle out of the state...). Each such parameter is produced by [`FromToolContext`],
//! in the manner of an axum extractor, and never appears in the tool's schema: the model cannot
//! set it.
//!
//! Extraction happens when the body starts, after every guard has passed. A failed extraction is
//! the tool's error (code `tool_error` unless the extractor picks another code), not a blocked
//! call: it says the host's set-up is missing something, not that the model asked for too much.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::context::ToolExecutionContext;
use crate::error::ToolError;

/// Produces a tool parameter from the call's context and the tool's shared state.
///
/// `S` is the tool's state type: the `T` of its [`State<T>`] parameter, `#[tool(state = T)]`,
/// or `Self` for the methods of a `#[tools]` impl block; `()` when it has none. Implement this
/// trait for every `S` when the value does not need the state.
///
/// ```
/// use std::sync::Arc;
/// use prism_tools::{FromToolContext, ToolError, ToolExecutionContext};
///
/// /// The user on whose behalf the run acts, from the run's metadata.
/// struct UserId(String);
///
/// impl<S: ?Sized> FromToolContext<S> for UserId {
///     fn from_context(ctx: &ToolExecutionContext, _state: &Arc<S>) -> Result<Self, ToolError> {
///         ctx.metadata()
///             .get("user_id")
///             .and_then(|id| id.as_str())
///             .map(|id| UserId(id.to_owned()))
///             .ok_or_else(|| ToolError::new("this run has no `user_id` in its metadata"))
///     }
/// }
///
/// let ctx = ToolExecutionContext::new().with_metadata("user_id", "u-7".into());
/// let user = UserId::from_context(&ctx, &Arc::new(())).unwrap();
/// assert_eq!(user.0, "u-7");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be taken from the tool's context",
    label = "`{Self}` is a context parameter: the dispatcher supplies it, not the model",
    note = "a context parameter is built by `FromToolContext<{S}>`, `{S}` being the tool's state type: implement it for `{Self}`, or, if the model should supply the value, remove `#[ctx]`"
)]
pub trait FromToolContext<S: ?Sized = ()>: Sized {
    /// Builds the value for one call. An error fails the call with that error; the body does
    /// not run.
    fn from_context(ctx: &ToolExecutionContext, state: &Arc<S>) -> Result<Self, ToolError>;
}

impl<S: ?Sized> FromToolContext<S> for ToolExecutionContext {
    fn from_context(ctx: &ToolExecutionContext, _state: &Arc<S>) -> Result<Self, ToolError> {
        Ok(ctx.clone())
    }
}

/// Shared state given to a tool when it is defined, for example a connection pool.
///
/// A `#[tool]` function that takes `State<T>` gets a `definition(state)` function instead of
/// `definition()`; every call then sees the same `Arc<T>`. `State<T>` dereferences to `T`.
///
/// ```
/// use std::sync::Arc;
/// use prism_tools::{FromToolContext, State, ToolExecutionContext};
///
/// struct Pool { size: usize }
///
/// let shared = Arc::new(Pool { size: 4 });
/// let state = State::<Pool>::from_context(&ToolExecutionContext::new(), &shared).unwrap();
/// assert_eq!(state.size, 4);
/// assert!(Arc::ptr_eq(&state.0, &shared));
/// ```
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> State<T> {
    /// The shared value.
    pub fn into_inner(self) -> Arc<T> {
        self.0
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&self.0).finish()
    }
}

impl<T: ?Sized + Send + Sync + 'static> FromToolContext<T> for State<T> {
    fn from_context(_ctx: &ToolExecutionContext, state: &Arc<T>) -> Result<Self, ToolError> {
        Ok(Self(Arc::clone(state)))
    }
}
