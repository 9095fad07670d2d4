//! [`ToolFuture`]: the unpolled body of one tool call, kept without an allocation when it is small.
//!
//! Every dispatched call makes one body, so how it is stored is on the hot path: a `Box` per call
//! costs an allocation and a free. Most bodies are small (a handle on the tool, a few decoded
//! arguments, the call's context), so they are stored inline, in a fixed room inside the
//! dispatcher's own future; a larger body, or one that needs a stricter alignment, is boxed.
//!
//! The room is a trade-off: every dispatch future carries it, and its bytes are copied when the
//! body is put in place. It was sized on the bare dispatch of a small typed tool: that tool's body
//! fits, and each further 64 bytes of room cost every call about a seventh of the allocation they
//! would save the calls that need them.
//!
//! The storage is the `stackfuture` crate's; this type keeps it out of the public API.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use stackfuture::StackFuture;

use crate::call::ToolOutput;
use crate::error::ToolError;

/// Bytes of inline room; see [`ToolFuture::INLINE_CAPACITY`].
const INLINE_CAPACITY: usize = 128;

/// The erased body, inline when it fits.
type Storage = StackFuture<'static, Result<ToolOutput, ToolError>, INLINE_CAPACITY>;

pin_project! {
    /// The unpolled body of one tool call: awaiting it performs the tool's side effect.
    ///
    /// [`ToolHandler::prepare`](crate::ToolHandler::prepare) returns one (in a
    /// [`Prepared`](crate::Prepared)) after decoding the arguments, and the dispatcher awaits it only once every guard has passed. Make one with
    /// [`ToolFuture::new`] from any `Send + 'static` future of a `Result<O, ToolError>` where `O`
    /// is a JSON [`Value`](serde_json::Value), a [`ToolOutput`], a
    /// [`ContentBlock`](crate::call::ContentBlock) or a `Vec` of them: a body of at most [`INLINE_CAPACITY`](Self::INLINE_CAPACITY) bytes is stored inline, with
    /// no allocation, and a larger one is boxed. A body that is already boxed converts with
    /// `From`.
    ///
    /// Like an `async` block, a `ToolFuture` is not `Unpin`: `.await` it, or pin it
    /// (`std::pin::pin!`) to poll it by hand.
    ///
    /// ```
    /// use prism::ToolExecutionContext;
    /// use prism::definition::{NotPrepared, Prepared, ToolFuture, ToolHandler};
    /// use serde_json::Value;
    ///
    /// /// Counts the characters of `text`.
    /// struct CountChars;
    ///
    /// impl ToolHandler for CountChars {
    ///     fn prepare(&self, arguments: &Value, _ctx: ToolExecutionContext) -> Result<Prepared, NotPrepared> {
    ///         // Decode now, so bad arguments are refused before anything runs...
    ///         let text = arguments["text"].as_str().ok_or("`text` must be a string")?.to_owned();
    ///         let body = async move { Ok(Value::from(text.chars().count())) };
    ///         assert!(ToolFuture::fits_inline(&body));
    ///         // ...and do the work only when the body is awaited.
    ///         Ok(ToolFuture::new(body).into())
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let arguments = serde_json::json!({"text": "héllo"});
    /// let Ok(Prepared::Ready(body)) = CountChars.prepare(&arguments, ToolExecutionContext::new())
    /// else {
    ///     unreachable!("the text decodes")
    /// };
    /// assert_eq!(body.await.unwrap().value, Value::from(5));
    /// # });
    /// ```
    #[must_use = "a tool body does nothing unless it is awaited"]
    pub struct ToolFuture {
        #[pin]
        body: Storage,
    }
}

impl ToolFuture {
    /// How many bytes a body may take and still be stored inline (its alignment may be up to a
    /// pointer's). Small bodies fit, such as a synchronous `#[tool]` function's with a few number
    /// or string arguments; larger ones are boxed. [`fits_inline`](Self::fits_inline) tells
    /// which.
    pub const INLINE_CAPACITY: usize = INLINE_CAPACITY;

    /// Wraps `body`, inline when it [fits](Self::fits_inline), boxed otherwise. Nothing runs
    /// until the result is awaited.
    pub fn new<F, O>(body: F) -> Self
    where
        F: Future<Output = Result<O, ToolError>> + Send + 'static,
        O: Into<ToolOutput>,
    {
        Self::from_output(IntoOutput { body })
    }

    /// Stores a body whose output is already a [`ToolOutput`], as generated and typed tools
    /// produce it: no conversion to compile per tool.
    pub(crate) fn from_output<F>(body: F) -> Self
    where
        F: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        // Decided at compile time, so each body type compiles only the storage it uses: the
        // branch not taken is not instantiated.
        if const { Storage::has_space_for::<F>() && Storage::has_alignment_for::<F>() } {
            match Storage::try_from(body) {
                Ok(body) => Self { body },
                Err(_) => unreachable!("a body that fits is stored inline"),
            }
        } else {
            Self::boxed(Box::pin(body))
        }
    }

    /// A body too large to store inline, boxed: one function for every body type.
    fn boxed(body: Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>) -> Self {
        Self {
            body: Storage::from(body),
        }
    }

    /// True when [`new`](Self::new) would store `body` inline, without an allocation: its size
    /// is at most [`INLINE_CAPACITY`](Self::INLINE_CAPACITY) and its alignment fits too.
    pub const fn fits_inline<F>(body: &F) -> bool {
        Storage::has_space_for_val(body) && Storage::has_alignment_for_val(body)
    }
}

pin_project! {
    /// A body whose output is converted into a [`ToolOutput`]; exactly as large as the body.
    struct IntoOutput<F> {
        #[pin]
        body: F,
    }
}

impl<F, O> Future for IntoOutput<F>
where
    F: Future<Output = Result<O, ToolError>>,
    O: Into<ToolOutput>,
{
    type Output = Result<ToolOutput, ToolError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().body.poll(cx).map_ok(Into::into)
    }
}

impl Future for ToolFuture {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().body.poll(cx)
    }
}

/// A body boxed elsewhere (a `BoxFuture`, say) is stored as it is: the box itself fits inline,
/// so the conversion allocates nothing more.
impl<F, O> From<Pin<Box<F>>> for ToolFuture
where
    F: Future<Output = Result<O, ToolError>> + Send + ?Sized + 'static,
    O: Into<ToolOutput>,
{
    fn from(body: Pin<Box<F>>) -> Self {
        Self::new(body)
    }
}

impl fmt::Debug for ToolFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolFuture").finish_non_exhaustive()
    }
}
