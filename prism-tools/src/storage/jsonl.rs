//! [`JsonlLedger`]: one JSON object per line, appended to a file.
//!
//! The format is the row's own serde form (camelCase fields, as the spec names them), so the
//! file can be read by `jq`, shipped to a log pipeline or loaded back with [`LedgerReader`]. The
//! file is only ever appended to; each batch goes to the operating system in one `write`. A
//! process killed in the middle of a write can leave half a line at the end: opening the ledger
//! again cuts that half line off, so the file stays valid JSON Lines. A write that fails part
//! way (a full disk, a file size limit) is cut off the same way, so the rows written after it
//! stay whole and none is written twice when the batch is tried again (after a full disk; a
//! batch over the file size limit is reported lost instead). One process should write a given
//! file at a time; several readers are fine.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::dispatch::{LedgerError, RunLedger, ToolCallRecord};
use crate::effects::BoxFuture;
use crate::storage::batch::{BatchWriter, LedgerSink, QueuedRow, WriteFailure};
use crate::storage::query::decode_row;
use crate::storage::{LedgerReader, RecordQuery, StorageError};

/// When a [`JsonlLedger`] asks the operating system to put its rows on the disk (fsync).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyncPolicy {
    /// After every batch: a row survives a power loss once the batch holding it is written.
    /// Costs one disk sync per batch.
    EveryBatch,
    /// Every batch reaches the operating system at once, so rows survive the process crashing;
    /// the disk sync happens on [`RunLedger::flush`] and when the ledger shuts down. A power loss
    /// can lose the rows written since the last flush. This is the same trade as SQLite's
    /// `synchronous = NORMAL` in WAL mode, and the default.
    #[default]
    OnFlush,
    /// Never: the operating system writes back when it likes.
    Never,
}

/// A [`RunLedger`] writing JSON Lines to a file. Cheap to clone; the last clone dropped flushes
/// and stops the writer thread.
///
/// ```
/// use prism::dispatch::{RecordStatus, RunLedger, ToolCallRecord};
/// use prism::storage::{JsonlLedger, LedgerReader, RecordQuery};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let ledger = JsonlLedger::open(dir.path().join("calls.jsonl")).unwrap();
/// let mut row = ToolCallRecord::new("call_1".into(), "echo".into(), RecordStatus::Started);
/// row.run_id = Some("run-1".into());
/// ledger.append(&row);
/// ledger.flush().unwrap();
///
/// let rows = ledger.read(&RecordQuery::run("run-1")).await.unwrap();
/// assert_eq!(rows.len(), 1);
/// let text = std::fs::read_to_string(ledger.path()).unwrap();
/// assert!(text.starts_with(r#"{"runId":"run-1","toolCallId":"call_1""#));
/// # });
/// ```
#[derive(Clone)]
pub struct JsonlLedger {
    writer: Arc<BatchWriter>,
    path: Arc<Path>,
}

impl JsonlLedger {
    /// Opens (or creates) the file with the default [`SyncPolicy::OnFlush`].
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, StorageError> {
        Self::open_with(path, SyncPolicy::default())
    }

    /// Opens (or creates) the file with `policy`.
    pub fn open_with(path: impl Into<PathBuf>, policy: SyncPolicy) -> Result<Self, StorageError> {
        let path: Arc<Path> = path.into().into();
        let fail = |error: std::io::Error| {
            StorageError::new(format!(
                "could not open the ledger file {}: {error}",
                path.display()
            ))
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(fail)?;
        cut_torn_tail(&mut file).map_err(fail)?;
        let length = file.seek(SeekFrom::End(0)).map_err(fail)?;
        let sink = JsonlSink {
            file,
            path: path.clone(),
            policy,
            buffer: Vec::new(),
            length,
            torn: false,
        };
        let (writer, _opened) = BatchWriter::spawn("jsonl-ledger", 4096, move || Ok(sink))?;
        Ok(Self {
            writer: Arc::new(writer),
            path,
        })
    }

    /// The file the rows go to.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl RunLedger for JsonlLedger {
    fn append(&self, record: &ToolCallRecord) {
        self.writer.append(record);
    }

    fn flush(&self) -> Result<(), LedgerError> {
        self.writer.flush()
    }
}

impl LedgerReader for JsonlLedger {
    fn read<'a>(
        &'a self,
        query: &'a RecordQuery,
    ) -> BoxFuture<'a, Result<Vec<ToolCallRecord>, LedgerError>> {
        Box::pin(self.writer.read(query.clone()))
    }
}

impl std::fmt::Debug for JsonlLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlLedger")
            .field("path", &self.path)
            .finish()
    }
}

struct JsonlSink {
    file: File,
    path: Arc<Path>,
    policy: SyncPolicy,
    buffer: Vec<u8>,
    /// Where the last whole row ends.
    length: u64,
    /// A failed write left part of its batch that could not be cut off.
    torn: bool,
}

impl LedgerSink for JsonlSink {
    /// One `write` of the whole batch. A write that fails part way is cut off the file, so
    /// none of the batch is stored and trying it again stores no row twice; if even the cut
    /// fails, the rows that reached the file whole are counted as stored and only the half row
    /// after them is left to cut (or to end as a line of its own).
    fn write_batch(&mut self, rows: &[QueuedRow]) -> Result<(), WriteFailure> {
        self.buffer.clear();
        if self.torn && self.file.set_len(self.length).is_ok() {
            self.torn = false;
        }
        // Where this write starts: after the last whole row, or after the half row that could
        // not be cut off (then found from the file).
        let start = if self.torn {
            self.file.metadata().map(|metadata| metadata.len()).ok()
        } else {
            Some(self.length)
        };
        let lead = usize::from(self.torn);
        if self.torn {
            // The half line stays: ending it makes it one unreadable line of its own rather
            // than the start of this batch's first row.
            self.buffer.push(b'\n');
        }
        for row in rows {
            serde_json::to_writer(&mut self.buffer, &row.record).map_err(|error| {
                WriteFailure::refused(LedgerError(format!("could not encode a row: {error}")))
            })?;
            self.buffer.push(b'\n');
        }
        if let Err(error) = self.file.write_all(&self.buffer) {
            let stored = self.settle_failed_write(start, lead);
            // A file size limit refuses these rows however often they are tried; a full disk
            // or an I/O error may pass.
            let retry = error.kind() != std::io::ErrorKind::FileTooLarge;
            return Err(WriteFailure {
                error: self.io_error("write to", error),
                retry,
                stored,
            });
        }
        self.length = if self.torn {
            // With no end known, the next batch cuts back to before this one and writes it
            // again: a row twice if that cut fails too, never a row lost.
            self.file
                .seek(SeekFrom::End(0))
                .map_err(|error| WriteFailure::transient(self.io_error("find the end of", error)))?
        } else {
            self.length + self.buffer.len() as u64
        };
        self.torn = false;
        if self.policy == SyncPolicy::EveryBatch {
            self.file.sync_data().map_err(|error| WriteFailure {
                // In the file, not yet on the disk: writing them again would store them twice.
                error: self.io_error("sync", error),
                retry: false,
                stored: rows.len(),
            })?;
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), LedgerError> {
        if self.policy == SyncPolicy::Never {
            return Ok(());
        }
        self.file
            .sync_data()
            .map_err(|error| self.io_error("sync", error))
    }

    fn read(&mut self, query: &RecordQuery) -> Result<Vec<ToolCallRecord>, LedgerError> {
        let file = File::open(&self.path).map_err(|error| self.io_error("read", error))?;
        let mut rows = Vec::new();
        // Lines as bytes: one that is not UTF-8 is left out by `decode_row`, not the whole read.
        for (index, line) in BufReader::new(file).split(b'\n').enumerate() {
            let line = line.map_err(|error| self.io_error("read", error))?;
            let place = format_args!("line {} of {}", index + 1, self.path.display());
            let Some(row) = decode_row(place, &line) else {
                continue;
            };
            if query.matches(&row) {
                rows.push(row);
            }
        }
        Ok(rows)
    }
}

impl JsonlSink {
    /// After a write of `self.buffer` from `start` failed: cuts the file back to its last whole
    /// row, so none of the batch is stored (0). If the cut fails, the rows that reached the file
    /// whole stay and their number is returned; the file then ends with at most half a row.
    /// `lead` bytes at the buffer's start end an earlier half row and are no row of their own.
    fn settle_failed_write(&mut self, start: Option<u64>, lead: usize) -> usize {
        if self.file.set_len(self.length).is_ok() {
            self.torn = false;
            return 0;
        }
        self.torn = true;
        let (Some(start), Ok(metadata)) = (start, self.file.metadata()) else {
            return 0;
        };
        let written = usize::try_from(metadata.len().saturating_sub(start))
            .unwrap_or(usize::MAX)
            .min(self.buffer.len());
        let Some(newline) = self.buffer[..written]
            .iter()
            .rposition(|&byte| byte == b'\n')
        else {
            return 0;
        };
        let whole = newline + 1;
        if whole <= lead {
            return 0;
        }
        self.length = start + whole as u64;
        self.torn = written > whole;
        self.buffer[lead..whole]
            .iter()
            .filter(|&&byte| byte == b'\n')
            .count()
    }

    fn io_error(&self, action: &str, error: std::io::Error) -> LedgerError {
        LedgerError(format!(
            "could not {action} the ledger file {}: {error}",
            self.path.display()
        ))
    }
}

/// Ends the file at a row's end. What follows the last newline is half a row from a write that
/// was cut short, never acknowledged by a flush, and is cut off; unless it is a whole row whose
/// newline alone is missing (an editor that adds none, a tool that joined files), which gets
/// its newline instead.
fn cut_torn_tail(file: &mut File) -> std::io::Result<()> {
    const CHUNK: u64 = 8192;
    let length = file.seek(SeekFrom::End(0))?;
    let mut end = length;
    let mut chunk = vec![0; CHUNK as usize];
    let mut keep = 0;
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let part = &mut chunk[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(part)?;
        if let Some(newline) = part.iter().rposition(|&byte| byte == b'\n') {
            keep = start + newline as u64 + 1;
            break;
        }
        end = start;
    }
    if keep == length {
        return Ok(());
    }
    let mut tail = Vec::new();
    file.seek(SeekFrom::Start(keep))?;
    file.read_to_end(&mut tail)?;
    if serde_json::from_slice::<serde::de::IgnoredAny>(&tail).is_ok() {
        // The file is open for appending: the newline goes at its end.
        file.write_all(b"\n")
    } else {
        file.set_len(keep)
    }
}
