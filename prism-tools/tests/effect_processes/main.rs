//! At most once across real OS processes, against SQLite and PostgreSQL.
//!
//! - race: 8 processes claim the same 200 effects at once; each effect runs exactly once and
//!   ends recorded, and every process gets the same recorded answer for it.
//! - crash: a process claims an effect, starts it, and is killed with SIGKILL; the claim reads in
//!   flight until its lease ends, then unknown; the tool never runs again; the host resolves it.
//!
//! The test binary is its own child: when `PRISM_TEST_CHILD_ROLE` is set, `main` plays that role
//! instead of running the tests.

mod children;
#[path = "../support/mod.rs"]
mod support;

use children::{child, transfer_call};

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};
use prism_tools::effects::{EffectRecovery, RecoveryOutcome};
use prism_tools::{
    Dispatcher, EffectKey, EffectPolicy, EffectState, EffectStore, ErrorCode, ManualClock,
    RecordedOutcome, Resolution, SqliteEffectStore, SqliteOptions, ToolDefinition,
    ToolExecutionContext, ToolRegistry,
};
use serde_json::{Value, json};

const ROLE_VAR: &str = "PRISM_TEST_CHILD_ROLE";
const STORE_VAR: &str = "PRISM_TEST_STORE";
const LOG_VAR: &str = "PRISM_TEST_EFFECT_LOG";
const WORKER_VAR: &str = "PRISM_TEST_WORKER";
const WORKERS: usize = 8;
const KEYS: u64 = 200;

fn main() -> ExitCode {
    if let Ok(role) = std::env::var(ROLE_VAR) {
        return match child(&role) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("child {role} failed: {error:?}");
                ExitCode::FAILURE
            }
        };
    }
    let mut trials = vec![
        Trial::test("race::sqlite", || race(Backend::Sqlite)),
        Trial::test("crash::sqlite", || crash(Backend::Sqlite)),
    ];
    if cfg!(feature = "postgres") {
        let server = support::postgres_url("effect_processes (race and crash on PostgreSQL)");
        for (name, test) in [
            ("race::postgres", race as fn(Backend) -> Result<(), Failed>),
            ("crash::postgres", crash),
        ] {
            trials.push(
                Trial::test(name, move || test(Backend::Postgres))
                    .with_ignored_flag(server.is_none()),
            );
        }
    }
    libtest_mimic::run(&Arguments::from_args(), trials).exit_code()
}

#[derive(Clone, Copy, Debug)]
enum Backend {
    Sqlite,
    Postgres,
}

/// One test's store, shared with its children through environment variables.
struct Setup {
    dir: tempfile::TempDir,
    /// `sqlite:<path>` or `postgres:<schema>` (the URL travels in `PRISM_POSTGRES_URL`).
    store: String,
    _schema: Option<Box<dyn std::any::Any>>,
}

impl Setup {
    fn new(backend: Backend, test: &str) -> Result<Self, Failed> {
        let dir = tempfile::tempdir()?;
        Ok(match backend {
            Backend::Sqlite => Self {
                store: format!("sqlite:{}", dir.path().join("effects.sqlite3").display()),
                dir,
                _schema: None,
            },
            Backend::Postgres => Self::postgres(dir, test)?,
        })
    }

    #[cfg(feature = "postgres")]
    fn postgres(dir: tempfile::TempDir, test: &str) -> Result<Self, Failed> {
        let url = support::postgres_url(test).ok_or("no PostgreSQL server")?;
        let schema = support::unique_schema(test);
        Ok(Self {
            dir,
            store: format!("postgres:{schema}"),
            _schema: Some(Box::new(support::SchemaGuard { url, schema })),
        })
    }

    #[cfg(not(feature = "postgres"))]
    fn postgres(_dir: tempfile::TempDir, _test: &str) -> Result<Self, Failed> {
        Err("built without the postgres feature".into())
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("effects.log")
    }

    fn spawn(&self, role: &str, worker: usize) -> Result<Child, Failed> {
        Ok(Command::new(std::env::current_exe()?)
            .env(ROLE_VAR, role)
            .env(STORE_VAR, &self.store)
            .env(LOG_VAR, self.log())
            .env(WORKER_VAR, worker.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?)
    }
}

/// Opens the store a `STORE_VAR` value names.
async fn open_store(store: &str) -> Result<Arc<dyn EffectRecovery>, Failed> {
    if let Some(path) = store.strip_prefix("sqlite:") {
        // Eight processes share one write lock: give each plenty of time to get it.
        let options = SqliteOptions::new(path).busy_timeout(Duration::from_secs(120));
        return Ok(Arc::new(SqliteEffectStore::open_with(options)?));
    }
    open_postgres(store).await
}

#[cfg(feature = "postgres")]
async fn open_postgres(store: &str) -> Result<Arc<dyn EffectRecovery>, Failed> {
    let schema = store.strip_prefix("postgres:").ok_or("unknown store")?;
    let url = std::env::var(support::POSTGRES_URL_VAR)?;
    let options = prism_tools::PostgresOptions::new(&url)?
        .schema(schema)?
        .pool_size(2);
    Ok(Arc::new(
        prism_tools::PostgresEffectStore::connect(options).await?,
    ))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_store: &str) -> Result<Arc<dyn EffectRecovery>, Failed> {
    Err("built without the postgres feature".into())
}

fn runtime() -> Result<tokio::runtime::Runtime, Failed> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

fn race(backend: Backend) -> Result<(), Failed> {
    let setup = Setup::new(backend, "race")?;
    let runtime = runtime()?;
    // The parent creates the schema, so the children race on claims, not on migrations.
    let store = runtime.block_on(open_store(&setup.store))?;
    let mut children = (0..WORKERS)
        .map(|worker| setup.spawn("race", worker))
        .collect::<Result<Vec<_>, _>>()?;
    // Every child waits on its stdin after opening the store: release them all at once.
    for child in &mut children {
        child.stdin.take().ok_or("no stdin")?.write_all(b"go\n")?;
    }
    let mut answers: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for child in children {
        let output = child.wait_with_output()?;
        if !output.status.success() {
            return Err(format!("a race child failed: {}", output.status).into());
        }
        for line in String::from_utf8(output.stdout)?.lines() {
            let (item, executor) = line.split_once(' ').ok_or("bad child output")?;
            answers
                .entry(item.parse()?)
                .or_default()
                .push(executor.parse()?);
        }
    }

    let mut executions: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for line in std::fs::read_to_string(setup.log())?.lines() {
        let (item, worker) = line.split_once(' ').ok_or("bad log line")?;
        executions
            .entry(item.parse()?)
            .or_default()
            .push(worker.parse()?);
    }
    for item in 0..KEYS {
        let ran = executions.get(&item).map_or(&[][..], Vec::as_slice);
        if ran.len() != 1 {
            return Err(format!("effect {item} ran {} times: {ran:?}", ran.len()).into());
        }
        let told = answers.get(&item).map_or(&[][..], Vec::as_slice);
        if told.len() != WORKERS || told.iter().any(|worker| *worker != ran[0]) {
            return Err(format!(
                "effect {item} ran on {} but workers were told {told:?}",
                ran[0]
            )
            .into());
        }
        let key = EffectKey::new("charge", &EffectPolicy::default(), &json!({"item": item}));
        let expected = RecordedOutcome::Value(json!({"item": item, "worker": ran[0]}));
        if runtime.block_on(store.state(&key))? != Some(EffectState::Recorded(expected)) {
            return Err(format!("effect {item} is not recorded").into());
        }
    }
    if executions.len() as u64 != KEYS {
        return Err(format!("{} effects ran, expected {KEYS}", executions.len()).into());
    }
    Ok(())
}

fn transfer_tool(
    body: impl Fn() -> Result<Value, String> + Send + Sync + 'static,
) -> ToolDefinition {
    ToolDefinition::builder("transfer")
        .effect(EffectPolicy::new(Duration::from_secs(3600)))
        .run_sync(move |_, _| Ok(body()?))
}

fn crash(backend: Backend) -> Result<(), Failed> {
    let setup = Setup::new(backend, "crash")?;
    let runtime = runtime()?;
    let store = runtime.block_on(open_store(&setup.store))?;

    let mut child = setup.spawn("crash", 0)?;
    let pid = child.id();
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let started = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line == "STARTED");
    if !started {
        let _ = child.kill();
        return Err("the crash child never started its effect".into());
    }
    child.kill()?; // SIGKILL: no destructor, no outcome recorded.
    let status = child.wait()?;
    if status.signal() != Some(9) {
        return Err(format!("the child was not killed by SIGKILL: {status}").into());
    }

    let key = EffectKey::new(
        "transfer",
        &EffectPolicy::default(),
        &json!({"amount": 5, "to": "acct-9"}),
    );
    let Some(EffectState::Claimed {
        owner,
        lease_expires_at,
        ..
    }) = runtime.block_on(store.state(&key))?
    else {
        return Err("the killed child's claim is not in the store".into());
    };
    if !owner.starts_with(&format!("{pid}-")) {
        return Err(format!("the claim belongs to {owner}, not to process {pid}").into());
    }

    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let tool = transfer_tool(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(json!("transferred again"))
    });
    let clock = ManualClock::new(lease_expires_at - 1);
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .effects(store.clone() as Arc<dyn EffectStore>)
        .clock(clock.clone())
        .build();
    let ctx = ToolExecutionContext::new();
    let code = |id: &str| -> Result<Option<ErrorCode>, Failed> {
        let result = runtime
            .block_on(dispatcher.dispatch(transfer_call(id), &ctx))
            .map_err(|tripwire| tripwire.to_string())?;
        Ok(result.error_info().map(|error| error.code.clone()))
    };
    if code("before-lease-end")? != Some(ErrorCode::EffectInFlight) {
        return Err("before its lease ends the claim must read in flight".into());
    }
    clock.set(lease_expires_at);
    if code("at-lease-end")? != Some(ErrorCode::EffectOutcomeUnknown) {
        return Err("once its lease ends the claim must read unknown".into());
    }
    clock.advance(86_400_000);
    if code("a-day-later")? != Some(ErrorCode::EffectOutcomeUnknown) {
        return Err("an unknown effect must stay unknown".into());
    }
    let started_lines = std::fs::read_to_string(setup.log())?.lines().count();
    if runs.load(Ordering::SeqCst) != 0 || started_lines != 1 {
        return Err(format!("the effect ran again ({started_lines} starts)").into());
    }

    // The host checks with the bank and records what happened.
    let unknown = runtime.block_on(store.unknown_effects(clock_now(&clock), 10))?;
    let effect = unknown
        .iter()
        .find(|effect| effect.key == key)
        .ok_or("not listed as unknown")?;
    let settled = json!({"transferred": 5, "reconciled": true});
    let resolution = Resolution::Record(RecordedOutcome::Value(settled.clone()));
    if runtime.block_on(store.resolve_unknown(effect, resolution))? != RecoveryOutcome::Applied {
        return Err("resolving the unknown effect was not applied".into());
    }
    let result = runtime
        .block_on(dispatcher.dispatch(transfer_call("after-resolve"), &ctx))
        .map_err(|tripwire| tripwire.to_string())?;
    if result.as_value() != Some(&settled) || runs.load(Ordering::SeqCst) != 0 {
        return Err(format!(
            "after resolving, the call must replay the host's outcome: {result:?}"
        )
        .into());
    }
    Ok(())
}

fn clock_now(clock: &ManualClock) -> u64 {
    prism_tools::Clock::now_millis(clock)
}
