//! A guard's answer: ready now, or after an `await`.
//!
//! Most guards decide from what they are handed (a tool's annotations, a name list, the
//! arguments) and answer at once; some must ask something else first (an authorisation service,
//! a person, a database). [`Verdict`] carries both: `Ready` costs what a plain `Result` costs, and
//! only `Pending` boxes a future. The pipeline awaits a pending verdict in place, so a guard that
//! asks a service never blocks the runtime, and a guard that does not pays nothing for the
//! possibility.
//!
//! A pending verdict may borrow the tool, the arguments and the context for as long as it runs:
//! they outlive the check. While it is pending, the call holds its registry snapshot, so a slow
//! guard keeps the tools of that moment alive until it answers.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::error::Refusal;

/// What a trust, permission, validator or before-execute guard says about one call.
///
/// ```
/// use prism::guard::Verdict;
///
/// let allow = Verdict::allow();
/// assert!(allow.is_ready());
///
/// // A check that waits for an answer from elsewhere.
/// let (tx, rx) = tokio::sync::oneshot::channel::<bool>();
/// let pending = Verdict::pending(async move {
///     match rx.await {
///         Ok(true) => Ok(()),
///         _ => Err("the authorisation service said no".into()),
///     }
/// });
/// assert!(!pending.is_ready());
/// # drop(tx);
/// ```
#[must_use = "a verdict does nothing unless the pipeline receives it"]
pub enum Verdict<'a> {
    /// The answer, now.
    Ready(Result<(), Refusal>),
    /// The answer, once this future completes.
    Pending(Pin<Box<dyn Future<Output = Result<(), Refusal>> + Send + 'a>>),
}

impl<'a> Verdict<'a> {
    /// Lets the call go on.
    pub const fn allow() -> Self {
        Self::Ready(Ok(()))
    }

    /// Refuses the call with `refusal` (a message, or a [`Refusal`] with its own code).
    pub fn refuse(refusal: impl Into<Refusal>) -> Self {
        Self::Ready(Err(refusal.into()))
    }

    /// The answer of `check`, once it completes. Boxes `check`.
    pub fn pending(check: impl Future<Output = Result<(), Refusal>> + Send + 'a) -> Self {
        Self::Pending(Box::pin(check))
    }

    /// True when the answer is already known.
    pub fn is_ready(&self) -> bool {
        matches!(self, Self::Ready(_))
    }

    /// The answer, if it is ready (a pending verdict is dropped unpolled).
    pub fn ready(self) -> Option<Result<(), Refusal>> {
        match self {
            Self::Ready(answer) => Some(answer),
            Self::Pending(_) => None,
        }
    }

    /// The answer, awaiting it when it is pending.
    pub async fn resolve(self) -> Result<(), Refusal> {
        match self {
            Self::Ready(answer) => answer,
            Self::Pending(check) => check.await,
        }
    }
}

impl From<Result<(), Refusal>> for Verdict<'_> {
    fn from(answer: Result<(), Refusal>) -> Self {
        Self::Ready(answer)
    }
}

impl fmt::Debug for Verdict<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ready(answer) => f.debug_tuple("Ready").field(answer).finish(),
            Self::Pending(_) => f.write_str("Pending(..)"),
        }
    }
}

/// What a guard closure (`trust_fn`, `permission_fn`, `validator_fn`, `before_execute_fn`)
/// returns: `Result<(), Refusal>` for an answer now, or a [`Verdict`] (e.g.
/// [`Verdict::pending`]) for one that needs an `await`.
///
/// Only these two types implement it, so `Ok(())` needs no annotation: the compiler infers
/// `Result<(), Refusal>`. Write a refusal as `Err("why".into())` or `Err(Refusal::new(why))`.
#[diagnostic::on_unimplemented(
    message = "a guard closure must return `Result<(), Refusal>` or a `Verdict`, not `{Self}`",
    label = "returned here",
    note = "write a refusal as `Err(\"why\".into())` or `Err(Refusal::new(why))`; for a check that awaits, return `Verdict::pending(async move {{ … }})`"
)]
pub trait IntoVerdict {
    /// The verdict.
    fn into_verdict(self) -> Verdict<'static>;
}

impl IntoVerdict for Result<(), Refusal> {
    fn into_verdict(self) -> Verdict<'static> {
        Verdict::Ready(self)
    }
}

impl IntoVerdict for Verdict<'static> {
    fn into_verdict(self) -> Verdict<'static> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_pending_verdict_resolves_to_its_future_s_answer() {
        let (tx, rx) = tokio::sync::oneshot::channel::<&'static str>();
        let verdict = Verdict::pending(async move { Err(rx.await.unwrap().into()) });
        tx.send("no").unwrap();
        assert_eq!(verdict.resolve().await, Err(Refusal::new("no")));
        assert_eq!(Verdict::allow().resolve().await, Ok(()));
        assert_eq!(
            Verdict::refuse("closed").resolve().await,
            Err(Refusal::new("closed"))
        );
    }

    #[test]
    fn debug_names_the_state_without_polling() {
        assert_eq!(format!("{:?}", Verdict::allow()), "Ready(Ok(()))");
        let pending = Verdict::pending(std::future::pending());
        assert_eq!(format!("{pending:?}"), "Pending(..)");
    }
}
