//! MCP, the Model Context Protocol (feature `mcp`): a remote server's tools used behind the
//! same dispatcher and guards as the host's own.
//!
//! See [`McpClient`] to connect and [`RemoteServer`] for what the bridge trusts (nothing) and
//! bounds (everything): the module docs of `prism_tools::mcp::client` say it in full.

pub use prism_tools::mcp::client::{
    InputRequest, InputRequired, McpClient, McpClientError, ProtocolEra, RemoteOutcome,
    RemoteServer, RemoteTools, SkippedTool, codes,
};
