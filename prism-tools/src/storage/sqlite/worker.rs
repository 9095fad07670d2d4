//! A thread that owns one SQLite connection and runs jobs on it, so that async callers never
//! block their runtime on the database (a write may wait for another process's write lock).

use std::fmt;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::effects::EffectStoreError;
use crate::run::ApprovalStoreError;
use crate::storage::StorageError;
use crate::storage::sqlite::{SqliteOptions, open_connection};

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// The handle to a connection thread; dropping it lets queued jobs finish, then joins the thread.
pub(super) struct ConnectionWorker {
    /// What the connection serves ("effects", "approvals"), for thread names and messages.
    role: &'static str,
    /// `None` only while dropping.
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// A job could not run: the connection thread is gone.
pub(super) struct WorkerStopped {
    role: &'static str,
}

impl fmt::Display for WorkerStopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the SQLite {} thread has stopped", self.role)
    }
}

impl From<WorkerStopped> for EffectStoreError {
    fn from(stopped: WorkerStopped) -> Self {
        Self::Backend(stopped.to_string())
    }
}

impl From<WorkerStopped> for ApprovalStoreError {
    fn from(stopped: WorkerStopped) -> Self {
        Self::Backend(stopped.to_string())
    }
}

impl ConnectionWorker {
    /// Opens the database (migrating it) and starts a thread named after `role` that owns it.
    pub(super) fn open(options: &SqliteOptions, role: &'static str) -> Result<Self, StorageError> {
        let mut connection = open_connection(options)?;
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name(format!("prism-sqlite-{role}"))
            .spawn(move || {
                while let Ok(job) = queue.recv() {
                    job(&mut connection);
                }
            })
            .map_err(|error| {
                StorageError::new(format!("could not start the SQLite {role} thread: {error}"))
            })?;
        Ok(Self {
            role,
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Runs `job` on the connection and waits for its answer without blocking the caller.
    pub(super) async fn run<T, E>(
        &self,
        job: impl FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<WorkerStopped> + Send + 'static,
    {
        let stopped = || WorkerStopped { role: self.role };
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |connection| {
            let _ = reply.send(job(connection));
        });
        self.jobs
            .as_ref()
            .and_then(|jobs| jobs.send(job).ok())
            .ok_or_else(stopped)?;
        answer.await.map_err(|_| stopped())?
    }
}

impl Drop for ConnectionWorker {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!(target: "prism_tools", role = self.role, "a SQLite connection thread panicked");
        }
    }
}
