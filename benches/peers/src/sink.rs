//! An event sink and ledger that count what they receive and keep nothing.
//!
//! The in-memory ledger and collecting sink of `prism-tools` keep every row, so a benchmark that
//! used them would time a growing `Vec` (and its reallocations) as much as the dispatcher. This
//! sink takes each event and row by the same trait calls, looks at it, and counts it.
//!
//! The counts are a relaxed load and store, not an atomic increment: a locked increment costs
//! about as much as a quarter of a bare dispatch on the benchmark machine, and would be timed as
//! the dispatcher's. They are exact when one thread dispatches (every arm but the 8-task one) and
//! may miss increments that race across threads, where nothing reads them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prism_tools::{EventSink, RunLedger, ToolCallRecord, ToolEvent};

#[derive(Default)]
struct Counts {
    events: AtomicU64,
    rows: AtomicU64,
}

/// Counts events and ledger rows; clones share the counts.
#[derive(Clone, Default)]
pub struct CountingSink(Arc<Counts>);

impl CountingSink {
    /// A sink that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Events received so far.
    pub fn events(&self) -> u64 {
        self.0.events.load(Ordering::Relaxed)
    }

    /// Ledger rows received so far.
    pub fn rows(&self) -> u64 {
        self.0.rows.load(Ordering::Relaxed)
    }
}

/// Adds one to `count` without a locked instruction (see the module docs).
fn bump(count: &AtomicU64) {
    count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

impl EventSink for CountingSink {
    fn emit(&self, event: &ToolEvent) {
        std::hint::black_box(event);
        bump(&self.0.events);
    }
}

impl RunLedger for CountingSink {
    fn append(&self, record: &ToolCallRecord) {
        std::hint::black_box(record);
        bump(&self.0.rows);
    }
}
