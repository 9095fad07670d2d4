//! [`ToolError`]: what a tool body returns when it fails.

use std::borrow::Cow;
use std::fmt;

use crate::call::{ErrorCode, ErrorInfo};

/// The error a tool returns. Anything that implements [`Display`](fmt::Display) converts into it
/// with `?` or `.into()` (`String`, `&str`, `std::io::Error`, `anyhow::Error`, your own error
/// enum), so tool bodies can use their natural error type.
///
/// `ToolError` deliberately does not implement `Display` itself: that is what lets the blanket
/// conversion from every `Display` type exist. Read it with [`ToolError::message`].
///
/// The message reaches the model after the dispatcher has redacted every known secret from it,
/// and then cut it to 16 KiB (so a secret that runs across the cut is still found whole).
///
/// ```
/// use prism::ToolError;
///
/// fn parse(text: &str) -> Result<i64, ToolError> {
///     Ok(text.trim().parse::<i64>()?)
/// }
/// assert_eq!(parse("x").unwrap_err().message(), "invalid digit found in string");
/// ```
pub struct ToolError {
    code: ErrorCode,
    message: String,
}

impl ToolError {
    /// An error with code `tool_error`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            code: ErrorCode::ToolError,
            message: message.into(),
        }
    }

    /// An error with a code of the tool's own choosing, e.g. `"rate_limited"`.
    pub fn with_code(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self {
            code: ErrorCode::parse(&code.into()),
            message: message.into(),
        }
    }

    /// The error a tool returns when it noticed the run's cancellation token: code `cancelled`.
    pub fn cancelled() -> Self {
        Self {
            code: ErrorCode::Cancelled,
            message: "The tool call was cancelled".to_owned(),
        }
    }

    /// The code.
    pub fn code(&self) -> &ErrorCode {
        &self.code
    }

    /// The message, before redaction.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Converts into the wire form.
    pub fn into_info(self) -> ErrorInfo {
        ErrorInfo::new(self.code, self.message)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("code", &self.code)
            .field("message", &self.message)
            .finish()
    }
}

impl<E: fmt::Display> From<E> for ToolError {
    fn from(error: E) -> Self {
        Self::new(error.to_string())
    }
}

/// Why a guard or a handler's `prepare` refused a call. The dispatcher turns it into a blocked
/// [`ToolResult`](crate::ToolResult) with the guard's [`BlockReason`](crate::BlockReason).
///
/// Build one from a message (`"query too long".into()`) or from a full [`ErrorInfo`] when the
/// guard wants its own code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// A code that replaces the reason's default code, when set.
    pub code: Option<ErrorCode>,
    /// What to tell the model. Redacted before it leaves the dispatcher.
    pub message: String,
}

impl Refusal {
    /// A refusal with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            code: None,
            message: message.into(),
        }
    }
}

impl From<String> for Refusal {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for Refusal {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

impl From<ErrorInfo> for Refusal {
    fn from(info: ErrorInfo) -> Self {
        Self {
            code: Some(info.code),
            message: info.message,
        }
    }
}

/// An extractor that cannot fail names `Infallible` as its rejection; there is no such value.
impl From<std::convert::Infallible> for Refusal {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}
