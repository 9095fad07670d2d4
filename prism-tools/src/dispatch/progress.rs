//! The queue that carries a running tool's progress to the dispatcher's observers.
//!
//! Progress is advisory: a tool never waits for room, updates past the capacity are dropped, and
//! once the call has ended every further update is refused. Every watched call gets a queue,
//! whether or not its tool ever reports progress, so making one must cost next to nothing: here it
//! is one small allocation (a mutex over a deque that only allocates when the first update
//! arrives, and a [`Notify`]), where a Tokio channel allocates a block of slots for every call.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::context::ProgressUpdate;

struct Queue {
    capacity: usize,
    state: Mutex<State>,
    arrived: Notify,
}

struct State {
    updates: VecDeque<ProgressUpdate>,
    closed: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while the lock is held except an allocation failure inside a push, which
        // leaves the deque as it was; the state is consistent either way.
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// The tool's end, held by the per-call context.
#[derive(Clone)]
pub(crate) struct ProgressSender(Arc<Queue>);

impl ProgressSender {
    /// Queues `update` unless the queue is full or closed; never waits.
    pub(crate) fn try_send(&self, update: ProgressUpdate) -> bool {
        {
            let mut state = self.0.lock();
            if state.closed || state.updates.len() >= self.0.capacity {
                return false;
            }
            state.updates.push_back(update);
        }
        // Stores a permit when the dispatcher is not waiting yet, so the update is never missed.
        self.0.arrived.notify_one();
        true
    }
}

/// The dispatcher's end. Closing it, or dropping it, refuses later updates, so a tool that
/// outlives its call (or a task it spawned) learns that its updates go nowhere.
pub(crate) struct ProgressReceiver {
    queue: Arc<Queue>,
    /// Set by [`close`](Self::close), so that dropping does not lock the queue a second time.
    closed: bool,
}

impl ProgressReceiver {
    /// The next update, waiting for one if none is queued. Pending forever once closed and
    /// drained: the dispatcher stops polling it when the tool ends.
    pub(crate) async fn recv(&self) -> ProgressUpdate {
        loop {
            if let Some(update) = self.queue.lock().updates.pop_front() {
                return update;
            }
            self.queue.arrived.notified().await;
        }
    }

    /// Refuses every later update and hands back those still queued, in order.
    pub(crate) fn close(mut self) -> VecDeque<ProgressUpdate> {
        self.closed = true;
        let mut state = self.queue.lock();
        state.closed = true;
        std::mem::take(&mut state.updates)
    }
}

impl Drop for ProgressReceiver {
    fn drop(&mut self) {
        if !self.closed {
            self.queue.lock().closed = true;
        }
    }
}

/// A queue holding at most `capacity` undelivered updates.
pub(crate) fn progress_queue(capacity: usize) -> (ProgressSender, ProgressReceiver) {
    let queue = Arc::new(Queue {
        capacity,
        state: Mutex::new(State {
            updates: VecDeque::new(),
            closed: false,
        }),
        arrived: Notify::new(),
    });
    let sender = ProgressSender(Arc::clone(&queue));
    (
        sender,
        ProgressReceiver {
            queue,
            closed: false,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn update(n: u64) -> ProgressUpdate {
        ProgressUpdate {
            progress: json!(n),
            metadata: None,
        }
    }

    #[test]
    fn full_queues_drop_new_updates_and_closed_queues_refuse_all() {
        let (sender, receiver) = progress_queue(2);
        assert!(sender.try_send(update(1)));
        assert!(sender.try_send(update(2)));
        assert!(!sender.try_send(update(3)));
        let drained: Vec<_> = receiver.close().into_iter().map(|u| u.progress).collect();
        assert_eq!(drained, [json!(1), json!(2)]);
        assert!(!sender.try_send(update(4)));
    }

    #[test]
    fn dropping_the_receiver_closes_the_queue() {
        let (sender, receiver) = progress_queue(8);
        drop(receiver);
        assert!(!sender.try_send(update(1)));
    }

    #[test]
    fn recv_wakes_for_an_update_sent_while_waiting() {
        use std::future::Future;
        use std::task::{Context, Poll, Waker};

        let (sender, receiver) = progress_queue(8);
        let mut waiting = std::pin::pin!(receiver.recv());
        let mut cx = Context::from_waker(Waker::noop());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        assert!(sender.try_send(update(7)));
        match waiting.as_mut().poll(&mut cx) {
            Poll::Ready(received) => assert_eq!(received.progress, json!(7)),
            Poll::Pending => panic!("an update was queued but recv is still pending"),
        }
    }
}
