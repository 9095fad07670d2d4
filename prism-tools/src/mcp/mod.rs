//! MCP, the Model Context Protocol, over rmcp (the official Rust SDK; feature `mcp`). We write no
//! protocol code: rmcp speaks both protocol eras (2026-07-28 and the 2025-11-25 handshake era) and
//! both transports; this module connects them to the dispatcher.
//!
//! [`server`]: a [`Dispatcher`](crate::Dispatcher) served as an MCP server. Every `tools/call`
//! runs the whole pipeline (guards, events, ledger, redaction, effects), approvals become MCP
//! elicitations, progress and cancellation cross the protocol, and the HTTP edge binds loopback,
//! checks `Host` and `Origin`, bounds bodies and rate-limits each client.

pub mod server;
