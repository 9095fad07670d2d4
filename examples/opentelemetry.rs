//! Tracing export through OpenTelemetry: every dispatch is an `execute_tool {name}` span and,
//! with an HTTP provider, every provider turn a `chat {model}` span, each carrying the GenAI
//! semantic-convention attributes (`gen_ai.tool.name`, `gen_ai.tool.call.id`, `error.type`,
//! `gen_ai.usage.input_tokens`…). `tracing-opentelemetry` turns them into OpenTelemetry spans;
//! here they go to standard output, and a real host puts its OTLP exporter in the same place.
//!
//! The model is scripted so the example runs anywhere: it calls two tools, one of which fails.
//! Tool arguments and results are left out unless the host opts in, as this example does with
//! the `prism::gen_ai::content` target.
//!
//! Run it with `cargo run --example opentelemetry`.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use prism::run::ScriptedProvider;
use prism::{
    Agent, Dispatcher, ProviderResponse, RunOptions, ToolCall, ToolDefinition, ToolError,
    ToolRegistry, semconv,
};
use serde_json::{Value, json};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let exporter = opentelemetry_stdout::SpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter)
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("prism-example"));
    // Prism's spans at INFO, and tool arguments and results (redacted) because we ask for them.
    let filter = Targets::new()
        .with_target("prism_tools", tracing::Level::INFO)
        .with_target(semconv::CONTENT_TARGET, tracing::Level::TRACE);
    let subscriber = tracing_subscriber::registry().with(filter).with(layer);
    tracing::subscriber::set_global_default(subscriber)?;

    let registry = ToolRegistry::from_iter([ToolDefinition::builder("add")
        .description("Adds two integers.")
        .run_sync(|args: &Value, _| {
            let (a, b) = (args["a"].as_i64(), args["b"].as_i64());
            match (a, b) {
                (Some(a), Some(b)) => Ok(json!(a + b)),
                _ => Err(ToolError::new("a and b must be integers")),
            }
        })]);
    let model = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("call_1", "add", json!({"a": 2, "b": 3})),
            ToolCall::new("call_2", "add", json!({"a": "two"})),
        ]),
        ProviderResponse::text("2 + 3 = 5; the second call was wrong."),
    ]);
    let agent = Agent::new(Dispatcher::builder(registry).build(), model);
    let outcome = agent
        .session("s1")
        .run("Add some numbers.", RunOptions::new())
        .await?;
    println!("The model said: {}\n", outcome.summary().text);

    // Flushes the spans still buffered (the simple exporter has written them already).
    provider.shutdown()?;
    Ok(())
}
