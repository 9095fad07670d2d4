//! The quickstart's tools served to MCP clients, every call through the dispatcher's guards.
//!
//! By default it speaks MCP on stdin and stdout, which is how a desktop client starts a local
//! server; `--http [ADDRESS]` serves streamable HTTP instead (default `127.0.0.1:8000`, endpoint
//! `/mcp`). Events go to stderr, one line per transition, so you can watch the pipeline work.
//!
//! Build it once, then point your client at the binary:
//!
//! ```sh
//! cargo build --release --example mcp_server --features mcp
//! ```
//!
//! A desktop client's configuration (Claude Desktop: `claude_desktop_config.json`; most MCP
//! clients take the same `mcpServers` shape). Use the absolute path of the binary you built:
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "prism-quickstart": {
//!       "command": "/absolute/path/to/prism/target/release/examples/mcp_server",
//!       "args": []
//!     }
//!   }
//! }
//! ```
//!
//! For a client that connects over HTTP, run `mcp_server --http` and give it
//! `http://127.0.0.1:8000/mcp`.
//!
//! What the client sees: `add`, `word_count`, `index_documents`, `fetch_invoice` and
//! `parse_date` (`delete_repository` is filtered out, so it is neither listed nor callable);
//! `index_documents` reports progress; `fetch_invoice` needs a person's approval, which the
//! client asks for; the API key in `fetch_invoice`'s error never reaches the client.

use std::net::SocketAddr;

use prism::dispatch::{SecretRedactor, ToolEvent, event_fn};
use prism::mcp::{HttpOptions, McpServer};
use prism::registry::ToolFilter;
use prism::{Dispatcher, ToolDefinition, ToolRegistry};

#[path = "support/quickstart_tools.rs"]
mod quickstart_tools;

use quickstart_tools::{API_KEY, tools};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Approval comes from the server, not from the tool's code: mark the invoice lookup.
    let registry = ToolRegistry::from_iter(tools().list().into_iter().map(|tool| {
        if tool.name() == "fetch_invoice" {
            needs_approval(&tool)
        } else {
            tool
        }
    }));
    let dispatcher = Dispatcher::builder(registry)
        .filter(ToolFilter::deny(["delete_repository"]))
        .events(event_fn(|event: &ToolEvent| {
            eprintln!(
                "[prism] {} {} {}",
                event.tool_call_id,
                event.tool_name,
                event.kind.type_name()
            );
        }))
        .redactor(SecretRedactor::new([API_KEY]))
        .build();
    let server = McpServer::builder(dispatcher)
        .name("prism-quickstart", env!("CARGO_PKG_VERSION"))
        .instructions("Arithmetic, word counts, invoices and dates, behind Prism's guards.")
        .build()?;

    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        None => server.serve_stdio().await?,
        Some("--http") => {
            let bind: SocketAddr = match args.next() {
                Some(address) => address.parse()?,
                None => HttpOptions::default().bind,
            };
            let mut running = server.serve_http(HttpOptions::bind(bind)).await?;
            eprintln!("[prism] MCP over HTTP at {}", running.url("/mcp"));
            tokio::select! {
                () = running.wait() => {}
                _ = tokio::signal::ctrl_c() => running.shutdown().await,
            }
        }
        Some(other) => {
            return Err(format!("unknown argument {other:?}; try --http [ADDRESS]").into());
        }
    }
    Ok(())
}

/// `tool`, asking for a person's approval before each call.
fn needs_approval(tool: &ToolDefinition) -> ToolDefinition {
    let mut builder = ToolDefinition::builder(tool.name_arc().clone())
        .annotations(tool.annotations().clone())
        .requires_approval(true);
    if let Some(description) = tool.description() {
        builder = builder.description(description);
    }
    if let Some(parameters) = tool.parameters() {
        builder = builder.parameters(parameters.clone());
    }
    builder.handler_arc(tool.handler().clone())
}
