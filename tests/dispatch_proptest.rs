//! Dispatch over arbitrary calls: any name, any JSON, malformed argument text, renaming
//! middleware, guards that say yes or no, bodies that return, fail or panic. Whatever comes in,
//! dispatch does not panic, answers the call's id exactly once, runs the body exactly when every
//! check passed, and lets no known secret out.

mod common;

use common::*;
use prism::call::ErrorCode;
use prism::dispatch::SecretRedactor;
use prism::guard::{
    GuardrailRule, RulePack, before_execute_fn, call_middleware, permission_fn, trust_fn,
    validator_fn,
};
use prism::registry::{ToolFilter, ToolGrant, ToolScope};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use proptest::prelude::*;
use serde_json::{Value, json};

const SECRETS: [&str; 2] = ["sk-prop-7Q2x", "pw-prop-9Z4y"];
/// Registered tools; the builder's filter denies `denied`, a scoped run only grants `alpha`.
const REGISTERED: [&str; 3] = ["alpha", "beta", "denied"];

/// Text that often carries a secret, alone or inside other text.
fn text() -> impl Strategy<Value = String> {
    let secret = prop::sample::select(SECRETS.to_vec());
    prop_oneof![
        3 => "\\PC{0,10}",
        1 => secret.clone().prop_map(str::to_owned),
        2 => ("\\PC{0,4}", secret, "\\PC{0,4}").prop_map(|(a, s, b)| format!("{a}{s}{b}")),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(text(), inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => prop::collection::btree_map(text(), json_value(), 0..4)
            .prop_map(|map| Value::Object(map.into_iter().collect())),
        1 => json_value(),
    ]
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(REGISTERED.to_vec()).prop_map(str::to_owned),
        1 => text(),
    ]
}

/// A guard's answer: `None` lets the call through, `Some(message)` refuses with that message.
fn verdict() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(0.15, text())
}

#[derive(Clone, Debug)]
enum Body {
    Returns(Value),
    Fails(String),
    Panics(String),
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        3 => json_value().prop_map(Body::Returns),
        1 => text().prop_map(Body::Fails),
        1 => text().prop_map(Body::Panics),
    ]
}

#[derive(Clone, Debug)]
struct Case {
    id: String,
    name: String,
    arguments: Value,
    arguments_error: Option<String>,
    rename: Option<String>,
    scoped: bool,
    guardrail: Option<String>,
    trust: Option<String>,
    permission: Option<String>,
    validator: Option<String>,
    before_execute: Option<String>,
    progress: Option<Value>,
    block_output: bool,
    body: Body,
}

fn case() -> impl Strategy<Value = Case> {
    let call = (
        "[a-z0-9_]{1,12}",
        tool_name(),
        arguments(),
        prop::option::weighted(0.15, text()),
        prop::option::weighted(0.3, tool_name()),
        any::<bool>(),
    );
    let guards = (verdict(), verdict(), verdict(), verdict(), verdict());
    let outcome = (
        prop::option::of(json_value()),
        prop::bool::weighted(0.1),
        body(),
    );
    (call, guards, outcome).prop_map(|(call, guards, outcome)| Case {
        id: call.0,
        name: call.1,
        arguments: call.2,
        arguments_error: call.3,
        rename: call.4,
        scoped: call.5,
        guardrail: guards.0,
        trust: guards.1,
        permission: guards.2,
        validator: guards.3,
        before_execute: guards.4,
        progress: outcome.0,
        block_output: outcome.1,
        body: outcome.2,
    })
}

impl Case {
    /// Whether every check passes, computed from the case alone.
    fn should_run(&self) -> bool {
        let name = self.rename.as_deref().unwrap_or(&self.name);
        self.guardrail.is_none()
            && REGISTERED.contains(&name)
            && name != "denied"
            && (!self.scoped || name == "alpha")
            && self.arguments_error.is_none()
            && self.arguments.is_object()
            && [
                &self.trust,
                &self.permission,
                &self.validator,
                &self.before_execute,
            ]
            .iter()
            .all(|verdict| verdict.is_none())
    }

    fn tool(&self, name: &str, runs: &Runs) -> ToolDefinition {
        let (runs, body, progress) = (runs.clone(), self.body.clone(), self.progress.clone());
        ToolDefinition::builder(name)
            .parameters(object_schema())
            .run_sync(move |_, ctx| {
                runs.hit();
                if let Some(progress) = &progress {
                    ctx.progress(progress.clone());
                }
                match &body {
                    Body::Returns(value) => Ok(value.clone()),
                    Body::Fails(message) => Err(message.clone().into()),
                    Body::Panics(message) => panic!("{message}"),
                }
            })
    }

    fn dispatcher(&self, runs: &Runs, watch: &Watch) -> Dispatcher {
        let answer = |verdict: &Option<String>| {
            let verdict = verdict.clone();
            move || verdict.clone().map_or(Ok(()), |no| Err(no.into()))
        };
        let (trust, permission) = (answer(&self.trust), answer(&self.permission));
        let (validator, before_execute) = (answer(&self.validator), answer(&self.before_execute));
        let rename = self.rename.clone();
        let input_refused = self.guardrail.is_some();
        let block_output = self.block_output;
        let pack = RulePack::new("prop")
            .rule(
                GuardrailRule::on_input("input", move |_, _| input_refused)
                    .with_reason(self.guardrail.clone().unwrap_or_default()),
            )
            .rule(GuardrailRule::on_output("output", move |_, _| block_output));
        let registry = ToolRegistry::from_iter(REGISTERED.map(|name| self.tool(name, runs)));
        watch
            .attach(Dispatcher::builder(registry))
            .middleware(call_middleware(move |call| {
                if let Some(name) = &rename {
                    call.set_name(name.clone());
                }
            }))
            .guardrails(pack)
            .filter(ToolFilter::deny(["denied"]))
            .trust(trust_fn(move |_, _| trust()))
            .permission(permission_fn(move |_, _, _| permission()))
            .validate(validator_fn(move |_, _| validator()))
            .before_execute(before_execute_fn(move |_, _, _| before_execute()))
            .redactor(SecretRedactor::new(SECRETS))
            .build()
    }

    fn call(&self) -> ToolCall {
        ToolCall {
            id: self.id.as_str().into(),
            name: self.name.clone(),
            arguments: self.arguments.clone(),
            arguments_error: self.arguments_error.clone(),
            replay: None,
        }
    }

    fn context(&self) -> ToolExecutionContext {
        match self.scoped {
            true => ctx().with_scope(ToolScope::new(ToolGrant::only(["alpha"]))),
            false => ctx(),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_call_gets_one_clean_result_and_runs_only_when_every_check_passed(case in case()) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (runs, watch) = (Runs::new(), Watch::new());
        let dispatcher = case.dispatcher(&runs, &watch);
        let result = match runtime.block_on(dispatcher.dispatch(case.call(), &case.context())) {
            Ok(result) => result,
            Err(tripwire) => tripwire.into_result(),
        };

        prop_assert_eq!(result.tool_call_id.as_str(), case.id.as_str());
        watch.assert_one_ending(&case.id);

        let ran = runs.count() == 1;
        prop_assert!(runs.count() <= 1);
        prop_assert_eq!(ran, case.should_run(), "result: {:?}", result);
        if !ran {
            prop_assert!(!result.is_success());
            prop_assert!(!watch.statuses().contains(&"started"));
        } else {
            let code = result.error_info().map(|error| error.code.clone());
            let expected = match (&case.body, case.block_output) {
                (Body::Returns(_), false) => None,
                (Body::Returns(_), true) => Some(ErrorCode::GuardrailBlocked),
                (Body::Fails(_), _) => Some(ErrorCode::ToolError),
                (Body::Panics(_), _) => Some(ErrorCode::ToolPanicked),
            };
            prop_assert_eq!(code, expected);
        }

        let everything = format!("{}\n{}", serde_json::to_string(&result).unwrap(), watch.json_text());
        for secret in SECRETS {
            prop_assert!(!everything.contains(secret), "{} leaked: {}", secret, everything);
        }
    }
}

#[test]
fn the_oracle_agrees_with_a_hand_picked_call() {
    // Guards against an oracle that always says "no": a plain call to `alpha` must run.
    let case = Case {
        id: "c".into(),
        name: "alpha".into(),
        arguments: json!({"q": 1}),
        arguments_error: None,
        rename: None,
        scoped: true,
        guardrail: None,
        trust: None,
        permission: None,
        validator: None,
        before_execute: None,
        progress: Some(json!(SECRETS[0])),
        block_output: false,
        body: Body::Returns(json!({"token": SECRETS[1]})),
    };
    assert!(case.should_run());
    let (runs, watch) = (Runs::new(), Watch::new());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = runtime
        .block_on(
            case.dispatcher(&runs, &watch)
                .dispatch(case.call(), &case.context()),
        )
        .unwrap();
    assert_eq!(result.as_value(), Some(&json!({"token": "[REDACTED]"})));
    assert_eq!(watch.statuses(), ["started", "started", "finished"]);
}
