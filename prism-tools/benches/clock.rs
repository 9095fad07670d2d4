//! The cost of one reading of the default clock, against the operating system's wall clock it is
//! anchored to. The dispatcher reads its clock twice per observed call (the started and finished
//! times of events and ledger rows), so this cost counts twice in every such call.
//!
//! Run with `cargo bench -p prism-tools --bench clock`.

use std::hint::black_box;
use std::time::{SystemTime, UNIX_EPOCH};

use criterion::{Criterion, criterion_group, criterion_main};
use prism_tools::{Clock, SystemClock};

fn readings(c: &mut Criterion) {
    let mut group = c.benchmark_group("clock");
    group.bench_function("SystemClock.now_millis()", |b| {
        b.iter(|| black_box(SystemClock).now_millis())
    });
    // Through a trait object, as the dispatcher holds its clock.
    let shared: &dyn Clock = &SystemClock;
    group.bench_function("dyn Clock now_millis()", |b| {
        b.iter(|| black_box(shared).now_millis())
    });
    group.bench_function("SystemTime::now() since the epoch", |b| {
        b.iter(|| SystemTime::now().duration_since(UNIX_EPOCH).ok())
    });
    group.finish();
}

criterion_group!(benches, readings);
criterion_main!(benches);
