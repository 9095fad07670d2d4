//! A run whose tools come from a real MCP server: `mcp-server-time` (PyPI), started as a child
//! process and spoken to over stdio, its tools registered beside a local one and dispatched
//! behind the same guards. A scripted provider stands in for the model, so no key is needed.
//!
//! ```text
//! eval "$(bash .ci/mcp_peers.sh)"      # installs the server once into a cache directory
//! cargo run --example mcp_client --features mcp
//! ```
//!
//! Without the server it says what to install and exits 0. The run shows:
//!
//! 1. the remote tools as the host took them: prefixed names, the server's claims about them
//!    replaced by MCP's cautious defaults, output marked untrusted;
//! 2. a remote call answered (its content block kept, fenced as untrusted for the model);
//! 3. a remote tool the host's filter denies, refused before anything reaches the server;
//! 4. a remote error (an unknown time zone) as the call's `tool_error`.

use std::path::PathBuf;
use std::process::ExitCode;

use prism::call::ToolOutcome;
use prism::mcp::{McpClient, RemoteServer};
use prism::registry::ToolFilter;
use prism::run::ScriptedProvider;
use prism::{
    Agent, Dispatcher, Message, ProviderResponse, RunOptions, ToolCall, ToolDefinition,
    ToolRegistry,
};
use serde_json::{Value, json};

/// The virtual environment `.ci/mcp_peers.sh` installs `mcp-server-time` into.
fn server_python() -> Option<PathBuf> {
    let venv = std::env::var_os("PRISM_MCP_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache"))
                })?;
            Some(cache.join("prism-ci/mcp-servers-venv"))
        })?;
    let python = venv.join("bin/python");
    python.exists().then_some(python)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let Some(python) = server_python() else {
        println!(
            "This example starts the MCP server `mcp-server-time` (PyPI), which is not installed.\n\
             Install it with `bash .ci/mcp_peers.sh` (a virtual environment in the cache), or:\n\
             \n    python3 -m venv /tmp/mcp && /tmp/mcp/bin/pip install mcp-server-time==2026.10.19\n    \
             PRISM_MCP_VENV=/tmp/mcp cargo run --example mcp_client --features mcp"
        );
        return Ok(ExitCode::SUCCESS);
    };

    let server = RemoteServer::command("time", python)
        .args(["-m", "mcp_server_time", "--local-timezone", "UTC"])
        .prefixed(true);
    let client = McpClient::connect(server).await?;
    println!(
        "connected to {:?}, protocol {}",
        client.server_info().map(|(name, _)| name),
        client.protocol_version().unwrap_or_default()
    );
    let remote = client.tools().await?;
    for tool in remote.definitions() {
        let hints = tool.annotations();
        println!(
            "  remote tool {:<22} read_only={:?} destructive={:?} untrusted_output={}",
            tool.name(),
            hints.read_only,
            hints.destructive,
            tool.untrusted_output()
        );
    }

    // The remote tools sit beside the host's own, in one registry.
    let days = ToolDefinition::builder("days_between")
        .description("Counts the days between two dates of one year, given as day numbers.")
        .parameters(json!({
            "type": "object",
            "properties": {"from": {"type": "integer"}, "to": {"type": "integer"}},
            "required": ["from", "to"]
        }))
        .run_sync(|args: &Value, _| {
            Ok(json!(
                args["to"].as_i64().unwrap_or(0) - args["from"].as_i64().unwrap_or(0)
            ))
        });
    let registry = ToolRegistry::from_iter(remote.into_definitions().into_iter().chain([days]));
    let dispatcher = Dispatcher::builder(registry)
        .filter(ToolFilter::deny(["time__convert_time"]))
        .build();

    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new(
                "c1",
                "time__get_current_time",
                json!({"timezone": "Europe/Paris"}),
            ),
            ToolCall::new(
                "c2",
                "time__convert_time",
                json!({
                    "source_timezone": "Europe/Paris", "time": "12:00", "target_timezone": "Asia/Tokyo"
                }),
            ),
            ToolCall::new("c3", "days_between", json!({"from": 10, "to": 45})),
        ]),
        ProviderResponse::calls([ToolCall::new(
            "c4",
            "time__get_current_time",
            json!({"timezone": "Mars/Olympus_Mons"}),
        )]),
        ProviderResponse::text("It is midday in Paris; Tokyo I could not convert."),
    ]);
    let agent = Agent::new(dispatcher, provider);
    let mut session = agent.session("mcp-demo");
    let outcome = session
        .run("What time is it in Paris, and in Tokyo?", RunOptions::new())
        .await?;
    print_rows(session.transcript());
    println!("answer: {}", outcome.summary().text);
    client.close().await;
    Ok(ExitCode::SUCCESS)
}

fn print_rows(rows: &[Message]) {
    for row in rows {
        let Some(result) = row.as_tool_result() else {
            continue;
        };
        let trust = if result.is_untrusted() {
            "untrusted"
        } else {
            "host"
        };
        let shown = match &result.outcome {
            ToolOutcome::Value(value) => {
                let text: String = result
                    .content()
                    .iter()
                    .filter_map(|block| block.as_text())
                    .collect();
                if text.is_empty() {
                    format!("= {value}")
                } else {
                    format!(
                        "= {}",
                        text.split_whitespace().collect::<Vec<_>>().join(" ")
                    )
                }
            }
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => {
                format!("! {} ({})", error.code, error.message)
            }
        };
        println!(
            "  {} {:<22} [{trust}] {shown}",
            result.tool_call_id, result.name
        );
    }
}
