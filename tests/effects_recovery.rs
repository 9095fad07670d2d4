//! Effects and ledgers when things go wrong: a claim released and taken again while its first
//! call still runs, ledger rows that cannot be decoded, replays of failed calls.

mod common;

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use prism::call::ErrorCode;
use prism::dispatch::{Clock, ManualClock, RecordStatus, RunLedger, ToolCallRecord};
use prism::effects::{
    EffectKey, EffectPolicy, EffectRecovery, EffectState, EffectStore, InMemoryEffectStore,
    RecordedOutcome, RecoveryOutcome, Resolution,
};
use prism::storage::{JsonlLedger, LedgerReader, RecordQuery, SqliteEffectStore};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolRegistry, ToolResult};
use serde_json::json;
use tokio::sync::Notify;

const LEASE_MS: u64 = 1_000;

fn policy() -> EffectPolicy {
    EffectPolicy::new(Duration::from_millis(LEASE_MS))
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "prism-effects-review-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `pay`: run `n` (from 0) waits for `release[n]` and answers `"run n"`.
fn slow_pay(
    entered: Arc<Notify>,
    release: Arc<[Notify; 2]>,
    runs: Arc<AtomicUsize>,
) -> ToolDefinition {
    ToolDefinition::builder("pay")
        .effect(policy())
        .run(move |_, _| {
            let (entered, release, runs) = (
                Arc::clone(&entered),
                Arc::clone(&release),
                Arc::clone(&runs),
            );
            async move {
                let n = runs.fetch_add(1, Ordering::SeqCst);
                entered.notify_one();
                release[n].notified().await;
                Ok(json!(format!("run {n}")))
            }
        })
}

/// The scenario the recovery API exists for: a call's owner outlives its lease, the host finds
/// the claim unknown and releases it, and the same dispatcher claims the effect again for a
/// retry. The first call's late outcome must not land on the new
/// claim: while the retry runs, others must read it in flight, and the retry's outcome is the
/// one kept.
async fn late_outcome_after_release_and_reclaim<S>(store: S)
where
    S: EffectStore + EffectRecovery + Clone,
{
    let entered = Arc::new(Notify::new());
    let release = Arc::new([Notify::new(), Notify::new()]);
    let runs = Arc::new(AtomicUsize::new(0));
    let clock = ManualClock::new(10_000);
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([slow_pay(
        Arc::clone(&entered),
        Arc::clone(&release),
        Arc::clone(&runs),
    )]))
    .effects(store.clone())
    .clock(clock.clone())
    .build();
    let spawn = |id: &'static str| {
        let dispatcher = dispatcher.clone();
        tokio::spawn(async move { run(&dispatcher, ToolCall::new(id, "pay", json!({}))).await })
    };

    // The first call claims and runs, slowly.
    let first = spawn("c1");
    entered.notified().await;

    // Its lease runs out; the host reads the claim unknown and releases it.
    clock.advance(LEASE_MS);
    let unknown = store.unknown_effects(clock.now_millis(), 10).await.unwrap();
    assert_eq!(unknown.len(), 1);
    assert_eq!(
        store
            .resolve_unknown(&unknown[0], Resolution::Release)
            .await
            .unwrap(),
        RecoveryOutcome::Applied
    );

    // A retry through the same dispatcher takes a new claim and runs.
    let second = spawn("c2");
    entered.notified().await;

    // The first call finally ends and records its (late) outcome.
    release[0].notify_one();
    let first: ToolResult = first.await.unwrap();
    assert_eq!(first.as_value(), Some(&json!("run 0")));

    // The retry is still running: its claim must still be open ...
    let key = EffectKey::new("pay", &policy(), &json!({}));
    let state = store.state(&key).await.unwrap();
    let third = run(&dispatcher, ToolCall::new("c3", "pay", json!({}))).await;
    release[1].notify_one();
    let second: ToolResult = second.await.unwrap();
    assert_eq!(second.as_value(), Some(&json!("run 1")));
    let kept = store.state(&key).await.unwrap();

    assert!(
        matches!(state, Some(EffectState::Claimed { .. })),
        "while the retry runs, its claim was closed by the released call's late outcome: {state:?}"
    );
    // ... so a third caller is told it is in flight, not handed the released call's outcome.
    assert_eq!(
        third.error_info().map(|error| error.code.clone()),
        Some(ErrorCode::EffectInFlight),
        "third caller got {third:?}"
    );
    // And the outcome kept is the retry's, the one whose claim it is.
    assert_eq!(
        kept,
        Some(EffectState::Recorded(RecordedOutcome::Value(json!(
            "run 1"
        ))))
    );
}

#[tokio::test]
async fn in_memory_a_released_calls_late_outcome_does_not_close_the_same_dispatchers_new_claim() {
    late_outcome_after_release_and_reclaim(InMemoryEffectStore::new()).await;
}

#[tokio::test]
async fn sqlite_a_released_calls_late_outcome_does_not_close_the_same_dispatchers_new_claim() {
    let dir = scratch("late-outcome");
    let store = SqliteEffectStore::open(dir.join("effects.sqlite3")).unwrap();
    late_outcome_after_release_and_reclaim(store).await;
}

fn row(id: &str, status: RecordStatus) -> ToolCallRecord {
    let mut row = ToolCallRecord::new(id.into(), "echo".into(), status);
    row.run_id = Some("run-1".into());
    row
}

/// A stored row that cannot be decoded (edited by hand, a torn write), one that is not UTF-8
/// included, is left out and hides no other row.
#[tokio::test]
async fn jsonl_a_line_that_is_not_utf8_is_left_out_and_hides_no_other_row() {
    let dir = scratch("jsonl-utf8");
    let path = dir.join("calls.jsonl");
    {
        let ledger = JsonlLedger::open(&path).unwrap();
        ledger.append(&row("c1", RecordStatus::Started));
        ledger.append(&row("c1", RecordStatus::Finished));
        ledger.flush().unwrap();
    }
    // A hand edit (or a torn multi-byte character) leaves one line that is not UTF-8.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"runId\":\"run-1\",\"toolCallId\":\"c\xff\"}\n")
        .unwrap();
    let ledger = JsonlLedger::open(&path).unwrap();
    ledger.append(&row("c2", RecordStatus::Started));
    ledger.append(&row("c2", RecordStatus::Finished));
    ledger.flush().unwrap();

    let rows = ledger.read(&RecordQuery::run("run-1")).await;
    let ids: Vec<String> = rows
        .expect("one undecodable line must not make the whole ledger unreadable")
        .iter()
        .map(|row| row.tool_call_id.as_str().to_owned())
        .collect();
    assert_eq!(ids, ["c1", "c1", "c2", "c2"]);
}

/// A batch whose write fails part way (here at the file size limit) leaves no half line the
/// next batch's first row would be glued to. The write limit is the process's, so the body runs
/// in a child process started with `ulimit -f` (and `SIGXFSZ` ignored, so the failing write
/// returns an error instead of killing the process).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn jsonl_a_write_cut_short_leaves_no_half_row_before_the_next_batch() {
    const CHILD: &str = "PRISM_JSONL_SIZE_LIMIT_CHILD";
    let name = "jsonl_a_write_cut_short_leaves_no_half_row_before_the_next_batch";
    let Some(dir) = std::env::var_os(CHILD) else {
        let dir = scratch("jsonl-torn");
        let output = std::process::Command::new("sh")
            .arg("-c")
            // 64 blocks: 32 KiB in `sh`'s 512-byte blocks, 64 KiB in 1 KiB ones.
            .arg("ulimit -f 64 && trap '' XFSZ && exec \"$0\" \"$@\"")
            .arg(std::env::current_exe().unwrap())
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, &dir)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "the child failed: {:?}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        // The child's test ran (a filter matching nothing would also succeed).
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("1 passed"),
            "{}",
            String::from_utf8_lossy(&output.stdout)
        );
        return;
    };
    let path = std::path::Path::new(&dir).join("calls.jsonl");
    let ledger = JsonlLedger::open(&path).unwrap();
    ledger.append(&row("c1", RecordStatus::Started));
    ledger.flush().unwrap();
    // Far over the limit: the write stops at it, part way through the row.
    let mut large = row("c2", RecordStatus::Started);
    large.arguments = Some(json!({"text": "x".repeat(256 * 1024)}));
    ledger.append(&large);
    let failed = ledger
        .flush()
        .expect_err("the write crosses the file size limit");
    assert!(failed.0.contains("1 rows were not stored"), "{}", failed.0);
    ledger.append(&row("c3", RecordStatus::Started));
    ledger.append(&row("c3", RecordStatus::Finished));
    ledger.flush().unwrap();

    let ids: Vec<String> = ledger
        .read(&RecordQuery::run("run-1"))
        .await
        .unwrap()
        .iter()
        .map(|row| row.tool_call_id.as_str().to_owned())
        .collect();
    assert_eq!(ids, ["c1", "c3", "c3"]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3, "no half row is left in the file");
}

/// A replay reports what the first call reported, untrusted mark included, also for the
/// dispatcher's own `output_too_large` error about an untrusted tool's output.
#[tokio::test]
async fn a_replayed_output_too_large_error_keeps_its_untrusted_mark() {
    use prism::dispatch::Limits;
    let tool = ToolDefinition::builder("pay")
        .effect(policy())
        .untrusted_output(true)
        .run_sync(|_, _| Ok(json!("x".repeat(100))));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .effects(InMemoryEffectStore::new())
        .limits(Limits {
            max_output_bytes: 10,
            ..Limits::default()
        })
        .build();
    let first = run(&dispatcher, ToolCall::new("c1", "pay", json!({}))).await;
    let replay = run(&dispatcher, ToolCall::new("c2", "pay", json!({}))).await;
    assert_eq!(error_of(&first).code, ErrorCode::OutputTooLarge);
    assert_eq!(error_of(&replay).code, ErrorCode::OutputTooLarge);
    assert_eq!(
        replay.is_untrusted(),
        first.is_untrusted(),
        "first: {first:?}\nreplay: {replay:?}"
    );
}
