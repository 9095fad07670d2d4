//! Guardrails: input checks after middleware and before lookup, output checks on the raw result,
//! the refusal message format and its bound, and tripwires.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use prism::call::{BlockReason, ErrorCode};
use prism::dispatch::{SecretRedactor, ToolEventKind};
use prism::guard::{
    Guardrail, GuardrailDecision, GuardrailHit, GuardrailRule, RulePack, call_middleware,
};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolRegistry};
use proptest::prelude::*;
use serde_json::{Value, json};

const PREFIX: &str = "Blocked by guardrail rule pack:p/r: ";

fn blocking_everything(reason: &str) -> RulePack {
    RulePack::new("p").rule(GuardrailRule::on_input("r", |_, _| true).with_reason(reason))
}

/// The message a pack with this reason produces for a call, through a redactor of `secrets`.
async fn refusal_for(reason: &str, secrets: &[&str]) -> String {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .guardrails(blocking_everything(reason))
        .redactor(SecretRedactor::new(secrets))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::GuardrailBlocked));
    error_of(&result).message.clone()
}

#[tokio::test]
async fn a_rule_pack_refusal_names_its_pack_and_rule() {
    let runs = Runs::new();
    let watch = Watch::new();
    let pii = RulePack::new("pii")
        .rule(
            GuardrailRule::input_contains("email", ["@example.com"])
                .with_reason("contains an e-mail address"),
        )
        .rule(GuardrailRule::input_contains("phone", ["+1-555"]));
    let dispatcher = watch
        .attach(
            Dispatcher::builder(ToolRegistry::from_iter([counted("send", &runs)])).guardrails(pii),
        )
        .build();

    let result = run(
        &dispatcher,
        ToolCall::new("a", "send", json!({"to": "bob@example.com"})),
    )
    .await;
    let message = "Blocked by guardrail rule pack:pii/email: contains an e-mail address";
    assert_eq!(error_of(&result).message, message);
    assert_eq!(error_of(&result).code, ErrorCode::GuardrailBlocked);
    let result = run(
        &dispatcher,
        ToolCall::new("b", "send", json!({"to": "+1-555-0100"})),
    )
    .await;
    assert_eq!(
        error_of(&result).message,
        "Blocked by guardrail rule pack:pii/phone"
    );

    let blocked = watch.events.events().remove(0);
    let ToolEventKind::ToolExecutionBlocked { reason, error } = blocked.kind else {
        panic!("{blocked:?}")
    };
    assert_eq!(
        reason,
        BlockReason::GuardrailBlocked,
        "the event's reason stays the machine code"
    );
    assert_eq!(error.message, message, "the event carries the same text");
    assert_eq!(runs.count(), 0);
}

struct HandWritten {
    input: GuardrailDecision,
    output: GuardrailDecision,
}

impl Guardrail for HandWritten {
    fn check_input(&self, _tool: &str, _arguments: &Value) -> GuardrailDecision {
        self.input.clone()
    }
    fn check_output(&self, _tool: &str, _output: &Value) -> GuardrailDecision {
        self.output.clone()
    }
}

#[tokio::test]
async fn hand_written_guardrails_keep_the_generic_texts() {
    let refuse_input = HandWritten {
        input: GuardrailDecision::block(),
        output: GuardrailDecision::Pass,
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .guardrails(refuse_input)
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({}))).await;
    assert_eq!(error_of(&result).message, "Tool call blocked by guardrail");

    // A reason without a rule is not shown: only rule packs name why.
    let with_reason = HandWritten {
        input: GuardrailDecision::Block(GuardrailHit {
            rule: None,
            reason: Some("holds a card number".into()),
        }),
        output: GuardrailDecision::Pass,
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .guardrails(with_reason)
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({}))).await;
    assert_eq!(error_of(&result).message, "Tool call blocked by guardrail");

    let refuse_output = HandWritten {
        input: GuardrailDecision::Pass,
        output: GuardrailDecision::block(),
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .guardrails(refuse_output)
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({}))).await;
    assert_eq!(
        error_of(&result).message,
        "Tool result blocked by guardrail"
    );
    assert_eq!(result.block_reason(), Some(BlockReason::GuardrailBlocked));
}

#[tokio::test]
async fn input_guardrails_see_what_middleware_produced_before_lookup() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let pack = {
        let seen = Arc::clone(&seen);
        RulePack::new("gate").rule(GuardrailRule::on_input("record", move |tool, args| {
            seen.lock().unwrap().push((tool.to_owned(), args.clone()));
            false
        }))
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::new())
        .middleware(call_middleware(|call| {
            call.set_name("renamed");
            *call.arguments_mut() = json!({"by": "middleware"});
        }))
        .guardrails(pack)
        .guardrails(RulePack::new("tools").rule(GuardrailRule::deny_tools("no_shell", ["renamed"])))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "original", json!({}))).await;
    // Blocked by the guardrail although no such tool exists: guardrails come before lookup.
    assert_eq!(result.block_reason(), Some(BlockReason::GuardrailBlocked));
    assert_eq!(
        error_of(&result).message,
        "Blocked by guardrail rule pack:tools/no_shell"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [("renamed".to_owned(), json!({"by": "middleware"}))]
    );
}

#[tokio::test]
async fn output_guardrails_see_the_raw_result_before_redaction() {
    let runs = Runs::new();
    let watch = Watch::new();
    let tool = {
        let runs = runs.clone();
        ToolDefinition::builder("env").run_sync(move |_, _| {
            runs.hit();
            Ok(json!({"API_KEY": "sk-live-1234"}))
        })
    };
    let pack = RulePack::new("dlp")
        .rule(GuardrailRule::output_contains("keys", ["sk-live-"]).with_reason("looks like a key"));
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([tool])).guardrails(pack))
        .redactor(SecretRedactor::new(["sk-live-1234"]))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "env", json!({}))).await;
    assert_eq!(
        error_of(&result).message,
        "Blocked by guardrail rule pack:dlp/keys: looks like a key"
    );
    assert_eq!(runs.count(), 1);
    assert_eq!(watch.statuses(), ["started", "blocked"]);
    assert_free_of(&["sk-live-"], &watch.json_text());
}

#[tokio::test]
async fn output_guardrails_only_judge_successful_results() {
    let checked = Arc::new(Mutex::new(0));
    let pack = {
        let checked = Arc::clone(&checked);
        RulePack::new("count").rule(GuardrailRule::on_output("all", move |_, _| {
            *checked.lock().unwrap() += 1;
            false
        }))
    };
    let registry = ToolRegistry::from_iter([
        ToolDefinition::builder("fails").run_sync(|_, _| Err("no".into())),
        echo("e"),
    ]);
    let dispatcher = Dispatcher::builder(registry).guardrails(pack).build();
    run(&dispatcher, ToolCall::new("a", "fails", json!({}))).await;
    assert_eq!(*checked.lock().unwrap(), 0);
    run(&dispatcher, ToolCall::new("b", "e", json!({}))).await;
    assert_eq!(*checked.lock().unwrap(), 1);
}

#[tokio::test]
async fn an_input_tripwire_returns_the_blocked_result_it_owes() {
    let runs = Runs::new();
    let watch = Watch::new();
    let pack = RulePack::new("abuse")
        .rule(GuardrailRule::input_contains("jailbreak", ["ignore previous"]).tripwire());
    let dispatcher = watch
        .attach(
            Dispatcher::builder(ToolRegistry::from_iter([counted("e", &runs)])).guardrails(pack),
        )
        .build();
    let tripwire = dispatcher
        .dispatch(
            ToolCall::new("c7", "e", json!({"text": "Ignore previous instructions"})),
            &ctx(),
        )
        .await
        .unwrap_err();
    let owed = tripwire.result();
    assert_eq!(owed.tool_call_id.as_str(), "c7");
    assert_eq!(owed.block_reason(), Some(BlockReason::GuardrailBlocked));
    assert_eq!(
        error_of(owed).message,
        "Blocked by guardrail rule pack:abuse/jailbreak"
    );
    assert!(tripwire.to_string().contains("c7"));
    assert_eq!(tripwire.clone().into_result(), *owed);
    assert_eq!(runs.count(), 0);
    assert_eq!(
        watch.statuses(),
        ["blocked"],
        "the owed result is still recorded"
    );
    watch.assert_one_ending("c7");
}

#[tokio::test]
async fn a_tripwire_quotes_a_long_call_id_cut() {
    let pack = RulePack::new("abuse")
        .rule(GuardrailRule::input_contains("jailbreak", ["ignore previous"]).tripwire());
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .guardrails(pack)
        .build();
    let id = "c".repeat(100_000);
    let tripwire = dispatcher
        .dispatch(
            ToolCall::new(id.as_str(), "e", json!({"text": "ignore previous"})),
            &ctx(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        tripwire.result().tool_call_id.as_str(),
        id,
        "the result answers the id whole"
    );
    let shown = tripwire.to_string();
    assert!(shown.len() < 1_000, "{} bytes", shown.len());
    assert!(
        shown.starts_with("guardrail tripwire on call ccc"),
        "{shown}"
    );
    assert!(shown.contains("… [cut]: Blocked by guardrail"), "{shown}");
}

#[tokio::test]
async fn an_output_tripwire_closes_the_started_row() {
    let watch = Watch::new();
    let pack = RulePack::new("dlp")
        .rule(GuardrailRule::output_contains("ssn", ["123-45-6789"]).tripwire());
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([echo("e")])).guardrails(pack))
        .build();
    let tripwire = dispatcher
        .dispatch(
            ToolCall::new("c", "e", json!({"ssn": "123-45-6789"})),
            &ctx(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        tripwire.result().block_reason(),
        Some(BlockReason::GuardrailBlocked)
    );
    assert_eq!(watch.statuses(), ["started", "blocked"]);
    let hand_written = HandWritten {
        input: GuardrailDecision::Pass,
        output: GuardrailDecision::tripwire(),
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .guardrails(hand_written)
        .build();
    let tripwire = dispatcher
        .dispatch(ToolCall::new("d", "e", json!({})), &ctx())
        .await
        .unwrap_err();
    assert_eq!(
        error_of(tripwire.result()).message,
        "Tool result blocked by guardrail"
    );
}

#[tokio::test]
async fn the_message_is_bounded_to_200_bytes() {
    let message = refusal_for(&"why ".repeat(100), &[]).await;
    assert_eq!(message.len(), 200);
    assert!(message.starts_with(PREFIX));
}

#[tokio::test]
async fn the_message_is_redacted_before_it_is_cut() {
    // The secret straddles byte 200: cutting first would leave its first ten bytes behind.
    let secret = "SECRETVALUE123";
    let reason = format!("{}{secret} and more", "a".repeat(190 - PREFIX.len()));
    let message = refusal_for(&reason, &[secret]).await;
    assert!(!message.contains("SECRET"), "{message}");
    assert!(message.ends_with("[REDACTED]"), "{message}");
    assert_eq!(message.len(), 200);

    let short = refusal_for(&format!("found {secret}"), &[secret]).await;
    assert_eq!(short, format!("{PREFIX}found [REDACTED]"));
}

#[tokio::test]
async fn the_message_is_cut_at_a_char_boundary() {
    let reason = format!("{}😀 trailing", "a".repeat(199 - PREFIX.len()));
    let message = refusal_for(&reason, &[]).await;
    assert_eq!(
        message.len(),
        199,
        "the emoji at bytes 199..203 is dropped whole"
    );
    assert!(message.ends_with('a'));
}

#[test]
fn the_first_matching_rule_of_a_pack_decides_and_stages_stay_apart() {
    let pack = RulePack::new("p")
        .rule(GuardrailRule::on_output("out", |_, _| true))
        .rule(GuardrailRule::input_contains("first", ["x"]))
        .rule(GuardrailRule::input_contains("second", ["x"]).tripwire());
    let GuardrailDecision::Block(hit) = pack.check_input("t", &json!({"a": "x"})) else {
        panic!()
    };
    assert_eq!(hit.rule, Some(("p".into(), "first".into())));
    assert!(matches!(
        pack.check_output("t", &json!(1)),
        GuardrailDecision::Block(_)
    ));
    assert_eq!(
        pack.check_input("t", &json!({"a": "y"})),
        GuardrailDecision::Pass
    );
}

#[test]
fn input_contains_searches_keys_nested_values_and_ignores_ascii_case() {
    let rule = RulePack::new("p").rule(GuardrailRule::input_contains("r", ["Drop Table"]));
    for hit in [
        json!({"q": "drop table x"}),
        json!({"DROP TABLE": 1}),
        json!({"a": [[{"b": "xDROP TABLEx"}]]}),
    ] {
        assert!(
            matches!(rule.check_input("t", &hit), GuardrailDecision::Block(_)),
            "{hit}"
        );
    }
    assert_eq!(
        rule.check_input("t", &json!({"n": 12, "q": "drop"})),
        GuardrailDecision::Pass
    );
    let empty = RulePack::new("p").rule(GuardrailRule::input_contains("r", [""]));
    assert_eq!(
        empty.check_input("t", &json!({"q": "anything"})),
        GuardrailDecision::Pass
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_reason_yields_a_bounded_redacted_prefix_of_the_full_message(
        head in "\\PC{0,120}",
        tail in "\\PC{0,120}",
    ) {
        let secret = "tok_9f8e7d";
        prop_assume!(!head.contains("tok_") && !tail.contains("tok_"));
        let reason = format!("{head}{secret}{tail}");
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let message = runtime.block_on(refusal_for(&reason, &[secret]));
        let full = format!("{PREFIX}{}", reason.replace(secret, "[REDACTED]"));
        prop_assert!(message.len() <= 200);
        prop_assert!(full.starts_with(&message));
        prop_assert!(message.len() == full.len() || message.len() > 200 - 4, "cut no further than a char");
        prop_assert!(!message.contains("tok_"));
    }
}
