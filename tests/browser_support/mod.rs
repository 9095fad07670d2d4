//! What the browser tests share: the Chromium they drive (found on this machine, or the tests
//! skip loudly), one runtime that owns it, and a dispatcher with a ledger over the four tools.

#![allow(dead_code)]

use std::future::Future;
use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use prism::dispatch::{InMemoryLedger, RecordStatus};
use prism::tools::browser::{
    Browser, BrowserLimits, BrowserTools, ChromiumLaunch, DEFAULT_CHROMIUM_FLAGS,
};
use prism::tools::web::UrlPolicy;
use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry, ToolResult};
use serde_json::Value;
use tokio::runtime::Runtime;
use tokio::sync::OnceCell;

/// The runtime every browser test runs on, so the browser it launched outlives each test.
static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
});

static BROWSER: OnceCell<Browser> = OnceCell::const_new();

/// Chromium's path: `PRISM_CHROMIUM`, else `/usr/bin/chromium`. `None` (with a SKIPPED line)
/// when neither exists, unless `PRISM_REQUIRE_BROWSER=1`, which makes it a failure.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PRISM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.exists() {
        return Some(path);
    }
    let why = format!("no Chromium at {} (set PRISM_CHROMIUM)", path.display());
    if std::env::var("PRISM_REQUIRE_BROWSER").as_deref() == Ok("1") {
        panic!("PRISM_REQUIRE_BROWSER=1 but {why}");
    }
    println!("SKIPPED: {why}");
    None
}

/// Chromium with the default flags and no sandbox (CI runs as root). The shared browser is a
/// static that is never dropped, so it is started under `setpriv --pdeathsig KILL` where that
/// exists: the kernel kills it when the test process ends.
pub fn launch(path: PathBuf) -> ChromiumLaunch {
    let setpriv = PathBuf::from("/usr/bin/setpriv");
    let launch = if setpriv.exists() {
        let mut flags = vec!["--pdeathsig".to_string(), "KILL".into(), "--".into()];
        flags.push(path.display().to_string());
        flags.extend(DEFAULT_CHROMIUM_FLAGS.iter().map(|flag| flag.to_string()));
        ChromiumLaunch::with_flags(setpriv, flags)
    } else {
        ChromiumLaunch::new(path)
    };
    // The shared browser's profile outlives the process (the static is never dropped): keep it
    // in the build's temporary directory rather than the system's.
    launch
        .no_sandbox()
        .startup_timeout(Duration::from_secs(120))
        .profile_in(env!("CARGO_TARGET_TMPDIR"))
}

/// Runs `test` on the shared runtime, or skips it when there is no Chromium.
pub fn with_browser<F, Fut>(test: F)
where
    F: FnOnce(Browser) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(path) = chromium() else { return };
    RUNTIME.block_on(async move {
        let browser = BROWSER
            .get_or_init(|| async {
                // Launched from a worker thread, which lives as long as the runtime: the
                // parent-death signal follows the thread that started the process.
                let launching = RUNTIME.spawn(async move { Browser::launch(&launch(path)).await });
                launching.await.unwrap().expect("Chromium starts")
            })
            .await
            .clone();
        test(browser).await;
    });
}

/// Limits for a busy machine: generous waits, small outputs.
pub fn test_limits() -> BrowserLimits {
    BrowserLimits {
        navigation_timeout: Duration::from_secs(90),
        action_timeout: Duration::from_secs(60),
        settle_window: Duration::from_secs(2),
        ..BrowserLimits::default()
    }
}

/// The four tools behind a dispatcher that writes every call to a ledger.
pub struct Harness {
    pub tools: BrowserTools,
    pub dispatcher: Dispatcher,
    pub ledger: InMemoryLedger,
    calls: std::sync::atomic::AtomicUsize,
}

impl Harness {
    pub fn new(browser: Browser, policy: UrlPolicy, limits: BrowserLimits) -> Self {
        let tools = BrowserTools::new(browser, policy, limits);
        let ledger = InMemoryLedger::new();
        let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(tools.definitions()))
            .ledger(ledger.clone())
            .build();
        Harness {
            tools,
            dispatcher,
            ledger,
            calls: Default::default(),
        }
    }

    /// Dispatches `name(arguments)` for `run`.
    pub async fn call(&self, run: &str, name: &str, arguments: Value) -> ToolResult {
        let number = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ctx = ToolExecutionContext::new()
            .with_session_id("session")
            .with_run_id(run);
        let call = ToolCall::new(format!("{run}-{number}"), name, arguments);
        self.dispatcher
            .dispatch(call, &ctx)
            .await
            .expect("no guardrail in these tests")
    }

    /// The value of a call that must succeed.
    pub async fn ok(&self, run: &str, name: &str, arguments: Value) -> Value {
        let result = self.call(run, name, arguments).await;
        match result.as_value() {
            Some(value) => value.clone(),
            None => panic!("{name} failed: {result:?}"),
        }
    }

    /// The error code and message of a call that must fail.
    pub async fn err(&self, run: &str, name: &str, arguments: Value) -> (String, String) {
        let result = self.call(run, name, arguments).await;
        match result.error_info() {
            Some(error) => (error.code.as_str().to_string(), error.message.clone()),
            None => panic!("{name} succeeded: {result:?}"),
        }
    }

    /// The statuses of the ledger rows of every call so far, in order.
    pub fn statuses(&self) -> Vec<RecordStatus> {
        self.ledger.records().iter().map(|row| row.status).collect()
    }
}

/// The ref of the first snapshot line that contains `needle`.
pub fn ref_of(snapshot: &Value, needle: &str) -> String {
    let text = snapshot["snapshot"].as_str().expect("snapshot text");
    let line = text
        .lines()
        .find(|line| line.contains(needle) && line.contains("[ref="))
        .unwrap_or_else(|| panic!("no line with {needle} and a ref in:\n{text}"));
    let start = line.find("[ref=").unwrap() + 5;
    let end = start + line[start..].find(']').unwrap();
    line[start..end].to_string()
}
