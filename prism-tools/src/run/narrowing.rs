//! Per-turn narrowing: a host callback that picks, before each provider turn, which of the run's
//! granted tools the model sees.
//!
//! Narrowing can only remove. Whatever the callback returns is intersected with the run's grant
//! (names it made up or that were never granted are dropped and reported in a
//! `tool_narrowing_clamped` event), and the kept tools stay in the snapshot's order, so the same
//! subset twice gives byte-identical schemas. A callback failure fails the turn before anything is
//! sent. Tools hidden this turn are refused at dispatch (`tool_denied`) unless the run allows
//! hidden calls.

use std::fmt;
use std::sync::Arc;

use crate::effects::BoxFuture;

/// What the narrowing callback is told about the coming turn.
#[derive(Clone, Copy, Debug)]
pub struct NarrowingRequest<'a> {
    /// The provider turn about to start, from 1.
    pub turn: u32,
    /// The model's text on the previous turn, if any.
    pub last_assistant_text: Option<&'a str>,
    /// The run's granted tools, in snapshot order.
    pub tool_ids: &'a [Arc<str>],
}

/// Chooses the tools of one turn. Implement it for async callbacks; use [`narrowing_fn`] for a
/// closure.
pub trait ToolNarrowing: Send + Sync + 'static {
    /// The names to show this turn; anything outside `request.tool_ids` is dropped. An `Err`
    /// fails the turn with that message.
    fn narrow<'a>(
        &'a self,
        request: NarrowingRequest<'a>,
    ) -> BoxFuture<'a, Result<Vec<String>, String>>;
}

/// A narrowing callback from a synchronous closure.
///
/// ```
/// use prism::run::narrowing_fn;
///
/// // Only the wiki tools while the model is researching.
/// let wiki_only = narrowing_fn(|request| {
///     Ok::<_, String>(request.tool_ids.iter().filter(|id| id.starts_with("wiki.")).map(|id| id.to_string()).collect::<Vec<_>>())
/// });
/// # let _ = wiki_only;
/// ```
pub fn narrowing_fn<F, I, S, E>(narrow: F) -> impl ToolNarrowing
where
    F: Fn(NarrowingRequest<'_>) -> Result<I, E> + Send + Sync + 'static,
    I: IntoIterator<Item = S>,
    S: Into<String>,
    E: fmt::Display,
{
    NarrowingFn(narrow)
}

struct NarrowingFn<F>(F);

impl<F, I, S, E> ToolNarrowing for NarrowingFn<F>
where
    F: Fn(NarrowingRequest<'_>) -> Result<I, E> + Send + Sync + 'static,
    I: IntoIterator<Item = S>,
    S: Into<String>,
    E: fmt::Display,
{
    fn narrow<'a>(
        &'a self,
        request: NarrowingRequest<'a>,
    ) -> BoxFuture<'a, Result<Vec<String>, String>> {
        let answer = (self.0)(request)
            .map(|names| names.into_iter().map(Into::into).collect())
            .map_err(|error| error.to_string());
        Box::pin(std::future::ready(answer))
    }
}
