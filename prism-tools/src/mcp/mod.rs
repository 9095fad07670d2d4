//! MCP, the Model Context Protocol, on the client side: a remote server's tools used behind the
//! same dispatcher as the host's own.
//!
//! [`client`] connects to a server (a child process over stdio, or streamable HTTP) with the
//! official SDK, rmcp, lists its tools and turns the ones the host allows into
//! [`ToolDefinition`](crate::ToolDefinition)s whose handler calls the remote tool. Nothing about
//! a remote tool is trusted: its annotations grant nothing, its schema is bounded and never
//! followed outside itself, and its results are bounded and marked untrusted.

pub mod client;
