//! A thread that owns one SQLite connection and runs jobs on it, so that async callers never
//! block their runtime on the database (a claim may wait for another process's write lock).

use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::effects::EffectStoreError;
use crate::storage::StorageError;

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// The handle to a connection thread; dropping it lets queued jobs finish, then joins the thread.
pub(super) struct ConnectionWorker {
    /// `None` only while dropping.
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl ConnectionWorker {
    pub(super) fn spawn(mut connection: Connection) -> Result<Self, StorageError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("prism-sqlite-effects".to_owned())
            .spawn(move || {
                while let Ok(job) = queue.recv() {
                    job(&mut connection);
                }
            })
            .map_err(|error| {
                StorageError::new(format!(
                    "could not start the SQLite effects thread: {error}"
                ))
            })?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Runs `job` on the connection and waits for its answer without blocking the caller.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Connection) -> Result<T, EffectStoreError> + Send + 'static,
    ) -> Result<T, EffectStoreError> {
        let stopped = || EffectStoreError::Backend("the SQLite effects thread has stopped".into());
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
            tracing::error!(target: "prism_tools", "the SQLite effects thread panicked");
        }
    }
}
