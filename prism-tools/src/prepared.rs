//! What a handler's `prepare` step produces: [`Prepared`], the body ready to await or still
//! being prepared, and [`NotPrepared`], why there is no body.
//!
//! Preparing decodes the arguments and takes the values the body needs from the call's context
//! (its extractors). Decoding is always synchronous; an extractor may have to wait (on an
//! authorisation service, say). The common case, where everything is at hand, must cost nothing
//! for the rare one: a ready body is returned as it is, and only a pending preparation is a
//! boxed future, which the dispatcher awaits before the before-execute policy, the effect claim
//! and the `started` row. Either way a refusal happens before any side effect.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::call::BlockReason;
use crate::error::Refusal;
use crate::tool_future::ToolFuture;

/// A preparation that is still waiting (on an extractor): it yields the body, or why there is
/// none.
pub type PendingBody = Pin<Box<dyn Future<Output = Result<ToolFuture, NotPrepared>> + Send>>;

/// The body of one call, as [`ToolHandler::prepare`](crate::ToolHandler::prepare) produced it.
///
/// ```
/// use prism::definition::{Prepared, ToolFuture};
/// use serde_json::Value;
///
/// let body: Prepared = ToolFuture::new(async { Ok(Value::from(1)) }).into();
/// assert!(matches!(body, Prepared::Ready(_)));
/// ```
#[must_use = "a prepared body does nothing unless it is awaited"]
pub enum Prepared {
    /// The body, ready to be awaited once every guard has passed.
    Ready(ToolFuture),
    /// The body comes when this future completes; awaiting the future performs no side effect.
    Pending(PendingBody),
}

impl Prepared {
    /// A preparation that finishes when `future` does. The future is boxed; it must not perform
    /// the tool's side effect, only get the body ready.
    pub fn pending<F>(future: F) -> Self
    where
        F: Future<Output = Result<ToolFuture, NotPrepared>> + Send + 'static,
    {
        Self::Pending(Box::pin(future))
    }
}

impl From<ToolFuture> for Prepared {
    fn from(body: ToolFuture) -> Self {
        Self::Ready(body)
    }
}

impl fmt::Debug for Prepared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ready(body) => f.debug_tuple("Ready").field(body).finish(),
            Self::Pending(_) => f.debug_tuple("Pending").finish_non_exhaustive(),
        }
    }
}

/// Why a handler prepared no body: the call is refused with this reason and message, and
/// nothing ran.
///
/// A bare [`Refusal`] (or a message) converts into an `invalid_arguments` refusal, the outcome of
/// arguments that do not decode, so `?` works on [`decode_arguments`](crate::tool::decode_arguments)
/// and on `ok_or("…")`.
///
/// ```
/// use prism::call::BlockReason;
/// use prism::definition::NotPrepared;
///
/// let bad: NotPrepared = "`text` must be a string".into();
/// assert_eq!(bad.reason(), BlockReason::InvalidArguments);
///
/// let missing = NotPrepared::extraction_failed("this run has no user");
/// assert_eq!(missing.reason(), BlockReason::ExtractionFailed);
/// assert_eq!(missing.refusal().message, "this run has no user");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotPrepared {
    reason: BlockReason,
    refusal: Refusal,
}

impl NotPrepared {
    /// The arguments do not decode: `invalid_arguments`.
    pub fn invalid_arguments(refusal: impl Into<Refusal>) -> Self {
        Self {
            reason: BlockReason::InvalidArguments,
            refusal: refusal.into(),
        }
    }

    /// A value the body takes from the call's context could not be made: `extraction_failed`.
    pub fn extraction_failed(refusal: impl Into<Refusal>) -> Self {
        Self {
            reason: BlockReason::ExtractionFailed,
            refusal: refusal.into(),
        }
    }

    /// The reason the blocked result carries.
    pub fn reason(&self) -> BlockReason {
        self.reason
    }

    /// The refusal: the message shown to the model (after redaction), and its code if set.
    pub fn refusal(&self) -> &Refusal {
        &self.refusal
    }

    /// The reason and the refusal.
    pub fn into_parts(self) -> (BlockReason, Refusal) {
        (self.reason, self.refusal)
    }
}

impl From<Refusal> for NotPrepared {
    fn from(refusal: Refusal) -> Self {
        Self::invalid_arguments(refusal)
    }
}

impl From<String> for NotPrepared {
    fn from(message: String) -> Self {
        Self::invalid_arguments(message)
    }
}

impl From<&str> for NotPrepared {
    fn from(message: &str) -> Self {
        Self::invalid_arguments(message)
    }
}
