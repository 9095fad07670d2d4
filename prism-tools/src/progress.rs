//! The queue that carries a running tool's progress to the dispatcher's observers.
//!
//! Progress is advisory: a tool never waits for room, updates past the capacity (or nested deeper
//! than the output depth limit) are dropped and counted for the call's terminal event and row,
//! and once the call has ended every further update is refused. Every watched call of a tool that
//! reads its context gets a queue, whether or not the tool ever reports progress, so making one
//! must cost next to nothing: here it is one small allocation (a mutex over a deque that only
//! allocates when the first update arrives, and a [`Notify`]), where a Tokio channel allocates a
//! block of slots for every call; and closing a queue nothing was ever sent on is one atomic
//! swap, with no lock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::Notify;

use crate::limits::{Limits, check_value, drop_deep};

/// One progress report from a running tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressUpdate {
    /// What the tool reported, e.g. `{"done": 3, "of": 10}`.
    pub progress: Value,
    /// Optional extra detail.
    pub metadata: Option<Value>,
}

/// Nothing was ever queued: closing needs no lock.
const OPEN_EMPTY: u8 = 0;
/// Something was queued or dropped at some point: closing drains under the lock.
const OPEN_QUEUED: u8 = 1;
/// Every later update is refused.
const CLOSED: u8 = 2;

struct Queue {
    capacity: usize,
    max_depth: usize,
    /// One of the three states above. Most tools never report progress, so the state lets a call
    /// close its queue with one atomic swap instead of a lock.
    state: AtomicU8,
    updates: Mutex<Updates>,
    arrived: Notify,
}

/// What a running call's queue holds.
#[derive(Default)]
pub(crate) struct Updates {
    /// Updates not yet reported, in order.
    pub(crate) queued: VecDeque<ProgressUpdate>,
    /// Updates dropped while the call ran: the queue was full, or they nested too deep.
    pub(crate) dropped: u64,
}

impl Queue {
    /// Counts a dropped update. Marked queued, so closing reads the count under the lock; once
    /// closed, the count was read and the update is refused uncounted, as after the call's end.
    fn count_dropped(&self, updates: &mut Updates) {
        updates.dropped += 1;
        let _ = self.state.compare_exchange(
            OPEN_EMPTY,
            OPEN_QUEUED,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }

    fn lock(&self) -> MutexGuard<'_, Updates> {
        // Nothing panics while the lock is held except an allocation failure inside a push, which
        // leaves the deque as it was; the state is consistent either way.
        self.updates
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// The tool's end, held by the per-call context.
#[derive(Clone)]
pub(crate) struct ProgressSender(Arc<Queue>);

impl ProgressSender {
    /// Queues `update` unless the queue is full or closed, or the update nests too deep; never
    /// waits.
    pub(crate) fn try_send(&self, update: ProgressUpdate) -> bool {
        let queue = &*self.0;
        if queue.state.load(Ordering::Acquire) == CLOSED {
            return false;
        }
        let too_deep =
            |value: &serde_json::Value| check_value(value, usize::MAX, queue.max_depth).is_err();
        if too_deep(&update.progress) || update.metadata.as_ref().is_some_and(too_deep) {
            queue.count_dropped(&mut queue.lock());
            drop_deep(update.progress);
            if let Some(metadata) = update.metadata {
                drop_deep(metadata);
            }
            return false;
        }
        {
            let mut updates = queue.lock();
            if updates.queued.len() >= queue.capacity {
                queue.count_dropped(&mut updates);
                return false;
            }
            updates.queued.push_back(update);
            // Marked after the push and under the lock, so a close that sees the mark and then
            // takes the lock finds the update. A close that came first wins: the update is taken
            // back and refused.
            let marked = queue.state.compare_exchange(
                OPEN_EMPTY,
                OPEN_QUEUED,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            if marked == Err(CLOSED) {
                updates.queued.pop_back();
                return false;
            }
        }
        // Stores a permit when the dispatcher is not waiting yet, so the update is never missed.
        queue.arrived.notify_one();
        true
    }
}

/// The dispatcher's end. Closing it, or dropping it, refuses later updates, so a tool that
/// outlives its call (or a task it spawned) learns that its updates go nowhere.
pub(crate) struct ProgressReceiver {
    queue: Arc<Queue>,
}

impl ProgressReceiver {
    /// The next update, waiting for one if none is queued. Pending forever once closed and
    /// drained: the dispatcher stops polling it when the tool ends.
    ///
    /// Each update spends a unit of the task's cooperative budget first, as Tokio's own channels
    /// do: updates that keep arriving (a busy reporting thread) would otherwise keep the
    /// dispatching task from ever yielding to the rest of its runtime. Spent before taking the
    /// update, so a recv dropped while it yields loses none.
    pub(crate) async fn recv(&self) -> ProgressUpdate {
        loop {
            tokio::task::coop::consume_budget().await;
            if let Some(update) = self.queue.lock().queued.pop_front() {
                return update;
            }
            self.queue.arrived.notified().await;
        }
    }

    /// Refuses every later update and hands back those still queued, in order, with the count
    /// of those dropped.
    pub(crate) fn close(self) -> Updates {
        match self.queue.state.swap(CLOSED, Ordering::AcqRel) {
            OPEN_QUEUED => std::mem::take(&mut *self.queue.lock()),
            _ => Updates::default(),
        }
    }
}

impl Drop for ProgressReceiver {
    fn drop(&mut self) {
        self.queue.state.store(CLOSED, Ordering::Release);
    }
}

/// A queue holding at most `limits.progress_capacity` undelivered updates, each nested at most
/// `limits.max_output_depth` deep.
pub(crate) fn progress_queue(limits: &Limits) -> (ProgressSender, ProgressReceiver) {
    let queue = Arc::new(Queue {
        capacity: limits.progress_capacity,
        max_depth: limits.max_output_depth,
        state: AtomicU8::new(OPEN_EMPTY),
        updates: Mutex::new(Updates::default()),
        arrived: Notify::new(),
    });
    (
        ProgressSender(Arc::clone(&queue)),
        ProgressReceiver { queue },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn queue(capacity: usize) -> (ProgressSender, ProgressReceiver) {
        progress_queue(&Limits {
            progress_capacity: capacity,
            max_output_depth: 2,
            ..Limits::default()
        })
    }

    fn update(n: u64) -> ProgressUpdate {
        ProgressUpdate {
            progress: json!(n),
            metadata: None,
        }
    }

    #[test]
    fn full_queues_drop_new_updates_and_closed_queues_refuse_all() {
        let (sender, receiver) = queue(2);
        assert!(sender.try_send(update(1)));
        assert!(sender.try_send(update(2)));
        assert!(!sender.try_send(update(3)));
        let closed = receiver.close();
        let drained: Vec<_> = closed.queued.into_iter().map(|u| u.progress).collect();
        assert_eq!(drained, [json!(1), json!(2)]);
        assert_eq!(closed.dropped, 1);
        assert!(!sender.try_send(update(4)));
    }

    #[test]
    fn updates_nested_too_deep_are_dropped_and_counted() {
        let (sender, receiver) = queue(8);
        let deep = |value| ProgressUpdate {
            progress: json!(1),
            metadata: Some(value),
        };
        assert!(sender.try_send(deep(json!([[1]]))));
        assert!(!sender.try_send(deep(json!([[[1]]]))));
        assert_eq!(receiver.close().dropped, 1);
    }

    #[test]
    fn drops_while_nothing_is_queued_are_counted_too() {
        let (sender, receiver) = queue(0);
        assert!(!sender.try_send(update(1)));
        assert_eq!(receiver.close().dropped, 1);
    }

    #[test]
    fn closing_an_unused_queue_refuses_later_updates() {
        let (sender, receiver) = queue(8);
        assert!(receiver.close().queued.is_empty());
        assert!(!sender.try_send(update(1)));
    }

    #[test]
    fn dropping_the_receiver_closes_the_queue() {
        let (sender, receiver) = queue(8);
        drop(receiver);
        assert!(!sender.try_send(update(1)));
    }

    #[test]
    fn recv_wakes_for_an_update_sent_while_waiting() {
        use std::future::Future;
        use std::task::{Context, Poll, Waker};

        let (sender, receiver) = queue(8);
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
