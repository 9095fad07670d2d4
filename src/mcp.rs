//! MCP, the Model Context Protocol (feature `mcp`), over rmcp, the official SDK.
//!
//! [`McpServer`] serves a [`Dispatcher`](crate::Dispatcher) to MCP clients over stdio or
//! streamable HTTP: every `tools/call` passes the whole pipeline (guards, events, ledger,
//! redaction, effects), approvals are asked through the client, progress and cancellation cross
//! the protocol, and the HTTP edge is hardened ([`HttpOptions`], [`RateLimitLayer`]).

pub use prism_tools::mcp::server::{
    ClientAddress, HttpOptions, McpHttpServer, McpServer, McpServerBuilder, McpServerError,
    RateLimitLayer, RateLimitService, ServedRequest, serve_http,
};
