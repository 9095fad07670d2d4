//! The batch executor under load.
//!
//! 1. `timer_batch/N`: 64 calls that each wait on a 1 ms tokio timer, run `N` at a time. The ideal
//!    for `N` is `ceil(64 / N)` times the latency of one call, measured in this same run
//!    (`timer_batch/one_call`), so timer rounding cancels out. A summary printed at the end gives
//!    measured / ideal for each `N` (the target is an efficiency of at least 0.9 at `N = 8`).
//! 2. `overhead/…`: 64 calls of an `add` tool through the batch executor at concurrency 1 against
//!    a plain loop of `dispatch` calls (target: at most 1.2x).
//!
//! Run with `cargo bench --bench run_batch`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use prism::run::BatchExecutor;
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

const CALLS: usize = 64;
const CONCURRENCY: [usize; 4] = [1, 4, 8, 16];

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

fn sleeper() -> Dispatcher {
    let sleep = ToolDefinition::builder("sleep")
        .parameters(json!({"type": "object"}))
        .run(|_args: Value, _ctx| async {
            tokio::time::sleep(Duration::from_millis(1)).await;
            Ok(Value::Null)
        });
    Dispatcher::builder(ToolRegistry::from_iter([sleep])).build()
}

fn adder() -> Dispatcher {
    let add = ToolDefinition::builder("add")
        .description("Adds two integers.")
        .parameters(json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        }))
        .run_sync(
            |args: &Value, _| match (args["a"].as_i64(), args["b"].as_i64()) {
                (Some(a), Some(b)) => Ok(json!(a + b)),
                _ => Err("a and b must be integers".into()),
            },
        );
    Dispatcher::builder(ToolRegistry::from_iter([add])).build()
}

fn calls(name: &str) -> Vec<ToolCall> {
    (0..CALLS)
        .map(|i| ToolCall::new(format!("c{i}"), name, json!({"a": i, "b": 1})))
        .collect()
}

async fn one_sleep(dispatcher: &Dispatcher, ctx: &ToolExecutionContext) {
    let call = ToolCall::new("one", "sleep", json!({}));
    black_box(dispatcher.dispatch(call, ctx).await.ok());
}

async fn sleep_batch(dispatcher: &Dispatcher, ctx: &ToolExecutionContext, concurrency: usize) {
    let outcome = BatchExecutor::new(concurrency)
        .run(dispatcher, calls("sleep"), ctx)
        .await;
    black_box(outcome);
}

fn timer_batch(c: &mut Criterion) {
    let rt = runtime();
    let dispatcher = sleeper();
    let ctx = ToolExecutionContext::new();
    let mut group = c.benchmark_group("timer_batch");
    group.sample_size(20);
    group.bench_function("one_call", |b| {
        b.to_async(&rt).iter(|| one_sleep(&dispatcher, &ctx))
    });
    for concurrency in CONCURRENCY {
        group.bench_with_input(
            BenchmarkId::from_parameter(concurrency),
            &concurrency,
            |b, &concurrency| {
                b.to_async(&rt)
                    .iter(|| sleep_batch(&dispatcher, &ctx, concurrency))
            },
        );
    }
    group.finish();
}

fn overhead(c: &mut Criterion) {
    let rt = runtime();
    let dispatcher = adder();
    let ctx = ToolExecutionContext::new();
    let mut group = c.benchmark_group("overhead");
    group.bench_function("plain_dispatch_loop", |b| {
        b.to_async(&rt).iter_batched(
            || calls("add"),
            |calls| async {
                let mut results = Vec::with_capacity(calls.len());
                for call in calls {
                    results.push(dispatcher.dispatch(call, &ctx).await);
                }
                black_box(results)
            },
            criterion::BatchSize::SmallInput,
        )
    });
    group.bench_function("batch_executor_concurrency_1", |b| {
        b.to_async(&rt).iter_batched(
            || calls("add"),
            |calls| async { black_box(BatchExecutor::new(1).run(&dispatcher, calls, &ctx).await) },
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// The median of `samples` timings of `run`.
fn median(rt: &Runtime, samples: usize, mut run: impl AsyncFnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            rt.block_on(run());
            start.elapsed()
        })
        .collect();
    times.sort();
    times[samples / 2]
}

/// Measured against ideal, in one run, so the timer's rounding cancels out.
fn print_efficiency() {
    let rt = runtime();
    let dispatcher = sleeper();
    let ctx = ToolExecutionContext::new();
    let one = median(&rt, 200, async || one_sleep(&dispatcher, &ctx).await);
    println!("\nbatch of {CALLS} timer calls; one call takes {one:.2?} here");
    println!(
        "{:>4} {:>10} {:>10} {:>10}",
        "N", "measured", "ideal", "ideal/measured"
    );
    for concurrency in CONCURRENCY {
        let measured = median(&rt, 15, async || {
            sleep_batch(&dispatcher, &ctx, concurrency).await
        });
        let rounds = CALLS.div_ceil(concurrency) as u32;
        let ideal = one * rounds;
        println!(
            "{concurrency:>4} {measured:>10.2?} {ideal:>10.2?} {:>10.3}",
            ideal.as_secs_f64() / measured.as_secs_f64()
        );
    }

    let dispatcher = adder();
    let plain = median(&rt, 2001, async || {
        for call in calls("add") {
            black_box(dispatcher.dispatch(call, &ctx).await.ok());
        }
    });
    let batch = median(&rt, 2001, async || {
        black_box(
            BatchExecutor::new(1)
                .run(&dispatcher, calls("add"), &ctx)
                .await,
        );
    });
    println!(
        "\n{CALLS} add calls: plain loop {plain:.2?}, batch executor (N=1) {batch:.2?}, ratio {:.3}",
        batch.as_secs_f64() / plain.as_secs_f64()
    );
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    timer_batch(&mut criterion);
    overhead(&mut criterion);
    criterion.final_summary();
    // `cargo test --benches` runs each benchmark once as a smoke test; the summary is for real runs.
    if std::env::args().any(|arg| arg == "--bench") {
        print_efficiency();
    }
}
