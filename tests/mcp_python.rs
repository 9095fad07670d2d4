//! The official Python MCP SDK against our server: `mcp==2.3.0` (2026-07-28) and the latest 1.x
//! (handshake era), each over stdio (this test binary, started again as the server) and over
//! streamable HTTP. `tests/mcp_python/check_server.py` makes the calls: a listing, a good call,
//! a denied call, bad arguments, a call needing approval and a cancelled call.
//!
//! The virtual environments come from `.ci/mcp_python.sh` (`PRISM_MCP_PYTHON_VENVS`, or its cache
//! directory). Without them the test prints `SKIPPED` and passes, unless `PRISM_REQUIRE_PEERS=1`.

mod mcp_server_support;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use prism::mcp::HttpOptions;

/// How long one Python run may take.
const RUN_LIMIT: Duration = Duration::from_secs(120);

fn main() -> ExitCode {
    if let Some(served) = mcp_server_support::serve_stdio_when_asked() {
        return served;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let venvs = venvs();
    if venvs.is_empty() {
        let why = "no Python MCP clients (run `eval \"$(bash .ci/mcp_python.sh)\"`)";
        if std::env::var("PRISM_REQUIRE_PEERS").as_deref() == Ok("1") {
            eprintln!("FAILED: {why}, and PRISM_REQUIRE_PEERS=1");
            return ExitCode::FAILURE;
        }
        println!("SKIPPED: {why}");
        return ExitCode::SUCCESS;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/check_server.py");
    let me = std::env::current_exe().expect("the test binary's path");
    let fixture = mcp_server_support::fixture();
    let http = runtime
        .block_on(
            fixture
                .server
                .clone()
                .serve_http(HttpOptions::bind(([127, 0, 0, 1], 0).into())),
        )
        .expect("binds a loopback port");
    let url = http.url("/mcp");
    let mut failed = 0;
    for venv in &venvs {
        let python = venv.join("bin/python");
        let mut stdio = Command::new(&python);
        stdio
            .arg(&script)
            .arg("stdio")
            .arg(&me)
            .arg(mcp_server_support::SERVE_STDIO);
        let mut over_http = Command::new(&python);
        over_http.arg(&script).arg("http").arg(&url);
        for (transport, command) in [("stdio", stdio), ("http", over_http)] {
            let what = format!("{} over {transport}", venv.display());
            if run(command, &what) {
                println!("passed: {what}");
            } else {
                println!("FAILED: {what}");
                failed += 1;
            }
        }
    }
    runtime.block_on(http.shutdown());
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The virtual environments to test: `PRISM_MCP_PYTHON_VENVS` (colon-separated), else those
/// `.ci/mcp_python.sh` made in the cache.
fn venvs() -> Vec<PathBuf> {
    let listed = std::env::var("PRISM_MCP_PYTHON_VENVS").ok().map(|venvs| {
        venvs
            .split(':')
            .filter(|venv| !venv.is_empty())
            .map(PathBuf::from)
            .collect::<Vec<_>>()
    });
    let cached = || {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
            .unwrap_or_default()
            .join("prism-ci");
        ["mcp-python-2.3.0", "mcp-python-1"]
            .iter()
            .map(|name| cache.join(name))
            .collect()
    };
    listed
        .unwrap_or_else(cached)
        .into_iter()
        .filter(|venv| venv.join("bin/python").exists())
        .collect()
}

/// Runs one Python check, echoing its output; false when it fails or outlives [`RUN_LIMIT`].
fn run(mut command: Command, what: &str) -> bool {
    println!("--- {what}");
    let mut child = match command
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            println!("could not start Python: {error}");
            return false;
        }
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if started.elapsed() > RUN_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                println!("gave up after {RUN_LIMIT:?}");
                return false;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(error) => {
                println!("could not wait for Python: {error}");
                return false;
            }
        }
    }
}
