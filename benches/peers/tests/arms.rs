//! Every arm computes `2 + 3` from the same call before anyone reads its timing, and the full
//! chain runs the MCP round trip's no-op tool.

use prism_bench_peers::floor::Floor;
use prism_bench_peers::prism_arms::{bare_dispatcher, full_chain, run_context};
use prism_bench_peers::rig_arm::RigArm;
use prism_bench_peers::rmcp_arm::RmcpArm;
use prism_bench_peers::sink::CountingSink;
use prism_bench_peers::{add_call, add_call_with_note};
use prism_tools::ToolCall;
use rmcp::model::CallToolResponse;
use serde_json::json;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
}

#[test]
fn floors_add() {
    let floor = Floor::new();
    assert_eq!(floor.call_cloning(add_call()), Ok(json!(5)));
    assert_eq!(floor.call_borrowing(add_call()), Ok(json!(5)));
    let mut unknown = add_call();
    unknown.name = "mul".to_owned();
    assert_eq!(
        floor.call_borrowing(unknown),
        Err("Unknown tool: mul".to_owned())
    );
}

#[test]
fn bare_dispatcher_adds() {
    let result = runtime()
        .block_on(bare_dispatcher().dispatch(add_call(), &run_context()))
        .expect("no guardrail");
    assert_eq!(result.as_value(), Some(&json!(5)));
}

#[test]
fn full_chain_adds_and_reports_every_transition() {
    let sink = CountingSink::new();
    let dispatcher = full_chain(&sink);
    let ctx = run_context();
    let runtime = runtime();
    for call in [add_call(), add_call_with_note()] {
        let result = runtime
            .block_on(dispatcher.dispatch(call, &ctx))
            .expect("no guardrail");
        assert_eq!(result.as_value(), Some(&json!(5)));
    }
    // started and finished, as an event and as a row, for each of the two calls.
    assert_eq!((sink.events(), sink.rows()), (4, 4));
}

#[test]
fn full_chain_runs_the_noop_tool() {
    let sink = CountingSink::new();
    let call = ToolCall::new("call_1", "noop", json!({}));
    let result = runtime()
        .block_on(full_chain(&sink).dispatch(call, &run_context()))
        .expect("no guardrail");
    assert_eq!(result.as_value(), Some(&json!("")));
    assert_eq!((sink.events(), sink.rows()), (2, 2));
}

#[test]
fn full_chain_still_refuses() {
    let sink = CountingSink::new();
    let dispatcher = full_chain(&sink);
    let mut denied = add_call();
    denied.name = "write_file".to_owned();
    let result = runtime()
        .block_on(dispatcher.dispatch(denied, &run_context()))
        .expect("no guardrail");
    assert_eq!(
        result.block_reason().map(|reason| reason.as_str()),
        Some("tool_denied")
    );
    let mut folded = add_call();
    folded.name = "ADD".to_owned();
    let result = runtime()
        .block_on(dispatcher.dispatch(folded, &run_context()))
        .expect("no guardrail");
    assert_eq!(result.as_value(), Some(&json!(5)));
}

#[test]
fn rmcp_router_adds() {
    let runtime = runtime();
    let arm = runtime.block_on(async { RmcpArm::start() });
    let response = runtime
        .block_on(arm.call(add_call()))
        .expect("a tool result");
    let CallToolResponse::Complete(result) = response else {
        panic!("expected a complete result, got {response:?}");
    };
    assert_ne!(result.is_error, Some(true));
    let text = result.content.first().and_then(|content| content.as_text());
    assert_eq!(text.map(|text| text.text.as_str()), Some("5"));
}

#[test]
fn rig_tool_set_adds() {
    let result = runtime().block_on(RigArm::new().call(add_call()));
    assert!(result.is_success(), "{result:?}");
    assert_eq!(result.output().as_json(), Some(&json!(5)));
}
