//! Finding and starting the third-party MCP servers the client tests talk to, installed by
//! `.ci/mcp_peers.sh`: `mcp-server-time` and `mcp-server-git` from PyPI in a virtual environment,
//! and `@modelcontextprotocol/server-everything` from npm under Node 22. A test whose server is
//! not installed prints `SKIPPED: <why>` and passes, unless `PRISM_REQUIRE_PEERS=1`, when it
//! fails instead.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use prism::call::ContentBlock;
use prism::mcp::{McpClient, RemoteServer};
use prism::{ToolDefinition, ToolRegistry};

/// Where `.ci/mcp_peers.sh` caches the peers, unless its variables say otherwise.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/nonexistent"));
    base.join("prism-ci")
}

pub fn peer_path(variable: &str, default: PathBuf) -> Option<PathBuf> {
    present(
        std::env::var_os(variable).map_or(default, PathBuf::from),
        variable,
    )
}

/// `path` if it exists; else a loud skip (a failure under `PRISM_REQUIRE_PEERS=1`) that names
/// the variable that points at it.
fn present(path: PathBuf, variable: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{} not found (run `eval \"$(bash .ci/mcp_peers.sh)\"`, or set {variable})",
        path.display()
    );
    if std::env::var("PRISM_REQUIRE_PEERS").as_deref() == Ok("1") {
        panic!("PRISM_REQUIRE_PEERS=1 and {why}");
    }
    println!("SKIPPED: {why}");
    None
}

pub fn python() -> Option<PathBuf> {
    let venv = peer_path("PRISM_MCP_VENV", cache_dir().join("mcp-servers-venv"))?;
    present(venv.join("bin/python"), "PRISM_MCP_VENV")
}

/// `node` (22) and server-everything's entry point.
pub fn everything_paths() -> Option<(PathBuf, PathBuf)> {
    let node = peer_path(
        "PRISM_NODE22",
        cache_dir().join("node22/node_modules/.bin/node"),
    )?;
    let package = peer_path(
        "PRISM_MCP_EVERYTHING",
        cache_dir().join(
            "mcp-server-everything-2026.8.31/node_modules/@modelcontextprotocol/server-everything",
        ),
    )?;
    Some((node, package.join("dist/index.js")))
}

pub fn everything() -> Option<RemoteServer> {
    let (node, entry) = everything_paths()?;
    Some(
        RemoteServer::command("everything", node)
            .arg(entry)
            .arg("stdio")
            .prefixed(true),
    )
}

pub fn time_server() -> Option<RemoteServer> {
    Some(
        RemoteServer::command("time", python()?)
            .args(["-m", "mcp_server_time", "--local-timezone", "UTC"])
            .prefixed(true),
    )
}

pub fn registry(definitions: Vec<ToolDefinition>) -> ToolRegistry {
    ToolRegistry::from_iter(definitions)
}

/// A registry of the server's tools, as the host takes them.
pub async fn remote_registry(client: &McpClient) -> ToolRegistry {
    registry(client.tools().await.unwrap().into_definitions())
}

pub async fn connect(server: RemoteServer) -> McpClient {
    McpClient::connect(server)
        .await
        .unwrap_or_else(|error| panic!("connect: {error}"))
}

pub fn text_of(blocks: &[ContentBlock]) -> String {
    blocks.iter().filter_map(ContentBlock::as_text).collect()
}

pub fn tempfile_dir() -> PathBuf {
    static NEXT: Mutex<u32> = Mutex::new(0);
    let mut next = NEXT.lock().unwrap();
    *next += 1;
    let dir = std::env::temp_dir().join(format!("prism-mcp-git-{}-{}", std::process::id(), *next));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// server-everything over streamable HTTP on a free local port; killed when dropped.
pub struct HttpEverything {
    pub child: tokio::process::Child,
    pub url: String,
}

impl HttpEverything {
    pub async fn start() -> Option<Self> {
        let (node, entry) = everything_paths()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = tokio::process::Command::new(node)
            .arg(entry)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // Wait for the listener: a bounded number of tries, not a measured time.
        for _ in 0..600 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Some(Self {
                    child,
                    url: format!("http://127.0.0.1:{port}/mcp"),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("server-everything did not listen on port {port}");
    }
}
