//! [`Extraction`]: what an extractor hands back, either now or later.
//!
//! Most extractors answer at once (a value read from the context, a handle cloned out of the
//! state), and those must not pay for the few that wait on something (an authorisation service,
//! a connection pool). So the answer is an enum: a ready result costs nothing more than the
//! result itself, and only a pending one boxes its future.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// The future of a pending [`Extraction`].
pub type PendingExtraction<T, R> = Pin<Box<dyn Future<Output = Result<T, R>> + Send + 'static>>;

/// An extractor's answer: the value or its rejection, ready now or still to come.
///
/// Build a ready one from a `Result` (`Ok(value).into()`, or [`Extraction::ready`]) and a
/// pending one from a future ([`Extraction::pending`]); the future is boxed, so only extractors
/// that wait pay an allocation.
///
/// ```
/// use prism::context::Extraction;
///
/// let now: Extraction<u32, String> = Ok(7).into();
/// assert!(now.is_ready());
///
/// let later: Extraction<u32, String> = Extraction::pending(async { Ok(7) });
/// assert!(!later.is_ready());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(later.into_future().await, Ok(7));
/// # });
/// ```
#[must_use = "an extraction carries the value or the reason it could not be made"]
pub enum Extraction<T, R> {
    /// The answer is known.
    Ready(Result<T, R>),
    /// The answer comes when the future completes.
    Pending(PendingExtraction<T, R>),
}

impl<T, R> Extraction<T, R> {
    /// A ready answer.
    pub fn ready(result: Result<T, R>) -> Self {
        Self::Ready(result)
    }

    /// A ready value.
    pub fn ok(value: T) -> Self {
        Self::Ready(Ok(value))
    }

    /// A ready rejection.
    pub fn rejected(rejection: R) -> Self {
        Self::Ready(Err(rejection))
    }

    /// An answer that comes when `future` completes. The future is boxed.
    pub fn pending<F>(future: F) -> Self
    where
        F: Future<Output = Result<T, R>> + Send + 'static,
    {
        Self::Pending(Box::pin(future))
    }

    /// True when the answer is already known.
    pub fn is_ready(&self) -> bool {
        matches!(self, Self::Ready(_))
    }

    /// Waits for the answer.
    pub async fn into_future(self) -> Result<T, R> {
        match self {
            Self::Ready(result) => result,
            Self::Pending(future) => future.await,
        }
    }
}

impl<T: Send + 'static, R: Send + 'static> Extraction<T, R> {
    /// Applies `f` to the value, now when it is ready, when it arrives otherwise.
    pub fn map<U, F>(self, f: F) -> Extraction<U, R>
    where
        F: FnOnce(T) -> U + Send + 'static,
    {
        match self {
            Self::Ready(result) => Extraction::Ready(result.map(f)),
            Self::Pending(future) => {
                Extraction::Pending(Box::pin(async move { future.await.map(f) }))
            }
        }
    }

    /// Converts the rejection, now when it is ready, when it arrives otherwise.
    pub fn map_err<E, F>(self, f: F) -> Extraction<T, E>
    where
        F: FnOnce(R) -> E + Send + 'static,
    {
        match self {
            Self::Ready(result) => Extraction::Ready(result.map_err(f)),
            Self::Pending(future) => {
                Extraction::Pending(Box::pin(async move { future.await.map_err(f) }))
            }
        }
    }

    /// Both values, in order. Ready when both are; otherwise the pending ones are awaited in
    /// order, so the rejection reported is always that of the first extraction that failed.
    pub fn and<U: Send + 'static>(self, next: Extraction<U, R>) -> Extraction<(T, U), R> {
        match (self, next) {
            (Self::Ready(Err(rejection)), _) => Extraction::Ready(Err(rejection)),
            (Self::Ready(Ok(first)), Extraction::Ready(second)) => {
                Extraction::Ready(second.map(|second| (first, second)))
            }
            (first, second) => Extraction::Pending(Box::pin(async move {
                let first = first.into_future().await?;
                let second = second.into_future().await?;
                Ok((first, second))
            })),
        }
    }
}

impl<T, R> From<Result<T, R>> for Extraction<T, R> {
    fn from(result: Result<T, R>) -> Self {
        Self::Ready(result)
    }
}

impl<T: fmt::Debug, R: fmt::Debug> fmt::Debug for Extraction<T, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ready(result) => f.debug_tuple("Ready").field(result).finish(),
            Self::Pending(_) => f.debug_tuple("Pending").finish_non_exhaustive(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Extraction;

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn two_ready_values_stay_ready() {
        let both = Extraction::<_, ()>::ok(1).and(Extraction::ok("two"));
        assert!(both.is_ready());
        assert_eq!(block_on(both.into_future()), Ok((1, "two")));
    }

    #[test]
    fn the_first_rejection_in_order_wins_even_when_a_later_one_is_ready() {
        let first = Extraction::<u8, &str>::pending(async { Err("first") });
        let both = first.and(Extraction::<u8, &str>::rejected("second"));
        assert!(!both.is_ready());
        assert_eq!(block_on(both.into_future()), Err("first"));
    }

    #[test]
    fn a_ready_rejection_first_needs_no_wait() {
        let both = Extraction::<u8, &str>::rejected("first")
            .and(Extraction::<u8, &str>::pending(async { Ok(2) }));
        assert!(both.is_ready());
        assert_eq!(block_on(both.into_future()), Err("first"));
    }

    #[test]
    fn map_and_map_err_apply_to_pending_answers_too() {
        let value = Extraction::<u8, u8>::pending(async { Ok(2) }).map(|v| v * 10);
        assert_eq!(block_on(value.into_future()), Ok(20));
        let rejection = Extraction::<u8, u8>::pending(async { Err(3) }).map_err(|r| r + 1);
        assert_eq!(block_on(rejection.into_future()), Err(4));
    }
}
