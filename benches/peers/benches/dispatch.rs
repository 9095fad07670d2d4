//! One tool, `add({a, b}) -> a + b`, through every arm; see the crate docs and README.md.
//!
//! Group `add`: every arm on one current-thread runtime, each iteration fed a fresh owned
//! `ToolCall` built outside the timed region (`iter_batched`), results dropped outside it too.
//! Group `concurrent`: the full chain from 8 tasks on a multi-thread runtime, reported as calls/s.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use prism_bench_peers::floor::Floor;
use prism_bench_peers::prism_arms::{bare_dispatcher, full_chain, info_subscriber, run_context};
use prism_bench_peers::rig_arm::RigArm;
use prism_bench_peers::rmcp_arm::RmcpArm;
use prism_bench_peers::sink::CountingSink;
use prism_bench_peers::{add_call, add_call_with_note};
use prism_tools::ToolCall;
use tokio::runtime::{Builder, Runtime};
use tokio::task::JoinSet;

/// Tasks dispatching at once in the concurrent group.
const TASKS: usize = 8;
/// Calls each task makes per iteration of the concurrent group.
const CALLS_PER_TASK: usize = 256;

fn arms(c: &mut Criterion) {
    let runtime = Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    let floor = &Floor::new();
    let bare = &bare_dispatcher();
    let sink = CountingSink::new();
    let chain = &full_chain(&sink);
    let ctx = &run_context();
    let rmcp = &{
        let _entered = runtime.enter();
        RmcpArm::start()
    };
    let rig = &RigArm::new();

    let mut group = c.benchmark_group("add");
    group.bench_function("a1_floor_owned", |b| {
        b.to_async(&runtime).iter_batched(
            add_call,
            |call| async move { floor.call_cloning(call) },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("a2_floor_borrowed", |b| {
        b.to_async(&runtime).iter_batched(
            add_call,
            |call| async move { floor.call_borrowing(call) },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("b_prism_bare", |b| {
        b.to_async(&runtime).iter_batched(
            add_call,
            |call| bare.dispatch(call, ctx),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("c_prism_full_chain", |b| {
        b.to_async(&runtime).iter_batched(
            add_call,
            |call| chain.dispatch(call, ctx),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("c1k_prism_full_chain_1kib", |b| {
        b.to_async(&runtime).iter_batched(
            add_call_with_note,
            |call| chain.dispatch(call, ctx),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("ct_prism_full_chain_tracing", |b| {
        let _subscriber = tracing::dispatcher::set_default(&info_subscriber());
        b.to_async(&runtime).iter_batched(
            add_call,
            |call| chain.dispatch(call, ctx),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("d_rmcp_tool_router", |b| {
        b.to_async(&runtime)
            .iter_batched(add_call, |call| rmcp.call(call), BatchSize::SmallInput)
    });
    group.bench_function("e_rig_tool_set", |b| {
        b.to_async(&runtime)
            .iter_batched(add_call, |call| rig.call(call), BatchSize::SmallInput)
    });
    group.finish();
    black_box((sink.events(), sink.rows()));
}

fn concurrent(c: &mut Criterion) {
    let runtime = Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a multi-thread runtime");
    let sink = CountingSink::new();
    let chain = full_chain(&sink);
    let ctx = run_context();

    let mut group = c.benchmark_group("concurrent");
    group.throughput(Throughput::Elements((TASKS * CALLS_PER_TASK) as u64));
    group.bench_function("c_prism_full_chain_8_tasks", |b| {
        b.to_async(&runtime).iter_batched(
            || {
                (0..TASKS)
                    .map(|_| (0..CALLS_PER_TASK).map(|_| add_call()).collect())
                    .collect::<Vec<Vec<ToolCall>>>()
            },
            |batches| dispatch_from_tasks(&runtime, &chain, &ctx, batches),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// Spawns one task per batch, each dispatching its calls in turn, and waits for all of them.
async fn dispatch_from_tasks(
    runtime: &Runtime,
    dispatcher: &prism_tools::Dispatcher,
    ctx: &prism_tools::ToolExecutionContext,
    batches: Vec<Vec<ToolCall>>,
) -> usize {
    let mut tasks = JoinSet::new();
    for calls in batches {
        let (dispatcher, ctx) = (dispatcher.clone(), ctx.clone());
        tasks.spawn_on(
            async move {
                let mut succeeded = 0;
                for call in calls {
                    if let Ok(result) = dispatcher.dispatch(call, &ctx).await {
                        succeeded += usize::from(result.is_success());
                    }
                }
                succeeded
            },
            runtime.handle(),
        );
    }
    let mut succeeded = 0;
    while let Some(done) = tasks.join_next().await {
        succeeded += done.expect("a dispatching task");
    }
    succeeded
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6))
        .sample_size(100)
}

criterion_group! {
    name = benches;
    config = config();
    targets = arms, concurrent
}
criterion_main!(benches);
