//! [`State`], the shared value a tool is defined with, and [`FromState`], which takes a part of
//! it.
//!
//! A tool is defined with one host state (`definition(state)` stores it as an `Arc<S>`), but a
//! tool body often wants only a part: the database pool, the configuration. [`FromState`] says
//! how to take such a part `T` out of an `Arc<S>`, in the manner of axum's `FromRef`, so a tool
//! can take `State<Db>` and `State<Config>` from one `AppState`.
//!
//! A part is handed over as an `Arc<T>`, the same as the whole state: `State<T>` keeps holding
//! an `Arc<T>`, so taking the whole state counts one more reference, and so does taking a part
//! the host keeps behind its own `Arc` (`Arc::clone(&state.db)`). That is the cheapest design
//! that stays sound for any `T`: no part is cloned by value, and a state need not be `Clone`.
//! A part held by value is wrapped in a new `Arc` on every call: keep the parts that tools take
//! behind an `Arc` in the host state.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A part `Self` of the tool's state `S`, taken for each call.
///
/// Every type is a part of itself: `State<S>` of a tool whose state is `S` is the state as it
/// was given. Implement this trait for the parts a tool takes from a larger state:
///
/// ```
/// use std::sync::Arc;
/// use prism::context::FromState;
///
/// struct Db;
/// struct AppState { db: Arc<Db> }
///
/// impl FromState<AppState> for Db {
///     fn from_state(state: &Arc<AppState>) -> Arc<Db> {
///         Arc::clone(&state.db)
///     }
/// }
///
/// let state = Arc::new(AppState { db: Arc::new(Db) });
/// assert!(Arc::ptr_eq(&Db::from_state(&state), &state.db));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be taken from the tool's state `{S}`",
    label = "`State<{Self}>` is taken from the state `{S}` the tool was defined with",
    note = "implement `FromState<{S}>` for `{Self}` to say which part of `{S}` it is, or take `State<{S}>`"
)]
pub trait FromState<S: ?Sized> {
    /// The part, for one call.
    fn from_state(state: &Arc<S>) -> Arc<Self>;
}

impl<S: ?Sized> FromState<S> for S {
    #[inline]
    fn from_state(state: &Arc<S>) -> Arc<S> {
        Arc::clone(state)
    }
}

/// Shared state given to a tool when it is defined (a connection pool, say), or a part of it.
///
/// A `#[tool]` function that takes `State<T>` gets a `definition(state)` function instead of
/// `definition()`; every call then sees the same `Arc<T>`. With `#[tool(state = AppState)]`, a
/// tool takes parts of one `AppState`, each `State<T>` where `T: FromState<AppState>`.
/// `State<T>` dereferences to `T`.
///
/// ```
/// use std::sync::Arc;
/// use prism::{State, ToolExecutionContext};
/// use prism::context::{Extraction, FromToolContext};
///
/// struct Pool { size: usize }
///
/// let shared = Arc::new(Pool { size: 4 });
/// let Extraction::Ready(Ok(state)) =
///     State::<Pool>::from_context(&ToolExecutionContext::new(), &shared)
/// else {
///     unreachable!("taking the state is immediate")
/// };
/// assert_eq!(state.size, 4);
/// assert!(Arc::ptr_eq(&state.0, &shared));
/// ```
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> State<T> {
    /// The part `T` of the state `S`.
    #[inline]
    pub fn from_state<S: ?Sized>(state: &Arc<S>) -> Self
    where
        T: FromState<S>,
    {
        Self(T::from_state(state))
    }

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
