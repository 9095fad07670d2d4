//! The client bridge: a remote MCP server's tools as the host's [`ToolDefinition`]s.
//!
//! [`McpClient::connect`] starts a server as a child process (stdio) or reaches it over
//! streamable HTTP, and runs the handshake (rmcp negotiates the 2026-07-28 revision or the
//! 2025-11-25 `initialize` era, see [`ProtocolEra`]). [`McpClient::tools`] lists its tools,
//! every page, keeping the list as long as the server's cache hint says, and turns the ones
//! the host allows ([`RemoteServer::filter`]) into definitions, named `{server}__{tool}` with
//! [`RemoteServer::prefixed`] (a server name that could make two servers' names meet, such as
//! one holding `__`, is refused). Register them; the dispatcher runs their calls like any other.
//!
//! What the bridge trusts of the server: nothing.
//!
//! - **Annotations grant nothing.** A remote tool's `readOnlyHint`, `idempotentHint` and the
//!   rest are the server's claims; the definition carries MCP's cautious defaults (not
//!   read-only, destructive, not idempotent, open world) unless the host vouches otherwise with
//!   [`RemoteServer::hints`]. Approval is the host's call ([`RemoteServer::requires_approval`]).
//! - **Schemas are bounded** (size, depth) and must be self-contained: a tool whose schema
//!   refers outside itself (`$ref` to a URL) is skipped with the reason, and nothing is ever
//!   fetched. The endpoint's credentials (see below) are taken out of what a schema only says
//!   (descriptions, titles, comments, defaults, examples); a tool whose schema holds one of 8
//!   bytes or more where it checks values (a `const`, an `enum`, a `pattern`, a property's
//!   name) is skipped. So are tools with names outside MCP's character set or holding such a
//!   credential, tools the SDK cannot read (one such tool costs only itself, not its page),
//!   and tools past the bound ([`RemoteServer::max_tools`], which counts only the tools the
//!   host's filters allow, readable or not): the first ones are taken, and listing stops
//!   reading there (pages left unread are named `*` in [`RemoteTools::skipped`], which names
//!   at most 100 tools and counts the rest).
//! - **Results are bounded** (the transport refuses oversized messages before decoding them:
//!   over HTTP the call such a message answers fails at once with `output_too_large`; from a
//!   child process, whose messages share one stream, the message ends the session, so every
//!   call waiting on it fails at once with `mcp_connection_lost` saying why, and the next call
//!   opens a new session (see below); a result over [`RemoteServer::max_result_bytes`] is
//!   `output_too_large`), keep their content blocks (text, image, audio, resource links,
//!   embedded resources) and are marked untrusted, so wire formats fence them as data for the
//!   model. A remote `isError` is the call's `tool_error`, with the remote text as the message:
//!   passed on whole, so that the dispatcher's redactor sees every secret in it before the
//!   dispatcher cuts the message to its bound (an error over
//!   [`RemoteServer::max_result_bytes`] is still a `tool_error`, its text cut to that bound
//!   after the endpoint's credentials are taken out).
//! - **Results keep the tool's declared output schema.** A tool's `outputSchema` is compiled
//!   once, when the tool is listed, with the crate's JSON Schema validator (a tool whose schema
//!   it cannot compile is skipped with the reason). A successful result whose
//!   `structuredContent` does not match it, or that has none, fails the call with
//!   `mcp_protocol_error`, naming where it fails (a JSON pointer into the value) and why, with the
//!   endpoint's credentials taken out; a remote error (`isError`) need not match. A direct
//!   [`McpClient::call`] is held to the schema the tool declared in the last listing.
//! - **Time is bounded.** A call waits [`RemoteServer::call_timeout`] for a result, each
//!   progress notification starting the wait again, and never longer than
//!   [`RemoteServer::max_call_timeout`]; on a timeout, on the context's cancellation, or when
//!   the dispatcher drops the call, the server is sent a cancellation. A server that dies or
//!   closes the stream fails its calls with `mcp_connection_lost` at once; one that hangs, with
//!   `mcp_timeout`, even one that stopped reading what it is sent (at most a second past the
//!   call's timeout). Connecting and listing have timeouts too, and no wait is longer than a day.
//! - **Credentials stay out of what the server sends back.** The HTTP stack quotes the
//!   endpoint's URL whole in its errors, which rmcp logs as they are: the bridge hands rmcp an
//!   HTTP client whose errors carry no URL, and names the endpoint by its scheme, host and port
//!   where a message needs it. A server may quote back what it was sent; the bridge takes the
//!   URL's user and password (as written, decoded, and as the basic authorization header sent
//!   for them), its query and each query value, and the values of the headers given for the
//!   server (an authorization header's credentials also without their scheme, a basic one's
//!   also decoded), or a child's [`RemoteServer::secret_env`] values, out of every error,
//!   progress message, result and request for input it passes on, and of the tool list (its
//!   descriptions and titles, the skipped tools' names and reasons); each also percent-encoded,
//!   as a server writes it into a URL it built.
//! - **Input is asked of the host.** The client offers the server no sampling, roots or
//!   elicitation of its own (it refuses a server that asks for them anyway, rather than answer
//!   for the person); a server that needs input answers `input_required`, which fails
//!   the dispatched call with code `mcp_input_required` naming what was asked, and the typed
//!   [`InputRequired`] waits in [`McpClient::take_input_required`] for the host, who may answer
//!   it with [`McpClient::resume`].
//! - **A child process gets a small environment**: `PATH`, `HOME`, the locale and what
//!   [`RemoteServer::env`] and [`RemoteServer::secret_env`] add, never the host's other
//!   variables. Its standard error goes to the log (`prism::mcp`, debug level) a whole line at a
//!   time, with the values given by `secret_env` taken out, and the secrets of every dispatcher
//!   that called it so far (a server may log the arguments it gets; a line over 4 KiB is left
//!   out, never cut); it is killed when the connection ends.
//!
//! **A session that ends is replaced.** A long-running host keeps its definitions while the
//! server behind them restarts: a child process exits or is killed, a message over the bound
//! closes a child's stream, an HTTP transport stops. (An HTTP server that restarted and forgot
//! the session answers the next request with 404; the SDK's transport then opens a new session
//! itself and sends that request again, which the server never ran.) The next call (through a
//! registered definition, [`McpClient::call`] or [`McpClient::resume`]) or [`McpClient::tools`]
//! that finds the session ended opens a new one to the same server in the same protocol era (a
//! new child process, a new HTTP session) and goes on with it; the definitions already
//! registered keep working, the kept tool list is dropped (the restarted server may offer other
//! tools) and [`McpClient::process_id`] names the new child.
//!
//! - **Nothing in flight is sent again.** A call waiting for its answer when the session ended
//!   fails with `mcp_connection_lost`: what it did on the server is unknown, so only calls that
//!   start after the end use the new session.
//! - **One attempt at a time.** Calls that find the session ended together wait for the same
//!   attempt, bounded by the connect timeout; they do not open a session each.
//! - **A server that stays down is not hammered.** After a failed attempt the next waits 1 s,
//!   doubling up to 30 s (back to 1 s once a session opens); a call in the delay fails at once
//!   with `mcp_connection_lost` saying when the next attempt will be made, and never hangs.
//! - **A closed client stays closed.** After [`McpClient::close`] every call fails with
//!   `mcp_connection_lost` saying so.
//!
//! Progress notifications reach the call's [`ToolExecutionContext`](crate::ToolExecutionContext)
//! as `{"progress", "total", "message"}` (a message over 4 KiB is left out whole, never cut
//! where a secret could be split), so the dispatcher's events
//! and ledger rows record them. When a relisting after the server's "the list changed" fails,
//! the next [`McpClient::tools`] asks again.
//!
//! [`ToolDefinition`]: crate::ToolDefinition

mod bounded_lines;
mod catalog;
mod connect;
mod error;
mod listing;
mod mcp_client;
mod notifications;
mod outcome;
mod output_contract;
#[cfg(test)]
mod output_schema_tests;
#[cfg(test)]
mod reconnect_tests;
mod remote_call;
mod remote_schema;
#[cfg(test)]
mod scripted_server;
#[cfg(test)]
mod sdk_server_tests;
mod server;
mod sessions;
mod url_free_http;

pub use catalog::{RemoteTools, SkippedTool};
pub use connect::ProtocolEra;
pub use error::{McpClientError, codes};
pub use mcp_client::McpClient;
pub use outcome::{InputRequest, InputRequired, RemoteOutcome};
pub use server::RemoteServer;
