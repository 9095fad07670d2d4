//! The spans a host's tracing subscriber sees: `execute_tool {name}` per dispatch and, with the
//! HTTP providers, `chat {model}` per provider turn, each with OpenTelemetry's GenAI attribute
//! names; tool arguments and results only when the host enables the content target.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

#[cfg(feature = "openai")]
mod http_support;

use prism::semconv;
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolError, ToolExecutionContext, ToolRegistry};
use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

/// A span's name and the fields recorded on it.
type Captured = (String, BTreeMap<String, String>);

/// Every span with the fields recorded on it, in creation order.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S>
    for Spans
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.0.lock().unwrap();
        fields.insert("#id".into(), id.into_u64().to_string());
        spans.push((attrs.metadata().name().to_owned(), fields));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        let key = id.into_u64().to_string();
        if let Some((_, fields)) = spans.iter_mut().rev().find(|(_, f)| f["#id"] == key) {
            values.record(&mut Fields(fields));
        }
    }
}

impl Spans {
    fn named(&self, name: &str) -> Vec<BTreeMap<String, String>> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(span, _)| span == name)
            .map(|(_, fields)| {
                let mut fields = fields.clone();
                fields.remove("#id");
                fields
            })
            .collect()
    }
}

fn dispatcher() -> Dispatcher {
    let registry = ToolRegistry::from_iter([
        ToolDefinition::builder("add").run_sync(|args: &Value, _| {
            Ok(json!(
                args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)
            ))
        }),
        ToolDefinition::builder("fail")
            .run_sync(|_: &Value, _| Err(ToolError::new("it failed: sk-secret-1"))),
    ]);
    Dispatcher::builder(registry)
        .redactor(prism::dispatch::SecretRedactor::new(["sk-secret-1"]))
        .build()
}

async fn dispatch_two(dispatcher: &Dispatcher) {
    let ctx = ToolExecutionContext::new();
    let call = ToolCall::new("c1", "add", json!({"a": 2, "b": 3, "note": "sk-secret-1"}));
    dispatcher.dispatch(call, &ctx).await.unwrap();
    let call = ToolCall::new("c2", "fail", json!({}));
    dispatcher.dispatch(call, &ctx).await.unwrap();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `dispatch_two` under a subscriber that keeps what `filter` lets through.
fn capture(filter: Targets) -> Spans {
    let spans = Spans::default();
    let subscriber = Registry::default().with(filter).with(spans.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    runtime().block_on(dispatch_two(&dispatcher()));
    spans
}

// One test, its cases in sequence: `tracing` caches which callsites are enabled per process,
// and thread-local subscribers of parallel tests would disagree about it.
#[test]
fn dispatch_spans() {
    without_a_subscriber_nothing_is_recorded_and_dispatch_still_answers();
    each_dispatch_is_an_execute_tool_span_without_content_by_default();
    the_content_target_adds_redacted_arguments_and_results();
    a_requested_tool_name_and_a_call_id_of_any_length_are_cut_in_the_span();
    #[cfg(feature = "openai")]
    chat::each_provider_turn_is_a_chat_span_with_usage_and_finish_reason();
}

fn each_dispatch_is_an_execute_tool_span_without_content_by_default() {
    let spans = capture(Targets::new().with_target("prism_tools", tracing::Level::INFO));
    let tools = spans.named("execute_tool");
    let expected = |name: &str, id: &str| {
        BTreeMap::from([
            (
                semconv::OTEL_NAME.to_owned(),
                format!("execute_tool {name}"),
            ),
            (
                semconv::GEN_AI_OPERATION_NAME.to_owned(),
                "execute_tool".to_owned(),
            ),
            (semconv::GEN_AI_TOOL_NAME.to_owned(), name.to_owned()),
            (semconv::GEN_AI_TOOL_CALL_ID.to_owned(), id.to_owned()),
        ])
    };
    let mut failed = expected("fail", "c2");
    failed.insert(semconv::ERROR_TYPE.to_owned(), "tool_error".to_owned());
    assert_eq!(tools, [expected("add", "c1"), failed]);
}

fn the_content_target_adds_redacted_arguments_and_results() {
    let spans = capture(
        Targets::new()
            .with_target("prism_tools", tracing::Level::INFO)
            .with_target(semconv::CONTENT_TARGET, tracing::Level::TRACE),
    );
    let tools = spans.named("execute_tool");
    assert_eq!(
        tools[0][semconv::GEN_AI_TOOL_CALL_ARGUMENTS],
        r#"{"a":2,"b":3,"note":"[REDACTED]"}"#
    );
    assert_eq!(tools[0][semconv::GEN_AI_TOOL_CALL_RESULT], "5");
    let failure = &tools[1][semconv::GEN_AI_TOOL_CALL_RESULT];
    assert!(
        failure.contains("[REDACTED]") && !failure.contains("sk-secret-1"),
        "{failure}"
    );
}

fn a_requested_tool_name_and_a_call_id_of_any_length_are_cut_in_the_span() {
    let spans = Spans::default();
    let filter = Targets::new().with_target("prism_tools", tracing::Level::INFO);
    let subscriber = Registry::default().with(filter).with(spans.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    let name = "x".repeat(1024 * 1024);
    runtime().block_on(async {
        // The call id too: the provider or the model chose it.
        let call = ToolCall::new("c".repeat(1024 * 1024), name, json!({}));
        let ctx = ToolExecutionContext::new();
        dispatcher().dispatch(call, &ctx).await.unwrap();
    });
    let tools = spans.named("execute_tool");
    for field in [
        semconv::OTEL_NAME,
        semconv::GEN_AI_TOOL_NAME,
        semconv::GEN_AI_TOOL_CALL_ID,
    ] {
        let recorded = &tools[0][field];
        assert!(recorded.len() < 400, "{field}: {} bytes", recorded.len());
    }
}

fn without_a_subscriber_nothing_is_recorded_and_dispatch_still_answers() {
    runtime().block_on(async {
        let result = dispatcher()
            .dispatch(
                ToolCall::new("c1", "add", json!({"a": 1, "b": 1})),
                &ToolExecutionContext::new(),
            )
            .await
            .unwrap();
        assert_eq!(result.as_value(), Some(&json!(2)));
    });
}

#[cfg(feature = "openai")]
mod chat {
    use super::*;
    use crate::http_support::{Reply, Server};
    use prism::provider::http::{HttpProvider, RetryPolicy};
    use prism::{Agent, RunOptions};

    pub fn each_provider_turn_is_a_chat_span_with_usage_and_finish_reason() {
        let spans = Spans::default();
        let subscriber = Registry::default()
            .with(Targets::new().with_target("prism_tools", tracing::Level::INFO))
            .with(spans.clone());
        let _guard = tracing::subscriber::set_default(subscriber);
        runtime().block_on(async {
            let server = Server::start(|_, index| match index {
                0 => Reply::json(401, &json!({"error": {"message": "no key"}})),
                _ => {
                    let chunk = json!({"id": "c1", "model": "m-2025", "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 7, "completion_tokens": 2}});
                    Reply::sse(format!("data: {chunk}\n\ndata: [DONE]\n\n"))
                }
            })
            .await;
            let provider = HttpProvider::openai_compatible(format!("{}/v1", server.base), "m")
                .retry(RetryPolicy::none())
                .build()
                .unwrap();
            let agent = Agent::new(dispatcher(), provider);
            let mut session = agent.session("s");
            session.run("Hello", RunOptions::new()).await.unwrap_err();
            session.run("Hello", RunOptions::new()).await.unwrap();
        });
        let base = BTreeMap::from([
            (semconv::OTEL_NAME.to_owned(), "chat m".to_owned()),
            (semconv::GEN_AI_OPERATION_NAME.to_owned(), "chat".to_owned()),
            (
                semconv::GEN_AI_PROVIDER_NAME.to_owned(),
                "openai".to_owned(),
            ),
            (semconv::GEN_AI_REQUEST_MODEL.to_owned(), "m".to_owned()),
        ]);
        let mut failed = base.clone();
        failed.insert(semconv::ERROR_TYPE.to_owned(), "authentication".to_owned());
        let mut answered = base;
        for (key, value) in [
            (semconv::GEN_AI_RESPONSE_MODEL, "m-2025"),
            (semconv::GEN_AI_RESPONSE_ID, "c1"),
            (semconv::GEN_AI_RESPONSE_FINISH_REASONS, r#"["end_turn"]"#),
            (semconv::GEN_AI_USAGE_INPUT_TOKENS, "7"),
            (semconv::GEN_AI_USAGE_OUTPUT_TOKENS, "2"),
        ] {
            answered.insert(key.to_owned(), value.to_owned());
        }
        assert_eq!(spans.named("chat"), [failed, answered]);
    }
}
