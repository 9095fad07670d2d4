//! DevTools protocol calls by method name with JSON parameters, so a protocol field this
//! crate's typed bindings do not know yet cannot make a whole answer unreadable.

use std::borrow::Cow;

use chromiumoxide::error::CdpError;
use chromiumoxide::types::{Command, Method, MethodId};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::error::{BrowserError, BrowserErrorKind};

/// One protocol method and its parameters; the answer is read as plain JSON.
#[derive(Debug)]
pub(crate) struct RawCommand {
    method: &'static str,
    params: Value,
}

impl RawCommand {
    pub(crate) fn new(method: &'static str, params: Value) -> Self {
        RawCommand { method, params }
    }
}

impl Serialize for RawCommand {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(serializer)
    }
}

impl Method for RawCommand {
    fn identifier(&self) -> MethodId {
        Cow::Borrowed(self.method)
    }
}

impl Command for RawCommand {
    type Response = Value;
}

/// A protocol error as a browser error. Transport failures mean the browser is gone.
pub(crate) fn cdp_error(method: &str, error: CdpError) -> BrowserError {
    match error {
        CdpError::Chrome(error) => BrowserError::protocol(method, error.message),
        CdpError::ChromeMessage(message) => BrowserError::protocol(method, message),
        CdpError::Ws(_)
        | CdpError::ChannelSendError(_)
        | CdpError::NoResponse
        | CdpError::Io(_) => BrowserError::closed(),
        CdpError::Timeout => BrowserError::new(
            BrowserErrorKind::Timeout,
            format!("{method}: the browser did not answer"),
        ),
        other => BrowserError::protocol(method, other),
    }
}
