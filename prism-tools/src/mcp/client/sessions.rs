//! The sessions of one connection: the live one, and a new one opened when it ended.
//!
//! A long-running host keeps its definitions registered while the server behind them restarts
//! (a child process exits or is killed, a message over the bound ends the stream, an HTTP
//! transport stops; an HTTP server that only forgot the session is handled by the SDK's
//! transport, which opens a new session on the 404). So a call or a listing that finds the
//! session ended opens a new one to the same server, in the same protocol era, and goes on with
//! it. What was in flight when the session ended is never sent again: its effect on the server
//! is unknown, so it fails with `mcp_connection_lost` as before. Only one attempt runs at a
//! time, and every caller that finds the session ended waits for that one attempt. After a
//! failed attempt the next one waits a delay that doubles from [`Backoff::first`] up to
//! [`Backoff::cap`] (back to the first after a success): a server that stays down is not
//! hammered, and a call in the delay fails at once, saying when the next attempt will be made,
//! rather than wait. Each attempt is bounded by the connect timeout. A closed client opens
//! nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use rmcp::service::{Peer, RoleClient};
use tokio::time::Instant;

use super::bounded_lines::LineOverflow;
use super::connect::{self, ProtocolEra, Session, StderrScrubber};
use super::error::{McpClientError, codes};
use super::notifications::{BridgeHandler, ProgressRoutes};
use super::server::RemoteServer;
use crate::error::ToolError;

/// One session's parts, as calls and listings use them. Each session has its own handler, so
/// its progress routes and "tools changed" flag: rmcp numbers progress tokens per session, and
/// an update the old session held for a call that never registered must not reach a call of the
/// new one that happens to get the same token.
pub(crate) struct Live {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) progress: ProgressRoutes,
    pub(crate) tools_changed: Arc<AtomicBool>,
    pub(crate) process_id: Option<u32>,
    pub(crate) overflow: LineOverflow,
    /// Which session of the connection this is, counting from 0: a list kept from an earlier
    /// one is not used.
    pub(crate) generation: u64,
    /// Taken when the session is closed.
    session: Mutex<Option<Session>>,
}

impl Live {
    fn new(
        session: Session,
        progress: ProgressRoutes,
        tools_changed: Arc<AtomicBool>,
        generation: u64,
    ) -> Self {
        Self {
            peer: session.service.peer().clone(),
            progress,
            tools_changed,
            process_id: session.child.as_ref().and_then(tokio::process::Child::id),
            overflow: session.overflow.clone(),
            generation,
            session: Mutex::new(Some(session)),
        }
    }

    /// Whether the session ended: the SDK's loop stopped (the stream closed, the process died,
    /// the session was closed), so nothing sent on it would be answered.
    pub(crate) fn ended(&self) -> bool {
        self.peer.is_transport_closed()
    }

    /// Ends the session and, for a child process, stops it (closing its input first, then
    /// killing it if it does not exit).
    async fn close(&self) {
        let session = self
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut session) = session {
            let _ = session
                .service
                .close_with_timeout(Duration::from_secs(5))
                .await;
            if let Some(child) = session.child.as_mut() {
                let _ = child.kill().await;
            }
        }
    }
}

/// How long the bridge waits after a failed attempt before it tries again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backoff {
    /// The delay after the first failed attempt.
    pub(crate) first: Duration,
    /// The longest delay.
    pub(crate) cap: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            first: Duration::from_secs(1),
            cap: Duration::from_secs(30),
        }
    }
}

impl Backoff {
    /// The delay after `failed` attempts in a row (1 or more).
    fn after(self, failed: u32) -> Duration {
        let doublings = failed.saturating_sub(1).min(16);
        self.first.saturating_mul(1 << doublings).min(self.cap)
    }
}

/// The failed attempts since the last session opened, and the delays between them.
#[derive(Default)]
struct Attempts {
    failed: u32,
    /// When the next attempt may be made, after a failed one.
    next_at: Option<Instant>,
    backoff: Backoff,
}

/// The live session of a connection, and how a new one is opened.
pub(crate) struct Sessions {
    current: ArcSwap<Live>,
    /// The era to ask for again; `None` for a session over a transport the caller made, which
    /// cannot be opened again.
    era: Option<ProtocolEra>,
    /// Held by the one attempt under way; callers that find the session ended wait here.
    attempts: tokio::sync::Mutex<Attempts>,
    closed: AtomicBool,
    /// What every session's child's standard error is scrubbed of.
    stderr: StderrScrubber,
}

/// Why no session could be had for a call or a listing.
pub(crate) enum Unavailable {
    /// [`McpClient::close`](super::McpClient::close) was called.
    Closed,
    /// The session ended over a transport the caller made, which cannot be opened again.
    NotReopenable,
    /// An attempt failed lately; the next one waits until then.
    Waiting { retry_in: Duration },
    /// This attempt failed; the next one waits `retry_in`.
    Failed {
        error: McpClientError,
        retry_in: Duration,
    },
}

impl Sessions {
    /// The connection's first session.
    pub(crate) fn new(
        session: Session,
        progress: ProgressRoutes,
        tools_changed: Arc<AtomicBool>,
        era: Option<ProtocolEra>,
        stderr: StderrScrubber,
    ) -> Self {
        Self {
            current: ArcSwap::from_pointee(Live::new(session, progress, tools_changed, 0)),
            era,
            attempts: tokio::sync::Mutex::default(),
            closed: AtomicBool::new(false),
            stderr,
        }
    }

    /// What the children's standard error is scrubbed of, which calls add their dispatchers'
    /// secrets to.
    pub(crate) fn stderr(&self) -> &StderrScrubber {
        &self.stderr
    }

    /// The session as it is now, ended or not (for what it reports, not to send on).
    pub(crate) fn current(&self) -> Arc<Live> {
        self.current.load_full()
    }

    /// Sets the delays between failed attempts (tests shorten or lengthen them).
    #[cfg(test)]
    pub(crate) fn set_backoff(&self, backoff: Backoff) {
        self.attempts
            .try_lock()
            .expect("no attempt is under way")
            .backoff = backoff;
    }

    /// Lets the next attempt be made now, whatever the delay after the last failed one.
    #[cfg(test)]
    pub(crate) fn skip_delay(&self) {
        if let Ok(mut attempts) = self.attempts.try_lock() {
            attempts.next_at = None;
        }
    }

    /// A session to send on: the live one, or a new one when it ended (see the module docs).
    pub(crate) async fn live(&self, server: &RemoteServer) -> Result<Arc<Live>, Unavailable> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Unavailable::Closed);
        }
        let current = self.current.load_full();
        if !current.ended() {
            return Ok(current);
        }
        let Some(era) = self.era else {
            return Err(Unavailable::NotReopenable);
        };
        // One attempt at a time: whoever waited here while another attempt ran takes its
        // session, or its failure's delay, rather than open a session of its own.
        let mut attempts = self.attempts.lock().await;
        if self.closed.load(Ordering::Acquire) {
            return Err(Unavailable::Closed);
        }
        let current = self.current.load_full();
        if !current.ended() {
            return Ok(current);
        }
        let now = Instant::now();
        if let Some(at) = attempts.next_at
            && now < at
        {
            return Err(Unavailable::Waiting { retry_in: at - now });
        }
        // A new handler, so new progress routes and a new "tools changed" flag (see `Live`).
        let (handler, progress, tools_changed) = BridgeHandler::new(server.scrubber());
        match connect::open(server, era, handler, &self.stderr).await {
            Ok(session) => {
                // Sessions are replaced one at a time, under `attempts`.
                let generation = current.generation + 1;
                let live = Arc::new(Live::new(session, progress, tools_changed, generation));
                let old = self.current.swap(Arc::clone(&live));
                attempts.failed = 0;
                attempts.next_at = None;
                drop(attempts);
                // The ended session's process may still run (a message over the bound ends
                // the session, not the process).
                old.close().await;
                tracing::info!(
                    target: "prism::mcp",
                    server = %server.name,
                    "the session had ended; a new one was opened"
                );
                Ok(live)
            }
            Err(error) => {
                attempts.failed = attempts.failed.saturating_add(1);
                let retry_in = attempts.backoff.after(attempts.failed);
                attempts.next_at = Some(Instant::now() + retry_in);
                tracing::warn!(
                    target: "prism::mcp",
                    server = %server.name,
                    error = ?server.scrub(&error.to_string()),
                    retry_in_ms = retry_in.as_millis() as u64,
                    "the session had ended and a new one could not be opened"
                );
                Err(Unavailable::Failed { error, retry_in })
            }
        }
    }

    /// Closes the live session for good: nothing is opened after it.
    pub(crate) async fn close(&self) {
        self.closed.store(true, Ordering::Release);
        // An attempt under way finishes first, so the session it opens is the one closed.
        let _attempts = self.attempts.lock().await;
        self.current.load_full().close().await;
    }
}

impl Unavailable {
    /// What went wrong, for a message about `what` (e.g. "`search` was not called"), with the
    /// endpoint's credentials taken out.
    fn describe(&self, server: &RemoteServer, what: &str) -> String {
        let name = &server.name;
        match self {
            Self::Closed => {
                format!("the client of MCP server `{name}` was closed; {what}")
            }
            Self::NotReopenable => {
                format!("the connection to MCP server `{name}` is gone; {what}")
            }
            Self::Waiting { retry_in } => format!(
                "the connection to MCP server `{name}` is gone and the last attempt to open a new \
                 session failed; the next attempt will be made in {} ms, by a call made then; \
                 {what}",
                retry_in.as_millis().max(1)
            ),
            Self::Failed { error, retry_in } => format!(
                "the connection to MCP server `{name}` is gone and a new session could not be \
                 opened ({}); the next attempt will be made in {} ms, by a call made then; {what}",
                server.scrub(&error.to_string()),
                retry_in.as_millis().max(1)
            ),
        }
    }

    /// The error of a call of `tool` that found no session.
    pub(crate) fn call_error(&self, server: &RemoteServer, tool: &str) -> ToolError {
        ToolError::with_code(
            codes::CONNECTION_LOST,
            self.describe(server, &format!("`{tool}` was not called")),
        )
    }

    /// The error of a listing that found no session.
    pub(crate) fn list_error(&self, server: &RemoteServer) -> McpClientError {
        McpClientError::Request {
            server: server.name.clone(),
            during: "tools/list",
            message: self.describe(server, "the tools were not listed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_up_to_its_cap() {
        let backoff = Backoff::default();
        let delays: Vec<_> = (1..=7)
            .map(|failed| backoff.after(failed).as_secs())
            .collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(backoff.after(u32::MAX), Duration::from_secs(30));
    }
}
