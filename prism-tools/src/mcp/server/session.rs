//! [`Session`]: what belongs to one MCP session: the calls that only an explicit
//! `notifications/cancelled` may stop, and its announcements of tool-list changes (see
//! `tool_list_changes.rs`).
//!
//! A call of a tool with an effect runs on its own task and ignores a dropped stream (see
//! `calling.rs`), so the session keeps its token by request id for the client's cancellation.
//! rmcp hands a request and the cancellation that follows it to separate tasks, and either may
//! run first: a cancellation that finds no call is remembered, and the call that registers
//! later under that id starts cancelled.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use rmcp::model::RequestId;

use crate::context::CancellationToken;

use super::tool_list_changes::ToolListWatch;

/// How many cancellations that found no call a session remembers. MCP forbids reusing a request
/// id within a session, so an old entry can only be a cancellation that came after its call
/// ended; the bound keeps a client that cancels finished calls from growing the table.
const EARLY_CANCELLATIONS: usize = 64;

/// One session's cancellable calls and tool-list announcements.
#[derive(Default)]
pub(super) struct Session {
    calls: Mutex<Calls>,
    pub(super) tool_list: ToolListWatch,
}

#[derive(Default)]
struct Calls {
    running: HashMap<RequestId, CancellationToken>,
    /// Cancellations that arrived before their call registered, oldest first.
    cancelled_early: VecDeque<RequestId>,
}

impl Session {
    /// A session opening now, when the served registry's generation is `generation`.
    pub(super) fn new(generation: u64) -> Self {
        Self {
            calls: Mutex::default(),
            tool_list: ToolListWatch::new(generation),
        }
    }

    /// Registers the call answering request `id`; fires `token` at once when the client already
    /// cancelled that request.
    pub(super) fn register(&self, id: &RequestId, token: &CancellationToken) {
        let mut calls = self.lock();
        if let Some(at) = calls.cancelled_early.iter().position(|early| early == id) {
            calls.cancelled_early.remove(at);
            token.cancel();
            return;
        }
        calls.running.insert(id.clone(), token.clone());
    }

    /// Forgets the call registered with `token` under `id` (and no other call a misbehaving
    /// client started under the same id).
    pub(super) fn finish(&self, id: &RequestId, token: &CancellationToken) {
        let mut calls = self.lock();
        if calls
            .running
            .get(id)
            .is_some_and(|running| running.same_as(token))
        {
            calls.running.remove(id);
        }
    }

    /// The client cancelled request `id`: fires its call's token, or remembers the cancellation
    /// for a call that has not registered yet.
    pub(super) fn cancel(&self, id: &RequestId) {
        let mut calls = self.lock();
        if let Some(token) = calls.running.get(id) {
            token.cancel();
            return;
        }
        if calls.cancelled_early.len() == EARLY_CANCELLATIONS {
            calls.cancelled_early.pop_front();
        }
        calls.cancelled_early.push_back(id.clone());
    }

    fn lock(&self) -> MutexGuard<'_, Calls> {
        self.calls
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancellation_before_the_call_registers_is_kept_for_it() {
        let session = Session::default();
        let id = RequestId::Number(7);
        session.cancel(&id);
        let token = CancellationToken::new();
        session.register(&id, &token);
        assert!(token.is_cancelled());
        // Used once: a later call under another id is not affected.
        let other = CancellationToken::new();
        session.register(&RequestId::Number(8), &other);
        assert!(!other.is_cancelled());
    }

    #[test]
    fn a_cancellation_fires_the_running_call() {
        let session = Session::default();
        let id = RequestId::Number(1);
        let token = CancellationToken::new();
        session.register(&id, &token);
        session.cancel(&id);
        assert!(token.is_cancelled());
    }

    #[test]
    fn finishing_forgets_only_its_own_call() {
        let session = Session::default();
        let id = RequestId::Number(3);
        let (first, second) = (CancellationToken::new(), CancellationToken::new());
        session.register(&id, &first);
        // A client reusing the id: the second call replaces the first in the table.
        session.register(&id, &second);
        session.finish(&id, &first);
        session.cancel(&id);
        assert!(
            second.is_cancelled(),
            "the second call is still cancellable"
        );
        session.finish(&id, &second);
        assert!(session.lock().running.is_empty());
    }

    #[test]
    fn early_cancellations_are_bounded() {
        let session = Session::default();
        for n in 0..1000 {
            session.cancel(&RequestId::Number(n));
        }
        assert_eq!(session.lock().cancelled_early.len(), EARLY_CANCELLATIONS);
        let token = CancellationToken::new();
        session.register(&RequestId::Number(999), &token);
        assert!(token.is_cancelled());
    }
}
