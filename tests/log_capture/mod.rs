//! Captures what the `tracing` subscriber of one test writes, to check that no log line quotes
//! a secret.

use std::sync::{Arc, Mutex};

use tracing::subscriber::DefaultGuard;

/// The text a test's subscriber wrote.
#[derive(Clone, Default)]
pub struct Logged(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logged {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logged {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// Writes every event of this thread at `level` and above into the returned [`Logged`], until
/// the guard drops. On a current-thread runtime that covers the tasks the test spawns.
pub fn capture(level: tracing::Level) -> (Logged, DefaultGuard) {
    let logged = Logged::default();
    let writer = logged.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(move || writer.clone())
        .finish();
    (logged, tracing::subscriber::set_default(subscriber))
}
