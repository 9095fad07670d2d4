//! The writer thread every durable ledger runs: it drains queued rows and commits them in batches.
//!
//! `append` must never block the dispatch path, and the backends (a file, SQLite, a PostgreSQL
//! connection) all block. So each ledger owns one thread that owns its backend: rows, flushes and
//! reads reach it through one channel and are handled in the order they were sent. The thread
//! commits when the queue runs dry or the batch is full, whichever comes first: no timer, so an
//! idle ledger commits a row at once and a busy one shares each commit among many rows. Rows
//! the backend refuses for a reason that may pass wait, up to [`MAX_WAITING_ROWS`], and go first
//! at the next commit.

use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use crate::dispatch::{LedgerError, ToolCallRecord};
use crate::storage::{RecordQuery, StorageError};

/// What a backend does for the writer thread. Every method may block.
pub(crate) trait LedgerSink: Send + 'static {
    /// Stores `rows`, in order, as one unit: all or none, unless the failure says how many of
    /// the first rows are stored all the same. Rows a failure does not count as stored may be
    /// offered again, first and in order, so a write that failed must not leave any of them
    /// behind uncounted: that would store them twice. A store that cannot always tell (a
    /// network database whose answer was lost) recognises a row offered again by its
    /// [`QueuedRow::number`].
    fn write_batch(&mut self, rows: &[QueuedRow]) -> Result<(), WriteFailure>;

    /// Makes what was written durable, where that is a separate step (a file's fsync).
    fn sync(&mut self) -> Result<(), LedgerError> {
        Ok(())
    }

    /// Reads rows back in append order.
    fn read(&mut self, query: &RecordQuery) -> Result<Vec<ToolCallRecord>, LedgerError>;
}

/// A row waiting to be stored, with the number it was given when it entered the batch: the
/// same at every try of this row, and no other row of this writer's has it.
pub(crate) struct QueuedRow {
    // Only the PostgreSQL ledger's commit can be ambiguous; the other stores need no key.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) number: u64,
    pub(crate) record: ToolCallRecord,
}

/// Why [`LedgerSink::write_batch`] did not store its whole batch.
#[derive(Debug)]
pub(crate) struct WriteFailure {
    pub(crate) error: LedgerError,
    /// Whether the same rows may be stored if tried again (a busy database, a lost connection,
    /// a full disk) or never will be (a row the store cannot take).
    pub(crate) retry: bool,
    /// How many of the batch's first rows are stored all the same: a file write cut short that
    /// could not be cut back, or a write whose sync alone failed.
    pub(crate) stored: usize,
}

impl WriteFailure {
    /// Nothing was stored; trying again may work.
    pub(crate) fn transient(error: LedgerError) -> Self {
        Self {
            error,
            retry: true,
            stored: 0,
        }
    }

    /// Nothing was stored, and the same rows never will be.
    pub(crate) fn refused(error: LedgerError) -> Self {
        Self {
            error,
            retry: false,
            stored: 0,
        }
    }
}

// Rows are nearly every message; boxing them to shrink the rare variants would cost an
// allocation per row.
#[allow(clippy::large_enum_variant)]
enum Command {
    Append(ToolCallRecord),
    Flush(mpsc::SyncSender<Result<(), LedgerError>>),
    Read(
        RecordQuery,
        oneshot::Sender<Result<Vec<ToolCallRecord>, LedgerError>>,
    ),
}

/// The handle to a writer thread. Dropping it flushes the queue and joins the thread.
pub(crate) struct BatchWriter {
    /// `None` only while dropping.
    sender: Option<Sender<Command>>,
    thread: Option<JoinHandle<()>>,
    name: &'static str,
}

impl BatchWriter {
    /// Starts a thread that first runs `open` (so a backend bound to its thread, such as an async
    /// client, is created there), reports the result on the returned receiver, then serves rows.
    pub(crate) fn spawn<S: LedgerSink>(
        name: &'static str,
        max_batch: usize,
        open: impl FnOnce() -> Result<S, StorageError> + Send + 'static,
    ) -> Result<(Self, oneshot::Receiver<Result<(), StorageError>>), StorageError> {
        let (sender, receiver) = mpsc::channel();
        let (ready, opened) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(format!("prism-{name}"))
            .spawn(move || match open() {
                Ok(sink) => {
                    let _ = ready.send(Ok(()));
                    serve(sink, receiver, max_batch.max(1), name);
                }
                Err(error) => {
                    let _ = ready.send(Err(error));
                }
            })
            .map_err(|error| {
                StorageError::new(format!("could not start the {name} writer thread: {error}"))
            })?;
        let writer = Self {
            sender: Some(sender),
            thread: Some(thread),
            name,
        };
        Ok((writer, opened))
    }

    /// Queues a row; never blocks. A row sent after the thread stopped is lost, and the next
    /// flush says so.
    pub(crate) fn append(&self, record: &ToolCallRecord) {
        if let Some(sender) = self.sender() {
            // The writer thread outlives the dispatcher's borrow: it stores a copy.
            let _ = sender.send(Command::Append(record.clone()));
        }
    }

    /// Waits until the writer has tried to store every row queued before this call (and synced
    /// where the backend has such a step). Fails if rows still wait for a retry, rows were lost
    /// since the previous flush, or a sync failed; the error counts them and gives the first
    /// cause.
    pub(crate) fn flush(&self) -> Result<(), LedgerError> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.sender()
            .and_then(|sender| sender.send(Command::Flush(reply)).ok())
            .ok_or_else(|| self.stopped())?;
        answer.recv().map_err(|_| self.stopped())?
    }

    /// Reads rows after every row queued before this call is stored.
    pub(crate) async fn read(
        &self,
        query: RecordQuery,
    ) -> Result<Vec<ToolCallRecord>, LedgerError> {
        let (reply, answer) = oneshot::channel();
        self.sender()
            .and_then(|sender| sender.send(Command::Read(query, reply)).ok())
            .ok_or_else(|| self.stopped())?;
        answer.await.map_err(|_| self.stopped())?
    }

    fn sender(&self) -> Option<&Sender<Command>> {
        self.sender.as_ref()
    }

    fn stopped(&self) -> LedgerError {
        LedgerError(format!(
            "the {} writer thread has stopped; rows appended since may be lost",
            self.name
        ))
    }
}

impl Drop for BatchWriter {
    fn drop(&mut self) {
        // Closing the channel lets the thread drain, commit, sync and exit.
        drop(self.sender.take());
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!(target: "prism_tools", ledger = self.name, "the ledger writer thread panicked");
        }
    }
}

/// The thread's loop: handle commands in order, committing whenever the queue runs dry.
fn serve<S: LedgerSink>(
    mut sink: S,
    commands: Receiver<Command>,
    max_batch: usize,
    name: &'static str,
) {
    let mut batch = Batch::new(max_batch, name);
    while let Ok(first) = commands.recv() {
        let mut next = Some(first);
        while let Some(command) = next {
            match command {
                Command::Append(record) => batch.push(&mut sink, record),
                Command::Flush(reply) => {
                    batch.commit(&mut sink);
                    batch.sync(&mut sink);
                    let _ = reply.send(batch.take_failure());
                }
                Command::Read(query, reply) => {
                    batch.commit(&mut sink);
                    let _ = reply.send(sink.read(&query));
                }
            }
            next = commands.try_recv().ok();
        }
        batch.commit(&mut sink);
    }
    // Every handle is gone: this is the flush on shutdown, with one more try for the rows that
    // wait (a busy database may be free again, a lost connection opened again).
    batch.commit(&mut sink);
    batch.sync(&mut sink);
    if let Err(error) = batch.take_failure() {
        tracing::error!(target: "prism_tools", ledger = name, %error, "the ledger could not store every row before shutdown; rows still waiting are lost");
    }
}

/// The most rows kept for a retry after the store refused them. Rows beyond it (the newest)
/// are dropped and counted, so an unreachable store costs bounded memory.
pub(crate) const MAX_WAITING_ROWS: usize = 10_000;

/// The rows not yet stored: those the store refused (oldest first), then those queued since.
struct Batch {
    rows: Vec<QueuedRow>,
    /// The number the next pushed row gets.
    next_number: u64,
    /// Rows pushed since the last commit: a full batch of them commits, while rows that only
    /// wait for a retry do not (that would try the store again on every row).
    fresh: usize,
    max_batch: usize,
    name: &'static str,
    /// The first failure since the last flush that the flush reports whatever happens next: a
    /// sync, or rows lost.
    failure: Option<LedgerError>,
    /// The first failed write since the last flush; reported only if rows still wait.
    refused: Option<LedgerError>,
    /// Rows dropped since the last flush: refused for good, or beyond [`MAX_WAITING_ROWS`].
    lost: usize,
}

impl Batch {
    fn new(max_batch: usize, name: &'static str) -> Self {
        Self {
            // Grown as rows come: the bound may be far above what ever queues (or `usize::MAX`).
            rows: Vec::new(),
            next_number: 0,
            fresh: 0,
            max_batch,
            name,
            failure: None,
            refused: None,
            lost: 0,
        }
    }

    fn push(&mut self, sink: &mut impl LedgerSink, record: ToolCallRecord) {
        let number = self.next_number;
        // A u64 counted one row at a time does not wrap.
        self.next_number += 1;
        self.rows.push(QueuedRow { number, record });
        self.fresh += 1;
        if self.fresh >= self.max_batch {
            self.commit(sink);
        }
    }

    /// Stores the rows in order, at most `max_batch` per write, each write tried once: a store
    /// that refuses must not stall the thread. Rows a transient failure refused (a busy
    /// database, a lost connection, a full disk) stay, first in line, for the next commit;
    /// those beyond [`MAX_WAITING_ROWS`] and a batch refused for good (a row the store cannot
    /// take) are dropped and counted for the next flush.
    fn commit(&mut self, sink: &mut impl LedgerSink) {
        self.fresh = 0;
        let mut done = 0;
        while done < self.rows.len() {
            let end = self.rows.len().min(done.saturating_add(self.max_batch));
            let Err(failure) = sink.write_batch(&self.rows[done..end]) else {
                done = end;
                continue;
            };
            // A sink may have stored the first rows all the same; they are not written again.
            done += failure.stored.min(end - done);
            if done == end {
                // Stored but not synced: nothing to retry, but the flush says so.
                self.fail(failure.error);
                continue;
            }
            if failure.retry {
                tracing::warn!(target: "prism_tools", ledger = self.name, error = %failure.error, waiting = self.rows.len() - done, "ledger write failed; the rows wait for the next commit");
                self.refused.get_or_insert(failure.error);
                break;
            }
            self.lost += end - done;
            done = end;
            self.fail(failure.error);
        }
        self.rows.drain(..done);
        if self.rows.len() > MAX_WAITING_ROWS {
            let dropped = self.rows.len() - MAX_WAITING_ROWS;
            self.rows.truncate(MAX_WAITING_ROWS);
            self.lost += dropped;
            let cause = self
                .refused
                .clone()
                .unwrap_or_else(|| LedgerError("the store refused earlier rows".into()));
            self.fail(LedgerError(format!(
                "more than {MAX_WAITING_ROWS} rows waited for the store: {}",
                cause.0
            )));
        }
    }

    /// What the flush reports, after a commit: how many rows still wait and how many were lost
    /// since the last flush, with the first failure's cause. A write that failed and whose rows
    /// were stored since is no failure of the flush.
    fn take_failure(&mut self) -> Result<(), LedgerError> {
        let lost = std::mem::take(&mut self.lost);
        let waiting = self.rows.len();
        let refused = self.refused.take();
        let failure = self.failure.take();
        let cause = match (waiting, failure, refused) {
            (0, None, _) => return Ok(()),
            (0, Some(failure), _) => failure,
            (_, failure, refused) => refused
                .or(failure)
                .unwrap_or_else(|| LedgerError("the store refused them".into())),
        };
        const RETRY: &str = "tried again at the next commit";
        Err(match (waiting, lost) {
            (0, 0) => cause,
            (0, lost) => LedgerError(format!("{lost} rows were not stored: {}", cause.0)),
            (waiting, 0) => LedgerError(format!(
                "{waiting} rows are waiting to be stored ({RETRY}): {}",
                cause.0
            )),
            (waiting, lost) => LedgerError(format!(
                "{waiting} rows are waiting to be stored ({RETRY}) and {lost} rows were not \
                 stored: {}",
                cause.0
            )),
        })
    }

    fn sync(&mut self, sink: &mut impl LedgerSink) {
        if let Err(error) = sink.sync() {
            self.fail(error);
        }
    }

    fn fail(&mut self, error: LedgerError) {
        tracing::error!(target: "prism_tools", ledger = self.name, %error, "ledger write failed");
        self.failure.get_or_insert(error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::RecordStatus;

    /// Keeps rows in memory.
    struct Rows(Vec<ToolCallRecord>);

    impl LedgerSink for Rows {
        fn write_batch(&mut self, rows: &[QueuedRow]) -> Result<(), WriteFailure> {
            self.0.extend(rows.iter().map(|row| row.record.clone()));
            Ok(())
        }

        fn read(&mut self, _: &RecordQuery) -> Result<Vec<ToolCallRecord>, LedgerError> {
            Ok(self.0.clone())
        }
    }

    /// `max_batch(usize::MAX)` reads as "no limit": the writer must not reserve room for that
    /// many rows up front (it cannot, and its thread would die with every row after it).
    #[test]
    fn an_unbounded_batch_size_reserves_nothing_up_front() {
        let (writer, _opened) =
            BatchWriter::spawn("test-ledger", usize::MAX, || Ok(Rows(Vec::new()))).unwrap();
        writer.append(&ToolCallRecord::new(
            "call_1".into(),
            "echo".into(),
            RecordStatus::Finished,
        ));
        writer.flush().expect("the row is stored");
    }

    /// A store whose writes fail as the test says; what it stores, the test reads.
    #[derive(Clone, Default)]
    struct Flaky(std::sync::Arc<std::sync::Mutex<FlakyState>>);

    #[derive(Default)]
    struct FlakyState {
        stored: Vec<String>,
        /// Every row offered to the store, at every try: its call id and number.
        offered: Vec<(String, u64)>,
        /// The next writes' failures, in order; a write with none left succeeds.
        failures: std::collections::VecDeque<(bool, usize)>,
        /// Every write fails (transiently) while set.
        down: bool,
    }

    impl Flaky {
        fn state(&self) -> std::sync::MutexGuard<'_, FlakyState> {
            self.0.lock().unwrap()
        }

        fn stored(&self) -> Vec<String> {
            self.state().stored.clone()
        }
    }

    impl LedgerSink for Flaky {
        fn write_batch(&mut self, rows: &[QueuedRow]) -> Result<(), WriteFailure> {
            let mut state = self.state();
            let offered = rows
                .iter()
                .map(|row| (row.record.tool_call_id.to_string(), row.number));
            state.offered.extend(offered);
            let failure = if state.down {
                Some((true, 0))
            } else {
                state.failures.pop_front()
            };
            let stored = failure.map_or(rows.len(), |(_, stored)| stored);
            let ids = rows[..stored]
                .iter()
                .map(|row| row.record.tool_call_id.to_string());
            state.stored.extend(ids);
            match failure {
                None => Ok(()),
                Some((retry, stored)) => Err(WriteFailure {
                    error: LedgerError("the store is busy".into()),
                    retry,
                    stored,
                }),
            }
        }

        fn read(&mut self, _: &RecordQuery) -> Result<Vec<ToolCallRecord>, LedgerError> {
            Ok(Vec::new())
        }
    }

    fn row(id: &str) -> ToolCallRecord {
        ToolCallRecord::new(id.into(), "echo".into(), RecordStatus::Finished)
    }

    fn spawn(sink: &Flaky, max_batch: usize) -> BatchWriter {
        let sink = sink.clone();
        BatchWriter::spawn("test-ledger", max_batch, move || Ok(sink))
            .unwrap()
            .0
    }

    /// A writer that reads its first command only once `rows` are all queued, so they reach
    /// the store in batches of `max_batch` whatever the machine's timing (a writer that runs
    /// ahead of the appends commits a row alone when its queue runs dry).
    fn spawn_with(sink: &Flaky, max_batch: usize, rows: &[&str]) -> BatchWriter {
        let sink = sink.clone();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let writer = BatchWriter::spawn("test-ledger", max_batch, move || {
            let _ = wait.recv();
            Ok(sink)
        })
        .unwrap()
        .0;
        for id in rows {
            writer.append(&row(id));
        }
        go.send(()).unwrap();
        writer
    }

    /// Rows a busy store refused wait and are stored at the next flush, in order, before the
    /// rows appended after them; the flush that could not store them says how many wait.
    #[test]
    fn refused_rows_wait_and_are_stored_first_once_the_store_takes_them() {
        let sink = Flaky::default();
        let writer = spawn(&sink, 2);
        sink.state().down = true;
        for id in ["a", "b", "c"] {
            writer.append(&row(id));
        }
        let error = writer.flush().unwrap_err();
        assert!(
            error.0.starts_with("3 rows are waiting to be stored"),
            "{}",
            error.0
        );
        assert!(error.0.ends_with("the store is busy"), "{}", error.0);
        sink.state().down = false;
        writer.append(&row("d"));
        writer.flush().expect("the store takes every row now");
        assert_eq!(sink.stored(), ["a", "b", "c", "d"]);
    }

    /// A row tried again carries the number it had at its first try, and no two rows share one:
    /// what lets a store recognise a row it already stored.
    #[test]
    fn a_row_keeps_its_number_across_tries_and_no_two_rows_share_one() {
        let sink = Flaky::default();
        sink.state().failures.push_back((true, 0));
        // `a` and `b` are refused once, then stored with `c` when the queue runs dry.
        let writer = spawn_with(&sink, 2, &["a", "b", "c"]);
        writer
            .flush()
            .expect("the refused rows were stored at the next commit");
        writer.append(&row("d"));
        writer
            .flush()
            .expect("every row is stored at the second flush");
        let offered = sink.state().offered.clone();
        let mut numbers = std::collections::HashMap::new();
        for (id, number) in &offered {
            assert_eq!(
                *numbers.entry(id.clone()).or_insert(*number),
                *number,
                "{offered:?}"
            );
        }
        let mut distinct: Vec<u64> = numbers.values().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{offered:?}");
        assert!(offered.len() > 4, "a row was tried again: {offered:?}");
    }

    /// Rows beyond the cap are dropped (the newest) and counted; those within it still wait.
    #[test]
    fn rows_beyond_the_cap_are_dropped_and_counted() {
        let sink = Flaky::default();
        let writer = spawn(&sink, usize::MAX);
        sink.state().down = true;
        for index in 0..MAX_WAITING_ROWS + 5 {
            writer.append(&row(&format!("c{index}")));
        }
        let error = writer.flush().unwrap_err();
        let expected = format!(
            "{MAX_WAITING_ROWS} rows are waiting to be stored (tried again at the next commit) \
             and 5 rows were not stored"
        );
        assert!(error.0.starts_with(&expected), "{}", error.0);
        sink.state().down = false;
        writer.flush().expect("the waiting rows are stored");
        let stored = sink.stored();
        assert_eq!(stored.len(), MAX_WAITING_ROWS);
        assert_eq!(stored.first().map(String::as_str), Some("c0"));
    }

    /// A batch the store refuses for good is dropped and counted, and does not hold back the
    /// rows after it.
    #[test]
    fn a_batch_refused_for_good_is_dropped_and_counted() {
        let sink = Flaky::default();
        sink.state().failures.push_back((false, 0));
        let writer = spawn_with(&sink, 2, &["a", "b", "c"]);
        let error = writer.flush().unwrap_err();
        assert!(error.0.starts_with("2 rows were not stored"), "{}", error.0);
        assert_eq!(sink.stored(), ["c"]);
        writer.flush().expect("nothing failed since the last flush");
    }

    /// Rows a failed write stored all the same are not written again.
    #[test]
    fn rows_a_failed_write_stored_are_not_written_again() {
        let sink = Flaky::default();
        sink.state().failures.push_back((true, 1));
        let writer = spawn_with(&sink, 3, &["a", "b", "c"]);
        writer.flush().expect("the rest was stored at the flush");
        assert_eq!(sink.stored(), ["a", "b", "c"]);
        // Stored but not synced: reported, not retried.
        sink.state().failures.push_back((false, 1));
        writer.append(&row("d"));
        let error = writer.flush().unwrap_err();
        assert_eq!(error.0, "the store is busy");
        assert_eq!(sink.stored(), ["a", "b", "c", "d"]);
    }

    /// Rows still waiting when the last handle is dropped get one more try.
    #[test]
    fn shutdown_tries_the_waiting_rows_once_more() {
        let sink = Flaky::default();
        let writer = spawn(&sink, 1);
        sink.state().down = true;
        writer.append(&row("a"));
        writer.flush().unwrap_err();
        sink.state().down = false;
        drop(writer);
        assert_eq!(sink.stored(), ["a"]);
    }
}
