//! Runs one arm of the benchmark in a loop, for profilers (callgrind, perf) rather than criterion.
//!
//! `arm_loop <arm> <calls>` where `<arm>` is one of a1, a2, b, bt, c, c1k, d, e. The calls are built
//! first; only [`timed_loop`] then runs the arm, so a profiler can count just that function:
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='arm_loop::timed_loop' target/release/arm_loop c 10000
//! ```
//!
//! The instructions collected divided by the calls are the arm's cost per call, free of setup and
//! of other load on the machine. Without a profiler it prints the wall-clock time per call, a
//! quick check between criterion runs (the minimum of a few runs is the least disturbed).

use std::process::ExitCode;
use std::time::Instant;

use prism_bench_peers::floor::Floor;
use prism_bench_peers::prism_arms::{
    bare_dispatcher, bare_dispatcher_macro, full_chain, run_context,
};
use prism_bench_peers::rig_arm::RigArm;
use prism_bench_peers::rmcp_arm::RmcpArm;
use prism_bench_peers::sink::CountingSink;
use prism_bench_peers::{add_call, add_call_with_note};
use prism_tools::{Dispatcher, ToolCall, ToolExecutionContext};
use tokio::runtime::Runtime;

const ARMS: &str = "a1, a2, b, bt, c, c1k, d, e";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(arm), Some(calls)) = (args.next(), args.next()) else {
        eprintln!("usage: arm_loop <{ARMS}> <calls>");
        return ExitCode::FAILURE;
    };
    let Ok(calls) = calls.parse::<usize>() else {
        eprintln!("<calls> must be a whole number, not {calls:?}");
        return ExitCode::FAILURE;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    let make: fn() -> ToolCall = if arm == "c1k" {
        add_call_with_note
    } else {
        add_call
    };
    // Calls are made before the loop, as criterion's `iter_batched` does.
    let inputs: Vec<ToolCall> = (0..calls).map(|_| make()).collect();
    let sink = CountingSink::new();
    let arm = match arm.as_str() {
        "a1" => Arm::FloorCloning(Floor::new()),
        "a2" => Arm::FloorBorrowing(Floor::new()),
        "b" => Arm::Prism(bare_dispatcher()),
        "bt" => Arm::Prism(bare_dispatcher_macro()),
        "c" | "c1k" => Arm::Prism(full_chain(&sink)),
        "d" => Arm::Rmcp(Box::new(runtime.block_on(async { RmcpArm::start() }))),
        "e" => Arm::Rig(RigArm::new()),
        other => {
            eprintln!("unknown arm {other:?}; expected one of {ARMS}");
            return ExitCode::FAILURE;
        }
    };
    let ctx = run_context();
    let started = Instant::now();
    let succeeded = timed_loop(&runtime, &arm, &ctx, inputs);
    let elapsed = started.elapsed();
    match succeeded {
        succeeded if succeeded == calls => {
            let per_call = elapsed.as_nanos() as f64 / calls.max(1) as f64;
            println!("{per_call:.1} ns per call");
            ExitCode::SUCCESS
        }
        succeeded => {
            eprintln!("only {succeeded} of {calls} calls succeeded");
            ExitCode::FAILURE
        }
    }
}

/// One arm, ready to be called.
enum Arm {
    FloorCloning(Floor),
    FloorBorrowing(Floor),
    Prism(Dispatcher),
    Rmcp(Box<RmcpArm>),
    Rig(RigArm),
}

/// Runs every call through `arm`; returns how many succeeded. Not inlined, so that profilers can
/// count this function alone.
#[inline(never)]
fn timed_loop(
    runtime: &Runtime,
    arm: &Arm,
    ctx: &ToolExecutionContext,
    calls: Vec<ToolCall>,
) -> usize {
    runtime.block_on(async {
        let mut succeeded = 0usize;
        for call in calls {
            let ok = match arm {
                Arm::FloorCloning(floor) => floor.call_cloning(call).is_ok(),
                Arm::FloorBorrowing(floor) => floor.call_borrowing(call).is_ok(),
                Arm::Prism(dispatcher) => dispatcher
                    .dispatch(call, ctx)
                    .await
                    .is_ok_and(|result| result.is_success()),
                Arm::Rmcp(rmcp) => rmcp.call(call).await.is_ok(),
                Arm::Rig(rig) => rig.call(call).await.is_success(),
            };
            succeeded += usize::from(ok);
        }
        succeeded
    })
}
