//! What the page's main frame is doing, counted from protocol events, so a tool can tell whether
//! an action started a navigation and wait for it to load or be refused.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use super::error::{BrowserError, BrowserErrorKind};
use crate::redact::SecretRedactor;

/// Counters of the main frame's navigations since the context opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NavigationCounts {
    /// Document requests the main frame started (redirect hops not counted again).
    pub(crate) requested: u64,
    /// Documents the main frame committed to.
    pub(crate) committed: u64,
    /// Load events of the main frame.
    pub(crate) loaded: u64,
    /// Main-frame document requests the URL policy refused (a first hop or a redirect).
    pub(crate) refused: u64,
}

/// How a wait for a navigation ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    /// No navigation started within the settle window.
    Quiet,
    /// A navigation started and the new page fired its load event.
    Loaded,
    /// A navigation started and the URL policy refused it.
    Refused(Refusal),
    /// A navigation started but did not finish loading in time.
    StillLoading,
}

/// A navigation the URL policy refused: which URL, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Refusal {
    url: String,
    why: String,
}

impl Refusal {
    pub(crate) fn new(url: String, why: String) -> Self {
        Refusal { url, why }
    }

    /// The message for the model: the URL cut to 200 characters and why it was refused. The
    /// URL is cut once `redactor`'s secrets are out of it: the page chose it, a secret may sit
    /// in it, and a cut could leave part of one that the dispatcher would no longer find.
    pub(crate) fn message(&self, redactor: &SecretRedactor) -> String {
        if self.url.is_empty() {
            return "the URL policy refused the navigation".into();
        }
        let url = redactor.redact_str(&self.url);
        let url = match url.char_indices().nth(200) {
            Some((end, _)) => &url[..end],
            None => &url,
        };
        format!("`{url}` is refused: {}", self.why)
    }

    /// The `url_refused` error `browser_navigate` answers with (see [`message`](Self::message)).
    pub(crate) fn into_error(self, redactor: &SecretRedactor) -> BrowserError {
        BrowserError::new(BrowserErrorKind::Refused, self.message(redactor))
    }
}

/// While alive, marks a navigation as asked for by `browser_navigate`.
#[derive(Debug)]
pub(crate) struct ToolNavigation<'a> {
    state: &'a NavigationState,
}

impl Drop for ToolNavigation<'_> {
    fn drop(&mut self) {
        self.state.by_tool.store(false, Ordering::SeqCst);
    }
}

/// The shared counters, updated by the event tasks and read by the tools.
#[derive(Debug)]
pub(crate) struct NavigationState {
    counts: watch::Sender<NavigationCounts>,
    last_refusal: Mutex<Option<Refusal>>,
    /// The URL of the latest main-frame document request (first hop or redirect) the URL
    /// policy let through.
    last_document: Mutex<Option<String>>,
    by_tool: AtomicBool,
}

impl NavigationState {
    pub(crate) fn new() -> Self {
        NavigationState {
            counts: watch::Sender::new(NavigationCounts::default()),
            last_refusal: Mutex::new(None),
            last_document: Mutex::new(None),
            by_tool: AtomicBool::new(false),
        }
    }

    /// Marks that `browser_navigate` is loading a page (rather than the page navigating by
    /// itself), which decides how a refusal ends the navigation, until the returned mark is
    /// dropped: a navigation call that times out or is cancelled unmarks it too.
    pub(crate) fn by_tool(&self) -> ToolNavigation<'_> {
        self.by_tool.store(true, Ordering::SeqCst);
        ToolNavigation { state: self }
    }

    pub(crate) fn is_by_tool(&self) -> bool {
        self.by_tool.load(Ordering::SeqCst)
    }

    pub(crate) fn counts(&self) -> NavigationCounts {
        *self.counts.borrow()
    }

    pub(crate) fn record(&self, change: impl FnOnce(&mut NavigationCounts)) {
        self.counts.send_modify(change);
    }

    /// Records that the URL policy refused `url` for the reason `why`.
    pub(crate) fn record_refusal(&self, url: String, why: String) {
        if let Ok(mut last) = self.last_refusal.lock() {
            *last = Some(Refusal { url, why });
        }
        self.record(|counts| counts.refused += 1);
    }

    /// Records that the URL policy let the main-frame document request for `url` through.
    pub(crate) fn record_document(&self, url: String) {
        if let Ok(mut last) = self.last_document.lock() {
            *last = Some(url);
        }
    }

    pub(crate) fn last_document(&self) -> Option<String> {
        self.last_document.lock().ok().and_then(|last| last.clone())
    }

    pub(crate) fn last_refusal(&self) -> Option<Refusal> {
        self.last_refusal.lock().ok().and_then(|last| last.clone())
    }

    /// Waits for the main frame to settle after `before`: first up to `window` for a navigation
    /// to start, then up to `limit` for it to load or be refused.
    pub(crate) async fn settle(
        &self,
        before: NavigationCounts,
        window: Duration,
        limit: Duration,
    ) -> Settled {
        let mut changes = self.counts.subscribe();
        let started = tokio::time::timeout(
            window,
            changes.wait_for(|now| {
                now.requested > before.requested
                    || now.committed > before.committed
                    || now.refused > before.refused
            }),
        )
        .await
        .is_ok_and(|change| change.is_ok());
        if !started {
            return Settled::Quiet;
        }
        self.finish(before, limit).await
    }

    /// Waits up to `limit` for a navigation started after `before` to load or be refused.
    pub(crate) async fn finish(&self, before: NavigationCounts, limit: Duration) -> Settled {
        let mut changes = self.counts.subscribe();
        let ended = tokio::time::timeout(
            limit,
            changes.wait_for(|now| {
                now.refused > before.refused
                    || (now.loaded > before.loaded && now.committed > before.committed)
            }),
        )
        .await
        .ok()
        .and_then(|change| change.ok().map(|now| now.refused > before.refused));
        match ended {
            Some(true) => Settled::Refused(self.last_refusal().unwrap_or_default()),
            Some(false) => Settled::Loaded,
            None => Settled::StillLoading,
        }
    }
}
