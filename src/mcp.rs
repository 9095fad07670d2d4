//! MCP, the Model Context Protocol (feature `mcp`), over rmcp, the official SDK, on both sides.
//!
//! [`McpServer`] serves a [`Dispatcher`](crate::Dispatcher) to MCP clients over stdio or
//! streamable HTTP: every `tools/call` passes the whole pipeline (guards, events, ledger,
//! redaction, effects), approvals are asked through the client, progress and cancellation cross
//! the protocol, and the HTTP edge is hardened ([`HttpOptions`], [`RateLimitLayer`]).
//!
//! [`McpClient`] connects to a remote server and turns its tools into tool definitions behind the
//! same dispatcher and guards as the host's own; [`RemoteServer`] says what the bridge trusts
//! (nothing) and bounds (everything).

pub use prism_tools::mcp::client::{
    InputRequest, InputRequired, McpClient, McpClientError, ProtocolEra, RemoteOutcome,
    RemoteServer, RemoteTools, SkippedTool, codes,
};
pub use prism_tools::mcp::server::{
    ClientAddress, HttpOptions, McpHttpServer, McpServer, McpServerBuilder, McpServerError,
    RateLimitLayer, RateLimitService, ServedRequest, serve_http,
};
