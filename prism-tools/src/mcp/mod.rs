//! MCP, the Model Context Protocol, over rmcp (the official Rust SDK; feature `mcp`), on both
//! sides. We write no protocol code: rmcp speaks both protocol eras (2026-07-28 and the
//! 2025-11-25 handshake era) and both transports; this module connects them to the dispatcher,
//! so every tool, local or remote, passes the same pipeline.
//!
//! - [`server`]: a [`Dispatcher`](crate::Dispatcher) served as an MCP server. Every `tools/call`
//!   runs the whole pipeline (guards, events, ledger, redaction, effects), approvals become MCP
//!   elicitations, progress and cancellation cross the protocol, and the HTTP edge binds
//!   loopback, checks `Host` and `Origin`, bounds bodies and rate-limits each client.
//! - [`client`]: a remote server (a child process over stdio, or streamable HTTP) whose tools the
//!   host allows become [`ToolDefinition`](crate::ToolDefinition)s whose handler calls the
//!   remote tool. Nothing about a remote tool is trusted: its annotations grant nothing, its
//!   schema is bounded and never followed outside itself, and its results are bounded and
//!   marked untrusted.

pub mod client;
pub mod server;
mod tool_name;
