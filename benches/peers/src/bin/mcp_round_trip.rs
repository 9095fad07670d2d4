//! `tools/call` round trips through a real MCP transport: Prism's `McpServer` (the dispatcher
//! with the full guard chain of arm c) against rmcp's own `#[tool_router]` server with the same
//! `add` tool, both driven by rmcp's client, in one run.
//!
//! - stdio: the server is a child process (this binary, started with `--serve-stdio prism|rmcp`),
//!   as a desktop client runs one. Both read and write their pipes without blocking (Prism's
//!   `serve_stdio`, rmcp's `stdio_pipes()`); `RMCP_STDIO=blocking` serves rmcp's on `stdio()`.
//! - HTTP: both servers behind the same streamable HTTP edge (`prism::mcp::serve_http`: loopback,
//!   Host and Origin checks, bounded bodies; the rate limit set high enough never to refuse), so
//!   the handlers are what differs. `RMCP_HTTP=axum` serves rmcp's instead as rmcp's own tests
//!   serve it: its `StreamableHttpService` with the default configuration, in an axum router,
//!   so the comparison is of each whole server as its users run it.
//!
//! For each transport, 8 clients connect to each server (8 child processes over stdio, 8 sessions
//! of one server over HTTP). Then, `ROUNDS` times, each server in turn (the first alternates)
//! answers `CALLS` sequential round trips from one client and, for `SLICE_MS`, calls from all 8
//! clients at once. The servers take turns many times in short slices because the machine's
//! speed drifts over seconds (other tenants, frequency): whole runs one after the other differ
//! by more than the servers do, while slices a second apart see the same machine.
//!
//! Reported per transport and server: the median and 99th percentile of all sequential round
//! trips, calls per second over all slices, and every call the server answered (to divide its
//! CPU time by); then Prism's calls/s as a share of rmcp's, over the whole run and per round
//! (median and range).
//!
//! ```sh
//! cd benches/peers
//! cargo run --release --bin mcp_round_trip      # ROUNDS=20 CALLS=200 SLICE_MS=500 by default
//! TRANSPORT=stdio SERVER=prism cargo run --release --bin mcp_round_trip   # one server, to profile
//! CONTROL=1 cargo run --release --bin mcp_round_trip   # rmcp's server in both slots
//! CONTROL=1 RMCP_HTTP=axum TRANSPORT=http cargo run --release --bin mcp_round_trip   # the edges
//! CHAIN=bare cargo run --release --bin mcp_round_trip   # Prism's server without guards
//! TOOL=noop cargo run --release --bin mcp_round_trip    # a no-op tool instead of `add`
//! RMCP_HTTP=axum cargo run --release --bin mcp_round_trip   # rmcp's HTTP server on axum
//! ```
//!
//! Instructions per call of a server process alone: run each server twice under callgrind, with
//! one round of no slices and two call counts, and divide the difference of the busiest child's
//! totals by the difference of calls (the README of this directory shows the commands).

use std::num::NonZeroU32;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use prism::mcp::{HttpOptions, McpServer, RateLimitLayer, serve_http};
use prism_bench_peers::prism_arms::{bare_dispatcher, full_chain};
use prism_bench_peers::sink::CountingSink;
use prism_bench_peers::{AddArgs, add};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
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

    /// Does nothing and answers with empty text.
    #[tool(description = "Does nothing and answers with empty text.")]
    fn noop(&self) -> String {
        String::new()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Calculator {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Prism's server: the full chain of arm c behind an `McpServer`, or with `CHAIN=bare` the
/// dispatcher of arm b (no guards, no observers), to tell the chain's cost from the rest.
fn prism_server() -> McpServer {
    if std::env::var("CHAIN").as_deref() == Ok("bare") {
        return McpServer::new(bare_dispatcher());
    }
    McpServer::new(full_chain(&CountingSink::new()))
}

type Client = RunningService<RoleClient, ()>;

/// The call every client makes: `add({"a": 2, "b": 3})`, or with `TOOL=noop` the no-op tool,
/// which takes no arguments and answers with empty text.
static CALL: LazyLock<CallToolRequestParams> =
    LazyLock::new(|| match choice("TOOL", &["add", "noop"])[..] {
        ["noop"] => CallToolRequestParams::new("noop"),
        _ => CallToolRequestParams::new("add")
            .with_arguments(json!({"a": 2, "b": 3}).as_object().cloned().unwrap()),
    });

async fn call(client: &Client) {
    let result = client
        .call_tool(CALL.clone())
        .await
        .expect("the call succeeds");
    assert_eq!(result.is_error, Some(false), "{result:?}");
}

/// The times of `calls` sequential round trips.
async fn sequential(client: &Client, calls: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        call(client).await;
        times.push(started.elapsed());
    }
    times
}

/// The calls `clients` complete, each calling in a loop, until `slice` is over, and the time
/// that took (the last calls end after the slice).
async fn throughput(clients: &[Client], slice: Duration) -> (u64, Duration) {
    let started = Instant::now();
    let deadline = started + slice;
    let counts = join_all(clients.iter().map(|client| async move {
        let mut n = 0u64;
        while Instant::now() < deadline {
            call(client).await;
            n += 1;
        }
        n
    }))
    .await;
    (counts.iter().sum(), started.elapsed())
}

/// A client of a server child process; `STDIO_WRAPPER` (say, `valgrind --tool=callgrind`) is put
/// before the child's command line, to profile the server alone.
async fn stdio_client(server: &str) -> Client {
    let me = std::env::current_exe().expect("this binary's path");
    let wrapper = std::env::var("STDIO_WRAPPER").unwrap_or_default();
    let mut words = wrapper.split_whitespace();
    let mut command = match words.next() {
        Some(program) => {
            let mut command = tokio::process::Command::new(program);
            command.args(words).arg(me);
            command
        }
        None => tokio::process::Command::new(me),
    };
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

/// rmcp's server over HTTP as rmcp's own tests serve it: its `StreamableHttpService` with the
/// default configuration (which checks `Host` itself), nested in an axum router. Returns the
/// endpoint's URL and the serving task, to abort at the end.
async fn rmcp_on_axum() -> (String, tokio::task::JoinHandle<()>) {
    let service: StreamableHttpService<Calculator, LocalSessionManager> =
        StreamableHttpService::new(
            || Ok(Calculator::new()),
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = format!("http://{}/mcp", listener.local_addr().expect("bound"));
    let serving = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (url, serving)
}

fn http_options() -> HttpOptions {
    let mut options = HttpOptions::bind(([127, 0, 0, 1], 0).into());
    let plenty = NonZeroU32::new(1_000_000).unwrap();
    options.rate_limit = Some(RateLimitLayer::per_second(plenty, plenty));
    options
}

/// Sequential calls each fleet's first client makes before the rounds start.
const WARM_UP_CALLS: usize = 200;

/// One server's figures on one transport, over all rounds.
#[derive(Default)]
struct Tally {
    times: Vec<Duration>,
    calls: u64,
    busy: Duration,
    /// Calls per second in each round's slice.
    rates: Vec<f64>,
}

impl Tally {
    fn row(&mut self, transport: &str, server: &str) {
        self.times.sort();
        let at = |share: f64| self.times[((self.times.len() - 1) as f64 * share) as usize];
        // Every `tools/call` the fleet answered, warm-up included: divide a server's CPU time
        // (summed over its child processes) by it for the CPU time of one call.
        let answered = (WARM_UP_CALLS + self.times.len()) as u64 + self.calls;
        println!(
            "| {transport} | {server} | {} | {} | {:.0} | {answered} |",
            micros(at(0.5)),
            micros(at(0.99)),
            self.per_second()
        );
    }

    fn per_second(&self) -> f64 {
        self.calls as f64 / self.busy.as_secs_f64()
    }
}

/// Prism's calls/s as a share of rmcp's: over the run, and the median and range per round.
fn compare(transport: &str, prism: &Tally, rmcp: &Tally) {
    let mut ratios: Vec<f64> = prism
        .rates
        .iter()
        .zip(&rmcp.rates)
        .map(|(p, r)| p / r)
        .collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "{transport}: Prism's calls/s are {:.2}x rmcp's (per round: median {:.2}x, {:.2}x to {:.2}x)",
        prism.per_second() / rmcp.per_second(),
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1],
    );
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The values of `options` that the variable `name` names (all of them when it is unset), so a
/// profile can run one transport or one server alone.
fn choice(name: &str, options: &[&'static str]) -> Vec<&'static str> {
    match std::env::var(name) {
        Ok(wanted) => {
            let chosen: Vec<_> = options.iter().copied().filter(|o| *o == wanted).collect();
            assert!(!chosen.is_empty(), "{name} is one of {options:?}");
            chosen
        }
        Err(_) => options.to_vec(),
    }
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
            // rmcp's non-blocking pipes by default, as Prism's `serve_stdio` uses them;
            // `RMCP_STDIO=blocking` serves on `stdio()`, as rmcp's examples do.
            Some("rmcp") => {
                let running = if std::env::var("RMCP_STDIO").as_deref() == Ok("blocking") {
                    Calculator::new().serve(rmcp::transport::stdio()).await
                } else {
                    Calculator::new()
                        .serve(rmcp::transport::stdio_pipes())
                        .await
                };
                let _ = running.expect("serves").waiting().await;
            }
            other => panic!("unknown server {other:?}"),
        }
        return;
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (rounds, calls, slice) = (
        env("ROUNDS", 20).max(1),
        env("CALLS", 200) as usize,
        Duration::from_millis(env("SLICE_MS", 500)),
    );
    let prism_http = prism_server()
        .serve_http(http_options())
        .await
        .expect("binds");
    let rmcp_http = serve_http(Calculator::new, http_options())
        .await
        .expect("binds");
    let (rmcp_url, axum_serving) = match std::env::var("RMCP_HTTP").as_deref() {
        Ok("axum") => {
            let (url, serving) = rmcp_on_axum().await;
            (url, Some(serving))
        }
        _ => (rmcp_http.url("/mcp"), None),
    };
    let transports = choice("TRANSPORT", &["stdio", "http"]);
    // An A/A run: rmcp's server answers in both slots, so the ratio shows the harness's own noise.
    let control = std::env::var_os("CONTROL").is_some();
    let servers = choice("SERVER", &["prism", "rmcp"]);
    println!("| transport | server | median | p99 | calls/s, 8 clients | calls answered |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    for transport in transports {
        let mut fleets = Vec::new();
        for &server in &servers {
            let served = if control { "rmcp" } else { server };
            let url = match (server, control) {
                ("prism", false) => prism_http.url("/mcp"),
                // rmcp's handler behind Prism's edge: with `RMCP_HTTP=axum`, the edges compared.
                ("prism", true) => rmcp_http.url("/mcp"),
                _ => rmcp_url.clone(),
            };
            let mut clients = Vec::new();
            for _ in 0..8 {
                clients.push(match transport {
                    "stdio" => stdio_client(served).await,
                    _ => http_client(&url).await,
                });
            }
            sequential(&clients[0], WARM_UP_CALLS).await;
            fleets.push((server, clients, Tally::default()));
        }
        for _ in 0..rounds {
            // Whoever went first last round goes last now.
            fleets.reverse();
            for (_, clients, tally) in &mut fleets {
                tally.times.extend(sequential(&clients[0], calls).await);
                let (calls, busy) = throughput(clients, slice).await;
                tally.calls += calls;
                tally.busy += busy;
                tally.rates.push(calls as f64 / busy.as_secs_f64());
            }
        }
        fleets.sort_by_key(|(server, ..)| *server);
        for (server, clients, tally) in &mut fleets {
            tally.row(transport, server);
            for client in clients.drain(..) {
                let _ = client.cancel().await;
            }
        }
        if let [(_, _, prism), (_, _, rmcp)] = &fleets[..] {
            compare(transport, prism, rmcp);
        }
    }
    prism_http.shutdown().await;
    rmcp_http.shutdown().await;
    if let Some(serving) = axum_serving {
        serving.abort();
    }
}
