//! [`PageTask`]: a task serving one page (answering its dialogs, watching its lifecycle, judging
//! its requests), stopped when its owner drops it, so an open given up on part way leaves none
//! running.

use tokio::task::JoinHandle;

/// A task aborted when dropped.
pub(crate) struct PageTask(JoinHandle<()>);

impl PageTask {
    /// Runs `work` on a task of its own until it ends or this is dropped.
    pub(crate) fn spawn(work: impl Future<Output = ()> + Send + 'static) -> PageTask {
        PageTask(tokio::spawn(work))
    }

    /// Stops the task now.
    pub(crate) fn abort(&self) {
        self.0.abort();
    }
}

impl Drop for PageTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}
