//! [`McpClientError`]: why connecting to a server or listing its tools failed, and the error
//! codes a remote call fails with.

use std::fmt;
use std::time::Duration;

/// The error codes of a remote call that did not give a result, as the dispatcher's
/// [`ErrorInfo::code`](crate::ErrorInfo) carries them. A remote tool that answered with an
/// error (`isError: true`) fails with the ordinary `tool_error`, a result over its bound with
/// `output_too_large`, and a call cancelled through its context with `cancelled`.
pub mod codes {
    /// The server did not answer in time; the bridge sent it a cancellation.
    pub const TIMEOUT: &str = "mcp_timeout";
    /// The connection is gone (the server exited, was killed, or closed the stream, or the
    /// bridge ended it when a child process sent a message over the transport's bound), or over
    /// HTTP the call's request failed (the message says why, e.g. its status). A call in flight
    /// then is not sent again; the next call opens a new session. Also the code of a call that
    /// found the session ended and no new one could be opened (the message says when the next
    /// attempt will be made), or found the client closed.
    pub const CONNECTION_LOST: &str = "mcp_connection_lost";
    /// The server answered with a protocol error (an unknown tool, bad parameters…), with
    /// something that is not a tool result, or with a successful result whose
    /// `structuredContent` breaks the tool's declared output schema (or is missing).
    pub const PROTOCOL_ERROR: &str = "mcp_protocol_error";
    /// The server needs input from the person or the client before the tool can finish
    /// (MCP's `input_required`); the message says what it asked for, and
    /// [`McpClient::call`](crate::mcp::client::McpClient::call) returns it typed.
    pub const INPUT_REQUIRED: &str = "mcp_input_required";
}

/// Why the bridge could not connect to a server or list its tools.
#[derive(Debug)]
#[non_exhaustive]
pub enum McpClientError {
    /// The server's name cannot prefix its tools: it must be 1 to 128 of A-Z a-z 0-9 _ - . with
    /// no `__` and no `_` at its end, so that `{server}__{tool}` names one server's tool only.
    Name {
        /// The server's name.
        server: String,
    },
    /// The server's process could not be started.
    Spawn {
        /// The server's name.
        server: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The HTTP client could not be built (TLS set-up) or a header is invalid.
    Http {
        /// The server's name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// The protocol handshake failed.
    Handshake {
        /// The server's name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// The server did not answer in time.
    Timeout {
        /// The server's name.
        server: String,
        /// What it was asked.
        during: &'static str,
        /// How long the bridge waited.
        waited: Duration,
    },
    /// A request failed: the connection is gone, or the server answered with an error.
    Request {
        /// The server's name.
        server: String,
        /// What it was asked.
        during: &'static str,
        /// What went wrong.
        message: String,
    },
}

impl fmt::Display for McpClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name { server } => write!(
                f,
                "MCP server name `{}` cannot prefix its tools: use 1 to 128 of A-Z a-z 0-9 _ - . \
                 with no `__` and no `_` at its end",
                server.chars().take(140).collect::<String>()
            ),
            Self::Spawn { server, source } => {
                write!(f, "MCP server `{server}` could not be started: {source}")
            }
            Self::Http { server, message } => {
                write!(
                    f,
                    "MCP server `{server}`: HTTP client set-up failed: {message}"
                )
            }
            Self::Handshake { server, message } => {
                write!(f, "MCP server `{server}`: the handshake failed: {message}")
            }
            Self::Timeout {
                server,
                during,
                waited,
            } => write!(
                f,
                "MCP server `{server}` did not answer {during} within {} ms",
                waited.as_millis()
            ),
            Self::Request {
                server,
                during,
                message,
            } => write!(f, "MCP server `{server}`: {during} failed: {message}"),
        }
    }
}

impl std::error::Error for McpClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}
