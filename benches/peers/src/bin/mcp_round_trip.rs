//! `tools/call` round trips through a real MCP transport: Prism's `McpServer` (the dispatcher
//! with the full guard chain of arm c) against rmcp's own `#[tool_router]` server with the same
//! `add` tool, both driven by rmcp's client, in one run.
//!
//! - stdio: the server is a child process (this binary, started with `--serve-stdio prism|rmcp`),
//!   as a desktop client runs one.
//! - HTTP: both servers behind the same streamable HTTP edge (`prism::mcp::serve_http`: loopback,
//!   Host and Origin checks, bounded bodies; the rate limit set high enough never to refuse), so
//!   the handlers are what differs.
//!
//! For each transport and server: the median and 99th percentile of sequential round trips, then
//! the calls per second 8 concurrent clients complete (8 child processes over stdio, 8 sessions
//! of one server over HTTP). The servers alternate, and the whole sequence runs `ROUNDS` times, so
//! load from other work falls on both.
//!
//! ```sh
//! cd benches/peers
//! cargo run --release --bin mcp_round_trip            # ROUNDS=2 CALLS=2000 SECONDS=3 by default
//! ```

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use prism::mcp::{HttpOptions, McpServer, RateLimitLayer, serve_http};
use prism_bench_peers::prism_arms::full_chain;
use prism_bench_peers::sink::CountingSink;
use prism_bench_peers::{AddArgs, add};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::json;

/// rmcp's server: the same `add`, as rmcp's calculator example writes a server.
#[derive(Clone)]
struct Calculator {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Calculator {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// Adds two integers.
    #[tool(description = "Adds two integers.")]
    fn add(&self, Parameters(args): Parameters<AddArgs>) -> String {
        add(args).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Calculator {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Prism's server: the full chain of arm c behind an `McpServer`.
fn prism_server() -> McpServer {
    McpServer::new(full_chain(&CountingSink::new()))
}

type Client = RunningService<RoleClient, ()>;

fn add_call() -> CallToolRequestParams {
    CallToolRequestParams::new("add")
        .with_arguments(json!({"a": 2, "b": 3}).as_object().cloned().unwrap())
}

async fn call(client: &Client) {
    let result = client
        .call_tool(add_call())
        .await
        .expect("the call succeeds");
    assert_eq!(result.is_error, Some(false), "{result:?}");
}

/// Median and 99th percentile of `calls` sequential round trips, after a warm-up.
async fn latency(client: &Client, calls: usize) -> (Duration, Duration) {
    for _ in 0..calls / 10 {
        call(client).await;
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        call(client).await;
        times.push(started.elapsed());
    }
    times.sort();
    (times[calls / 2], times[calls * 99 / 100])
}

/// Calls per second completed by `clients`, each calling in a loop for `seconds`.
async fn throughput(clients: &[Client], seconds: u64) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let counts = futures_join(clients.iter().map(|client| async move {
        let mut n = 0u64;
        while Instant::now() < deadline {
            call(client).await;
            n += 1;
        }
        n
    }))
    .await;
    counts.iter().sum::<u64>() as f64 / started.elapsed().as_secs_f64()
}

/// Awaits every future, polled together on this task (each borrows its client).
async fn futures_join<F: Future<Output = u64>>(futures: impl Iterator<Item = F>) -> Vec<u64> {
    let mut pinned: Vec<_> = futures.map(Box::pin).collect();
    let mut done = vec![None; pinned.len()];
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, future) in done.iter_mut().zip(pinned.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(n) => *slot = Some(n),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    done.into_iter().map(Option::unwrap_or_default).collect()
}

async fn stdio_client(server: &str) -> Client {
    let me = std::env::current_exe().expect("this binary's path");
    let mut command = tokio::process::Command::new(me);
    command.arg("--serve-stdio").arg(server);
    ().serve(TokioChildProcess::new(command).expect("starts the server"))
        .await
        .expect("handshake")
}

async fn http_client(url: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .expect("handshake")
}

fn http_options() -> HttpOptions {
    let mut options = HttpOptions::bind(([127, 0, 0, 1], 0).into());
    let plenty = NonZeroU32::new(1_000_000).unwrap();
    options.rate_limit = Some(RateLimitLayer::per_second(plenty, plenty));
    options
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn micros(duration: Duration) -> String {
    format!("{:.1} µs", duration.as_secs_f64() * 1e6)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("--serve-stdio") {
        match args.next().as_deref() {
            Some("prism") => prism_server().serve_stdio().await.expect("serves"),
            Some("rmcp") => {
                let running = Calculator::new()
                    .serve(rmcp::transport::stdio())
                    .await
                    .expect("serves");
                let _ = running.waiting().await;
            }
            other => panic!("unknown server {other:?}"),
        }
        return;
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (rounds, calls, seconds) = (
        env("ROUNDS", 2),
        env("CALLS", 2000) as usize,
        env("SECONDS", 3),
    );
    let prism_http = prism_server()
        .serve_http(http_options())
        .await
        .expect("binds");
    let rmcp_http = serve_http(Calculator::new, http_options())
        .await
        .expect("binds");
    println!("| round | transport | server | median | p99 | calls/s, 8 clients |");
    println!("| ---: | --- | --- | ---: | ---: | ---: |");
    for round in 1..=rounds {
        for transport in ["stdio", "http"] {
            for server in ["prism", "rmcp"] {
                let url = match server {
                    "prism" => prism_http.url("/mcp"),
                    _ => rmcp_http.url("/mcp"),
                };
                let mut clients = Vec::new();
                for _ in 0..8 {
                    clients.push(match transport {
                        "stdio" => stdio_client(server).await,
                        _ => http_client(&url).await,
                    });
                }
                let (median, p99) = latency(&clients[0], calls).await;
                let per_second = throughput(&clients, seconds).await;
                println!(
                    "| {round} | {transport} | {server} | {} | {} | {per_second:.0} |",
                    micros(median),
                    micros(p99)
                );
                for client in clients {
                    let _ = client.cancel().await;
                }
            }
        }
    }
    prism_http.shutdown().await;
    rmcp_http.shutdown().await;
}
