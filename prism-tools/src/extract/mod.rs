//! Values a tool takes from its call rather than from the model's arguments.
//!
//! A `#[tool]` function may ask for more than its JSON arguments: the call's
//! [`ToolExecutionContext`], shared state handed over when the tool was defined ([`State`]) or a
//! part of it ([`FromState`]), or anything a host derives from those (the caller's user id from
//! the run's metadata, a session looked up in an authorisation service...). Each such parameter
//! is produced by [`FromToolContext`], in the manner of an axum extractor, and never appears in
//! the tool's schema: the model cannot set it.
//!
//! Extraction happens in the handler's `prepare` step, after the arguments are decoded and
//! before the before-execute policy, the effect claim and the `started` row. So a failed
//! extraction is a refusal, not a tool error: a blocked `extraction_failed` result, with the
//! extractor's [rejection](FromToolContext::Rejection) as its (redacted) message, and the body
//! never runs. An extractor answers with an [`Extraction`], ready at once or pending on a
//! future; only a pending one allocates, and the dispatcher awaits it before any side effect.

mod extraction;
mod state;

use std::sync::Arc;

pub use extraction::{Extraction, PendingExtraction};
pub use state::{FromState, State};

use crate::context::ToolExecutionContext;
use crate::error::Refusal;

/// Produces a tool parameter from the call's context and the tool's shared state.
///
/// `S` is the tool's state type: the `T` of its [`State<T>`] parameter, `#[tool(state = T)]`,
/// or `Self` for the methods of a `#[tools]` impl block; `()` when it has none. Implement this
/// trait for every `S` when the value does not need the state.
///
/// The extractor says why it refused in its own [`Rejection`](Self::Rejection) type, which
/// converts into the [`Refusal`] the model is shown (a `String` or `&str` does; so does an
/// [`ErrorInfo`](crate::ErrorInfo), to pick the code). An extractor that cannot fail says
/// [`Infallible`](std::convert::Infallible).
///
/// ```
/// use std::sync::Arc;
/// use prism::ToolExecutionContext;
/// use prism::context::{Extraction, FromToolContext};
///
/// /// The user on whose behalf the run acts, from the run's metadata.
/// struct UserId(String);
///
/// impl<S: ?Sized> FromToolContext<S> for UserId {
///     type Rejection = &'static str;
///
///     fn from_context(ctx: &ToolExecutionContext, _state: &Arc<S>) -> Extraction<Self, Self::Rejection> {
///         ctx.metadata()
///             .get("user_id")
///             .and_then(|id| id.as_str())
///             .map(|id| UserId(id.to_owned()))
///             .ok_or("this run has no `user_id` in its metadata")
///             .into()
///     }
/// }
///
/// let ctx = ToolExecutionContext::new().with_metadata("user_id", "u-7".into());
/// let Extraction::Ready(Ok(user)) = UserId::from_context(&ctx, &Arc::new(())) else {
///     unreachable!("the user id is read at once")
/// };
/// assert_eq!(user.0, "u-7");
/// ```
///
/// An extractor that must wait returns [`Extraction::pending`] with a `'static` future: it
/// clones what it needs out of the context first.
///
/// ```
/// use std::sync::Arc;
/// use prism::ToolExecutionContext;
/// use prism::context::{Extraction, FromToolContext};
///
/// /// A session, looked up by the run's session id.
/// struct Session { user: String }
///
/// async fn look_up(id: String) -> Option<Session> {
///     Some(Session { user: format!("owner of {id}") })
/// }
///
/// impl<S: ?Sized> FromToolContext<S> for Session {
///     type Rejection = String;
///
///     fn from_context(ctx: &ToolExecutionContext, _state: &Arc<S>) -> Extraction<Self, String> {
///         let id = ctx.session_id().map(str::to_owned);
///         Extraction::pending(async move {
///             let id = id.ok_or("this call belongs to no session")?;
///             look_up(id).await.ok_or_else(|| "the session has expired".to_owned())
///         })
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be taken from the tool's context",
    label = "`{Self}` is a context parameter: the dispatcher supplies it, not the model",
    note = "a context parameter is built by `FromToolContext<{S}>`, `{S}` being the tool's state type: implement it for `{Self}`, or, if the model should supply the value, remove `#[ctx]`"
)]
pub trait FromToolContext<S: ?Sized = ()>: Sized {
    /// Why the extractor refused; becomes the message of the blocked `extraction_failed`
    /// result.
    ///
    /// It is `Send + 'static` so that a pending extraction can carry it to the dispatcher.
    type Rejection: Into<Refusal> + Send + 'static;

    /// Builds the value for one call, now or later. A rejection refuses the call: the body does
    /// not run.
    fn from_context(
        ctx: &ToolExecutionContext,
        state: &Arc<S>,
    ) -> Extraction<Self, Self::Rejection>;
}

impl<S: ?Sized> FromToolContext<S> for ToolExecutionContext {
    type Rejection = std::convert::Infallible;

    fn from_context(
        ctx: &ToolExecutionContext,
        _state: &Arc<S>,
    ) -> Extraction<Self, Self::Rejection> {
        Extraction::ok(ctx.clone())
    }
}

impl<S, T> FromToolContext<S> for State<T>
where
    S: ?Sized + Send + Sync + 'static,
    T: ?Sized + FromState<S> + Send + Sync + 'static,
{
    type Rejection = std::convert::Infallible;

    fn from_context(
        _ctx: &ToolExecutionContext,
        state: &Arc<S>,
    ) -> Extraction<Self, Self::Rejection> {
        Extraction::ok(State::from_state(state))
    }
}
