//! What goes wrong in a browser tool, each with a stable code the model and the host can read.

use std::fmt;
use std::time::Duration;

use crate::error::ToolError;
use crate::tools::web::{WebError, WebErrorKind};

/// A browser tool's failure: a kind (with its stable [`code`](BrowserError::code)) and a message
/// that says what happened and, where the model can do something about it, what to do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrowserError {
    kind: BrowserErrorKind,
    message: String,
}

/// The kinds of [`BrowserError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BrowserErrorKind {
    /// The browser could not be launched or reached.
    Launch,
    /// The browser crashed, was closed, or its connection dropped.
    Closed,
    /// An action, a navigation or a capture took longer than its limit.
    Timeout,
    /// The URL does not parse, or uses a scheme other than http and https, or carries
    /// credentials.
    InvalidUrl,
    /// The URL policy refuses the URL, a redirect hop, or the address it resolves to.
    Refused,
    /// The page could not be loaded (connection refused, DNS failure...).
    Navigation,
    /// The ref names no element of the latest snapshot.
    UnknownRef,
    /// The ref belongs to an earlier snapshot, or its element left the page.
    StaleRef,
    /// The action cannot be done on that element (no visible box, no such option...).
    Action,
    /// The screenshot stays over the byte limit even when scaled down and compressed.
    TooLarge,
    /// The call carries no run id, so there is no browser context it could own.
    NoRun,
    /// The host's limit on open browser contexts is reached.
    TooManyContexts,
    /// The DevTools protocol answered with an error.
    Protocol,
}

impl BrowserErrorKind {
    /// The stable code, as it appears in tool errors: `browser_launch`, `browser_closed`,
    /// `timeout`, `url_invalid`, `url_refused`, `navigation_failed`, `unknown_ref`, `stale_ref`,
    /// `action_failed`, `too_large`, `no_run`, `too_many_contexts`, `browser_protocol`.
    pub fn code(self) -> &'static str {
        match self {
            BrowserErrorKind::Launch => "browser_launch",
            BrowserErrorKind::Closed => "browser_closed",
            BrowserErrorKind::Timeout => "timeout",
            BrowserErrorKind::InvalidUrl => "url_invalid",
            BrowserErrorKind::Refused => "url_refused",
            BrowserErrorKind::Navigation => "navigation_failed",
            BrowserErrorKind::UnknownRef => "unknown_ref",
            BrowserErrorKind::StaleRef => "stale_ref",
            BrowserErrorKind::Action => "action_failed",
            BrowserErrorKind::TooLarge => "too_large",
            BrowserErrorKind::NoRun => "no_run",
            BrowserErrorKind::TooManyContexts => "too_many_contexts",
            BrowserErrorKind::Protocol => "browser_protocol",
        }
    }
}

impl BrowserError {
    /// An error of `kind` with `message`.
    pub fn new(kind: BrowserErrorKind, message: impl Into<String>) -> Self {
        BrowserError {
            kind,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> BrowserErrorKind {
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

    /// The tool error a browser tool returns: this error's code and message.
    pub fn into_tool_error(self) -> ToolError {
        ToolError::with_code(self.code(), self.message)
    }

    pub(crate) fn timeout(what: &str, after: Duration) -> Self {
        BrowserError::new(
            BrowserErrorKind::Timeout,
            format!("{what} took longer than {} ms", after.as_millis()),
        )
    }

    pub(crate) fn closed() -> Self {
        BrowserError::new(
            BrowserErrorKind::Closed,
            "the browser is closed or has crashed; the host must supply a new one",
        )
    }

    pub(crate) fn protocol(what: &str, error: impl fmt::Display) -> Self {
        BrowserError::new(BrowserErrorKind::Protocol, format!("{what}: {error}"))
    }
}

impl From<WebError> for BrowserError {
    fn from(error: WebError) -> Self {
        let kind = match error.kind() {
            WebErrorKind::InvalidUrl => BrowserErrorKind::InvalidUrl,
            WebErrorKind::Refused => BrowserErrorKind::Refused,
            WebErrorKind::Timeout => BrowserErrorKind::Timeout,
            _ => BrowserErrorKind::Navigation,
        };
        BrowserError::new(kind, error.message())
    }
}

impl fmt::Display for BrowserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)
    }
}

impl std::error::Error for BrowserError {}
