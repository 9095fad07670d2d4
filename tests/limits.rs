//! Limits: argument bytes and depth, output bytes. Measured on compact JSON, checked before any
//! guard looks at the arguments, and exact at the boundary.

mod common;

use std::sync::Arc;

use common::*;
use prism::call::{BlockReason, ContentBlock, ErrorCode, ToolOutput};
use prism::dispatch::{Limits, SecretRedactor, ToolEventKind};
use prism::effects::{EffectPolicy, InMemoryEffectStore};
use prism::guard::{
    Guardrail, GuardrailDecision, GuardrailRule, RulePack, call_middleware, trust_fn,
};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolRegistry, ToolResult};
use proptest::prelude::*;
use serde_json::{Value, json};

fn compact_len(value: &Value) -> usize {
    serde_json::to_string(value).unwrap().len()
}

fn limited(limits: Limits) -> Dispatcher {
    Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .limits(limits)
        .build()
}

fn argument_bytes(max: usize) -> Limits {
    Limits {
        max_argument_bytes: max,
        ..Limits::default()
    }
}

/// `{"text": "xxx…"}` with a compact JSON length of exactly `len` bytes.
fn text_of_len(len: usize) -> Value {
    let value = json!({"text": "x".repeat(len - compact_len(&json!({"text": ""})))});
    assert_eq!(compact_len(&value), len);
    value
}

/// Nested arrays, `depth` containers deep: `[[[…]]]`. Built without `json!`, which copies an
/// inner value through `Serialize`, recursing once per level.
fn nested(depth: usize) -> Value {
    (1..depth).fold(json!([]), |inner, _| Value::Array(vec![inner]))
}

async fn accepts(dispatcher: &Dispatcher, arguments: Value) -> Result<(), String> {
    let result = run(dispatcher, ToolCall::new("c", "e", arguments)).await;
    match result.block_reason() {
        None => Ok(()),
        Some(BlockReason::InvalidArguments) => Err(error_of(&result).message.clone()),
        Some(other) => panic!("unexpected refusal {other:?}"),
    }
}

#[test]
fn defaults_are_sane() {
    let limits = Limits::default();
    assert_eq!(limits.max_argument_bytes, 1024 * 1024);
    assert_eq!(limits.max_argument_depth, 64);
    assert_eq!(limits.max_output_bytes, 4 * 1024 * 1024);
    assert_eq!(limits.max_output_depth, Limits::MAX_DEPTH);
    assert_eq!(limits.progress_capacity, 64);
}

#[tokio::test]
async fn arguments_at_the_byte_limit_pass_and_one_byte_more_is_refused() {
    let dispatcher = limited(argument_bytes(100));
    assert_eq!(accepts(&dispatcher, text_of_len(99)).await, Ok(()));
    assert_eq!(accepts(&dispatcher, text_of_len(100)).await, Ok(()));
    let refused = accepts(&dispatcher, text_of_len(101)).await.unwrap_err();
    assert_eq!(refused, "The arguments for tool e exceed 100 bytes");
}

#[tokio::test]
async fn numbers_and_escapes_count_with_their_full_length() {
    let dispatcher = limited(argument_bytes(100));
    let long_numbers = json!({"n": [
        1.2345678901234567e300,
        -1.2345678901234567e-300,
        12345678901234567890u64,
        -1234567890123456789i64,
        9.87654321e-100
    ]});
    assert!(compact_len(&long_numbers) > 100);
    assert!(accepts(&dispatcher, long_numbers).await.is_err());

    let quotes = json!({"q": "\"".repeat(50)});
    assert!(
        compact_len(&quotes) > 100,
        "each quote is escaped to two bytes"
    );
    assert!(accepts(&dispatcher, quotes).await.is_err());
}

#[tokio::test]
async fn arguments_at_the_depth_limit_pass_and_one_level_more_is_refused() {
    let dispatcher = limited(Limits {
        max_argument_depth: 5,
        ..Limits::default()
    });
    assert_eq!(accepts(&dispatcher, json!({"a": nested(4)})).await, Ok(()));
    let refused = accepts(&dispatcher, json!({"a": nested(5)}))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        "The arguments for tool e nest deeper than 5 levels"
    );

    let defaults = limited(Limits::default());
    assert_eq!(accepts(&defaults, json!({"a": nested(63)})).await, Ok(()));
    assert!(accepts(&defaults, json!({"a": nested(64)})).await.is_err());
}

#[tokio::test]
async fn oversized_arguments_are_refused_before_any_guard_sees_them() {
    let trace = Trace::new();
    let seen = trace.clone();
    let runs = Runs::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([counted("e", &runs)]))
        .middleware(call_middleware(|call| {
            *call.arguments_mut() = json!({"padding": "p".repeat(200)});
        }))
        .trust(trust_fn(move |_, _| {
            seen.push("trust");
            Ok(())
        }))
        .limits(argument_bytes(100))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({}))).await;
    assert_eq!(
        result.block_reason(),
        Some(BlockReason::InvalidArguments),
        "checked after middleware"
    );
    assert!(trace.entries().is_empty());
    assert_eq!(runs.count(), 0);
}

fn producing(output: Value) -> ToolDefinition {
    ToolDefinition::builder("big").run_sync(move |_, _| Ok(output.clone()))
}

/// An output of `value` and a text block of `text`.
fn producing_content(value: Value, text: String) -> ToolDefinition {
    ToolDefinition::builder("big").run_output_sync(move |_, _| {
        Ok(ToolOutput::new(value.clone()).with_content([ContentBlock::text(text.clone())]))
    })
}

/// The compact JSON length of an output, as the output bound counts it.
fn output_len(value: &Value, content: &[ContentBlock]) -> usize {
    let blocks = if content.is_empty() {
        0
    } else {
        serde_json::to_string(content).unwrap().len()
    };
    compact_len(value) + blocks
}

#[tokio::test]
async fn an_output_that_redaction_lengthens_past_the_byte_limit_is_an_error() {
    const LIMIT: usize = 1024;
    // A secret shorter than the marker that replaces it: each copy grows the output.
    const PIN: &str = "4821";
    let copies = |bytes: usize| format!("{PIN} ").repeat(bytes / (PIN.len() + 1));
    let in_value = text_of_len(LIMIT);
    let in_value = json!({"text": in_value["text"].as_str().unwrap().replace("xxxxx", "4821 ")});
    let in_block = copies(LIMIT - 100);
    for (tool, raw) in [
        (producing(in_value.clone()), output_len(&in_value, &[])),
        (
            producing_content(Value::Null, in_block.clone()),
            output_len(&Value::Null, &[ContentBlock::text(in_block.clone())]),
        ),
    ] {
        assert!(raw <= LIMIT, "the tool's own output fits: {raw} bytes");
        let watch = Watch::new();
        let dispatcher = watch
            .attach(Dispatcher::builder(ToolRegistry::from_iter([tool])))
            .redactor(SecretRedactor::new([PIN]))
            .limits(Limits {
                max_output_bytes: LIMIT,
                ..Limits::default()
            })
            .build();
        let result = run(&dispatcher, ToolCall::new("c", "big", json!({}))).await;
        let error = error_of(&result);
        assert_eq!(error.code, ErrorCode::OutputTooLarge);
        assert_eq!(error.message, "The output of tool big exceeds 1024 bytes");
        assert!(result.content().is_empty());
        assert_eq!(watch.statuses(), ["started", "error"]);
        watch.assert_one_ending("c");
        for event in watch.events.events() {
            if let ToolEventKind::ToolExecutionFinished { value } = &event.kind {
                panic!("a finished event of {} bytes", compact_len(value));
            }
        }
        assert_free_of(&[PIN], &watch.json_text());
        assert!(
            watch.json_text().len() < 2 * LIMIT,
            "{} bytes",
            watch.json_text().len()
        );
    }

    // A secret longer than the marker shortens the output, which is kept, redacted.
    const KEY: &str = "sk-live-0123456789";
    let output = json!({"text": format!("{KEY} ").repeat(50)});
    assert!(compact_len(&output) <= LIMIT);
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([producing(
            output,
        )])))
        .redactor(SecretRedactor::new([KEY]))
        .limits(Limits {
            max_output_bytes: LIMIT,
            ..Limits::default()
        })
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "big", json!({}))).await;
    let value = result.as_value().expect("the redacted output fits");
    assert!(compact_len(value) <= LIMIT);
    assert_eq!(watch.statuses(), ["started", "finished"]);
    assert_free_of(&[KEY], &watch.json_text());
}

#[tokio::test]
async fn a_recorded_output_that_redaction_lengthens_past_the_byte_limit_replays_as_an_error() {
    const LIMIT: usize = 1024;
    const PIN: &str = "4821";
    let output = text_of_len(LIMIT);
    let output = json!({"text": output["text"].as_str().unwrap().replace("xxxxx", "4821 ")});
    let store = Arc::new(InMemoryEffectStore::new());
    let tool = || {
        let output = output.clone();
        ToolDefinition::builder("big")
            .effect(EffectPolicy::default())
            .run_sync(move |_, _| Ok(output.clone()))
    };
    let dispatcher = |secrets: &[&str], watch: &Watch| {
        watch
            .attach(Dispatcher::builder(ToolRegistry::from_iter([tool()])))
            .effects(Arc::clone(&store))
            .redactor(SecretRedactor::new(secrets))
            .limits(Limits {
                max_output_bytes: LIMIT,
                ..Limits::default()
            })
            .build()
    };
    // Recorded while the pin was no secret: the output fits as it is.
    let first = run(
        &dispatcher(&[], &Watch::new()),
        ToolCall::new("c1", "big", json!({})),
    )
    .await;
    assert_eq!(first.as_value(), Some(&output));

    // Replayed once it is one: redacted, it would not fit.
    let watch = Watch::new();
    let again = run(
        &dispatcher(&[PIN], &watch),
        ToolCall::new("c2", "big", json!({})),
    )
    .await;
    assert_eq!(error_of(&again).code, ErrorCode::OutputTooLarge);
    assert_eq!(watch.statuses(), ["error"]);
    assert_free_of(&[PIN], &watch.json_text());
}

#[tokio::test]
async fn outputs_at_the_byte_limit_pass_and_one_byte_more_is_an_error() {
    for (len, fits) in [(64, true), (65, false)] {
        let watch = Watch::new();
        let output = text_of_len(len);
        let dispatcher = watch
            .attach(Dispatcher::builder(ToolRegistry::from_iter([producing(
                output.clone(),
            )])))
            .limits(Limits {
                max_output_bytes: 64,
                ..Limits::default()
            })
            .build();
        let result = run(&dispatcher, ToolCall::new("c", "big", json!({}))).await;
        if fits {
            assert_eq!(result.as_value(), Some(&output));
        } else {
            let error = error_of(&result);
            assert_eq!(error.code, ErrorCode::OutputTooLarge);
            assert_eq!(error.message, "The output of tool big exceeds 64 bytes");
            assert_eq!(watch.statuses(), ["started", "error"]);
            assert!(
                !watch.json_text().contains("xxxxxxxx"),
                "the output goes nowhere"
            );
        }
    }
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |n| n.is_finite())
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        "[\"\\\\\\n\\t\\u{1}a-z]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map("\\PC{0,6}", inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn the_byte_limit_is_the_compact_json_length(inner in any_json(), slack in 0usize..3) {
        let arguments = json!({"v": inner});
        let len = compact_len(&arguments);
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for max in [len.saturating_sub(slack), len + slack] {
            let dispatcher = limited(argument_bytes(max));
            let accepted = runtime.block_on(accepts(&dispatcher, arguments.clone())).is_ok();
            prop_assert_eq!(accepted, len <= max, "len {} max {}", len, max);
        }
    }
}

/// Runs `work` on a thread with a 2 MiB stack, as much as a Tokio worker has.
fn on_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(work)
        .unwrap()
        .join()
        .expect("the work finished without overflowing its stack")
}

/// Dispatches `call` on a 2 MiB stack, as a Tokio worker would.
fn dispatch_on_small_stack(dispatcher: Dispatcher, call: ToolCall) -> ToolResult {
    on_small_stack(move || {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(run(&dispatcher, call))
    })
}

/// A guardrail that records how many bytes of arguments and outputs it was handed.
#[derive(Clone, Default)]
struct Measuring(std::sync::Arc<std::sync::Mutex<Vec<usize>>>);

impl Guardrail for Measuring {
    fn check_input(&self, _tool: &str, arguments: &Value) -> GuardrailDecision {
        self.0.lock().unwrap().push(compact_len(arguments));
        GuardrailDecision::Pass
    }
}

#[tokio::test]
async fn guardrails_only_see_arguments_within_the_limits() {
    let seen = Measuring::default();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .guardrails(seen.clone())
        .limits(argument_bytes(100))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", text_of_len(101))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::InvalidArguments));
    let result = run(&dispatcher, ToolCall::new("c", "e", text_of_len(100))).await;
    assert_eq!(result.block_reason(), None);
    assert_eq!(
        *seen.0.lock().unwrap(),
        [100],
        "only the call within the limits"
    );
}

#[test]
fn the_rule_pack_never_sees_arguments_nested_past_the_limit() {
    let pack = RulePack::new("shell")
        .rule(GuardrailRule::input_contains("rm", ["rm -rf"]).with_reason("recursive delete"));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .guardrails(pack)
        .build();
    let arguments = Value::Object([("a".to_owned(), nested(8_000))].into_iter().collect());
    let result = dispatch_on_small_stack(dispatcher, ToolCall::new("c", "e", arguments));
    assert_eq!(result.block_reason(), Some(BlockReason::InvalidArguments));
}

#[test]
fn the_rule_pack_walks_any_depth_on_a_small_stack() {
    let pack = RulePack::new("shell")
        .rule(GuardrailRule::input_contains("rm", ["rm -rf"]).with_reason("recursive delete"));
    let decided = on_small_stack(move || {
        let arguments =
            (0..100_000).fold(json!(["rm -rf /"]), |inner, _| Value::Array(vec![inner]));
        let blocked = matches!(
            pack.check_input("run", &arguments),
            GuardrailDecision::Block(_)
        );
        dismantle(arguments);
        blocked
    });
    assert!(decided);
}

/// Drops a value of any depth without recursing: serde_json's own destructor recurses once per
/// level, which a 100,000-deep value would overflow the stack with.
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, item)| item)),
            _ => {}
        }
    }
}

#[test]
fn outputs_nested_past_the_output_depth_limit_are_an_error() {
    for (depth, fits) in [(5, true), (6, false)] {
        let watch = Watch::new();
        let dispatcher = watch
            .attach(Dispatcher::builder(ToolRegistry::from_iter([producing(
                nested(depth),
            )])))
            .limits(Limits {
                max_output_depth: 5,
                ..Limits::default()
            })
            .build();
        let result = dispatch_on_small_stack(dispatcher, ToolCall::new("c", "big", json!({})));
        if fits {
            assert_eq!(result.as_value(), Some(&nested(depth)));
        } else {
            let error = error_of(&result);
            assert_eq!(error.code, ErrorCode::OutputTooLarge);
            assert_eq!(
                error.message,
                "The output of tool big nests deeper than 5 levels"
            );
            assert_eq!(watch.statuses(), ["started", "error"]);
        }
    }
}

#[test]
fn a_tool_output_of_any_depth_is_refused_on_a_small_stack() {
    let tool = ToolDefinition::builder("deep").run_sync(|_, _| Ok(nested(100_000)));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    let result = dispatch_on_small_stack(dispatcher, ToolCall::new("c", "deep", json!({})));
    assert_eq!(error_of(&result).code, ErrorCode::OutputTooLarge);
}

#[test]
fn depth_limits_are_capped_at_what_storage_reads_back() {
    let limits = Limits {
        max_argument_depth: 10_000,
        max_output_depth: 10_000,
        ..Limits::default()
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::new())
        .limits(limits)
        .build();
    let shown = format!("{dispatcher:?}");
    assert!(
        shown.contains(&format!("max_output_depth: {}", Limits::MAX_DEPTH)),
        "{shown}"
    );
    assert!(Limits::default().max_output_depth <= Limits::MAX_DEPTH);
}

#[tokio::test]
async fn an_unparsable_arguments_message_is_redacted_then_cut() {
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([echo("e")])))
        .redactor(SecretRedactor::new(["sk-secret-key"]))
        .build();
    // The secret straddles where the message is cut: cut first, its head would survive.
    let parser_message = format!(
        "{} sk-secret-key {}",
        "a".repeat(195),
        "x".repeat(10 * 1024 * 1024)
    );
    let result = run(&dispatcher, ToolCall::malformed("c", "e", parser_message)).await;
    let error = error_of(&result);
    assert_eq!(error.code, ErrorCode::InvalidJsonArguments);
    assert!(error.message.len() < 400, "{} bytes", error.message.len());
    assert!(error.message.ends_with("… [cut]"), "{}", error.message);
    assert!(!error.message.contains("sk-s"), "{}", error.message);
    assert!(watch.json_text().len() < 4_000);
    assert_free_of(&["sk-s"], &watch.json_text());
}

#[tokio::test]
async fn a_requested_tool_name_of_any_length_is_bounded_everywhere_it_is_reported() {
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([echo("e")])))
        .redactor(SecretRedactor::new(["sk-secret-key"]))
        .build();
    let name = format!(
        "{} sk-secret-key {}",
        "n".repeat(120),
        "x".repeat(1024 * 1024)
    );
    let result = run(&dispatcher, ToolCall::new("c", name.clone(), json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::UnknownTool));
    assert!(result.name.len() < 400, "{} bytes", result.name.len());
    assert!(!result.name.contains("sk-s"), "{}", result.name);
    let message = &error_of(&result).message;
    assert!(message.len() < 400, "{} bytes", message.len());
    assert!(
        watch.json_text().len() < 4_000,
        "{} bytes",
        watch.json_text().len()
    );
    assert_free_of(&["sk-s"], &watch.json_text());

    // Arguments over their bound are refused before lookup, with the name still bounded.
    let tight = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([echo("e")])))
        .limits(argument_bytes(8))
        .build();
    let result = run(&tight, ToolCall::new("c2", name, text_of_len(64))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::InvalidArguments));
    assert!(result.name.len() < 400, "{} bytes", result.name.len());
    assert!(error_of(&result).message.len() < 400);
}
