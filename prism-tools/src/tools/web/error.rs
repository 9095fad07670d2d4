//! What goes wrong in a web tool, each with a stable code the model and the host can read.

use std::fmt;
use std::time::Duration;

use crate::error::ToolError;

/// A web tool's failure: a kind (with its stable [`code`](WebError::code)) and a message that
/// says what happened to which URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebError {
    kind: WebErrorKind,
    message: String,
}

/// The kinds of [`WebError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WebErrorKind {
    /// The URL does not parse, or uses a scheme other than http and https, or carries
    /// credentials.
    InvalidUrl,
    /// The URL policy refuses the host or the address it resolves to.
    Refused,
    /// More redirects than the policy allows.
    TooManyRedirects,
    /// Connecting, the whole exchange, or the wait between two chunks took too long.
    Timeout,
    /// The response's media type is not on the allow list, or the body is binary.
    UnsupportedContent,
    /// The network or the server failed (connection refused, reset, bad response).
    Network,
    /// The body could not be decoded (corrupt compression, unknown content coding).
    Decode,
    /// No readable article could be found in the page.
    NotReadable,
    /// The arguments make no sense together (no URL and no HTML, say).
    InvalidRequest,
    /// A search API refused the request for its rate limit.
    RateLimited,
    /// A search API answered with an error or a shape this adapter does not read.
    Backend,
}

impl WebErrorKind {
    /// The stable code, as it appears in tool errors: `url_invalid`, `url_refused`,
    /// `too_many_redirects`, `timeout`, `unsupported_content`, `network`, `decode`, `not_readable`,
    /// `invalid_request`, `rate_limited`, `search_backend`.
    pub fn code(self) -> &'static str {
        match self {
            WebErrorKind::InvalidUrl => "url_invalid",
            WebErrorKind::Refused => "url_refused",
            WebErrorKind::TooManyRedirects => "too_many_redirects",
            WebErrorKind::Timeout => "timeout",
            WebErrorKind::UnsupportedContent => "unsupported_content",
            WebErrorKind::Network => "network",
            WebErrorKind::Decode => "decode",
            WebErrorKind::NotReadable => "not_readable",
            WebErrorKind::InvalidRequest => "invalid_request",
            WebErrorKind::RateLimited => "rate_limited",
            WebErrorKind::Backend => "search_backend",
        }
    }
}

impl WebError {
    /// An error of `kind` with `message`.
    pub fn new(kind: WebErrorKind, message: impl Into<String>) -> Self {
        WebError {
            kind,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> WebErrorKind {
        self.kind
    }

    /// The stable code of the kind.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// What happened, in words.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn timeout(what: &str, after: Duration) -> Self {
        WebError::new(
            WebErrorKind::Timeout,
            format!("{what} took longer than {} ms", after.as_millis()),
        )
    }
}

impl fmt::Display for WebError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)
    }
}

impl std::error::Error for WebError {}

impl WebError {
    /// The tool error a web tool returns: this error's code and message.
    pub fn into_tool_error(self) -> ToolError {
        ToolError::with_code(self.code(), self.message)
    }
}
