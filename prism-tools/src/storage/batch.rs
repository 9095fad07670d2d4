//! The writer thread every durable ledger runs: it drains queued rows and commits them in batches.
//!
//! `append` must never block the dispatch path, and the backends (a file, SQLite, a PostgreSQL
//! connection) all block. So each ledger owns one thread that owns its backend: rows, flushes and
//! reads reach it through one channel and are handled in the order they were sent. The thread
//! commits when the queue runs dry or the batch is full, whichever comes first: no timer, so an
//! idle ledger commits a row at once and a busy one shares each commit among many rows.

use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use crate::dispatch::{LedgerError, ToolCallRecord};
use crate::storage::{RecordQuery, StorageError};

/// What a backend does for the writer thread. Every method may block.
pub(crate) trait LedgerSink: Send + 'static {
    /// Stores `rows`, in order, as one unit: all or none.
    fn write_batch(&mut self, rows: &[ToolCallRecord]) -> Result<(), LedgerError>;

    /// Makes what was written durable, where that is a separate step (a file's fsync).
    fn sync(&mut self) -> Result<(), LedgerError> {
        Ok(())
    }

    /// Reads rows back in append order.
    fn read(&mut self, query: &RecordQuery) -> Result<Vec<ToolCallRecord>, LedgerError>;
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

    /// Waits until every row queued before this call is stored (and synced where the backend
    /// has such a step); returns how many rows were lost since the previous flush, and the first failure's cause.
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
    let mut batch = Batch {
        // Grown as rows come: the bound may be far above what ever queues (or `usize::MAX`).
        rows: Vec::new(),
        max_batch,
        failure: None,
        lost: 0,
    };
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
    // Every handle is gone: this is the flush on shutdown.
    batch.sync(&mut sink);
    if let Err(error) = batch.take_failure() {
        tracing::error!(target: "prism_tools", ledger = name, %error, "ledger rows were lost before shutdown");
    }
}

struct Batch {
    rows: Vec<ToolCallRecord>,
    max_batch: usize,
    /// The first failure since the last flush.
    failure: Option<LedgerError>,
    /// The rows of every batch refused since the last flush.
    lost: usize,
}

impl Batch {
    fn push(&mut self, sink: &mut impl LedgerSink, record: ToolCallRecord) {
        self.rows.push(record);
        if self.rows.len() >= self.max_batch {
            self.commit(sink);
        }
    }

    /// Stores the pending rows. A failed batch is dropped (retrying forever would stall every
    /// later row) and the failure, with the number of rows lost, waits for the next flush.
    fn commit(&mut self, sink: &mut impl LedgerSink) {
        if self.rows.is_empty() {
            return;
        }
        if let Err(error) = sink.write_batch(&self.rows) {
            self.lost += self.rows.len();
            self.fail(error);
        }
        self.rows.clear();
    }

    /// What the flush reports: every row lost since the last one, and the first failure's cause.
    fn take_failure(&mut self) -> Result<(), LedgerError> {
        let lost = std::mem::take(&mut self.lost);
        match self.failure.take() {
            None => Ok(()),
            Some(cause) if lost == 0 => Err(cause),
            Some(cause) => Err(LedgerError(format!(
                "{lost} rows were not stored: {}",
                cause.0
            ))),
        }
    }

    fn sync(&mut self, sink: &mut impl LedgerSink) {
        if let Err(error) = sink.sync() {
            self.fail(error);
        }
    }

    fn fail(&mut self, error: LedgerError) {
        tracing::error!(target: "prism_tools", %error, "ledger write failed");
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
        fn write_batch(&mut self, rows: &[ToolCallRecord]) -> Result<(), LedgerError> {
            self.0.extend_from_slice(rows);
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
}
