//! Chat: an interactive agent with the quickstart's `#[tool]` tools, against a real model.
//!
//! The model is named by environment variables:
//!
//! | variable | meaning |
//! | --- | --- |
//! | `PRISM_PROVIDER` | `openai-compatible` (any local or hosted OpenAI-compatible server), `openai`, `openai-responses`, `anthropic` or `gemini` |
//! | `PRISM_MODEL` | the model's name |
//! | `PRISM_BASE_URL` | the API's base URL (required for `openai-compatible`, optional otherwise) |
//! | `PRISM_API_KEY` | the key (optional for a local server; otherwise the provider's own variable: `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`) |
//!
//! Without them it prints what to set and exits. Run it with
//! `cargo run --example chat --features openai,anthropic,gemini`, then type; an empty line or
//! end of input ends the chat.

use std::io::{BufRead, Write};

use prism::dispatch::SecretRedactor;
use prism::provider::http::{ApiKey, HttpProvider, HttpProviderBuilder};
use prism::registry::ToolFilter;
use prism::run::{AgentConfig, ProviderEvent};
use prism::{Agent, Dispatcher, RunOptions};

#[path = "support/quickstart_tools.rs"]
mod quickstart_tools;

const HELP: &str = "\
Set the model to talk to, for example a local OpenAI-compatible server (Ollama, vLLM, llama.cpp):

    PRISM_PROVIDER=openai-compatible PRISM_BASE_URL=http://localhost:11434/v1 PRISM_MODEL=qwen3:8b \\
        cargo run --example chat --features openai,anthropic,gemini

or a hosted API, with its key in PRISM_API_KEY or its own variable:

    PRISM_PROVIDER=openai            PRISM_MODEL=gpt-4o-mini        OPENAI_API_KEY=...
    PRISM_PROVIDER=openai-responses  PRISM_MODEL=gpt-4o-mini        OPENAI_API_KEY=...
    PRISM_PROVIDER=anthropic         PRISM_MODEL=claude-sonnet-4-5  ANTHROPIC_API_KEY=...
    PRISM_PROVIDER=gemini            PRISM_MODEL=gemini-2.5-flash   GEMINI_API_KEY=...

PRISM_BASE_URL also points a hosted API's client elsewhere (a proxy, Groq, DeepSeek, Mistral).";

/// The provider the environment names, or `None` (after printing why) when it names none.
fn provider_from_env() -> Result<Option<HttpProvider>, String> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|value| !value.trim().is_empty())
    };
    let (Some(kind), Some(model)) = (var("PRISM_PROVIDER"), var("PRISM_MODEL")) else {
        println!("{HELP}");
        return Ok(None);
    };
    let base_url = var("PRISM_BASE_URL");
    let mut builder: HttpProviderBuilder = match kind.as_str() {
        "openai-compatible" => {
            let Some(base_url) = base_url.clone() else {
                return Err("PRISM_PROVIDER=openai-compatible needs PRISM_BASE_URL".into());
            };
            HttpProvider::openai_compatible(base_url, model)
        }
        "openai" => HttpProvider::openai_chat(model),
        "openai-responses" => HttpProvider::openai_responses(model),
        "anthropic" => HttpProvider::anthropic(model),
        "gemini" => HttpProvider::gemini(model),
        other => return Err(format!("unknown PRISM_PROVIDER `{other}`\n\n{HELP}")),
    };
    if let Some(base_url) = base_url {
        builder = builder.base_url(base_url);
    }
    if let Some(key) = var("PRISM_API_KEY") {
        builder = builder.key(ApiKey::new(key));
    }
    builder.build().map(Some).map_err(|error| error.to_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let provider = match provider_from_env() {
        Ok(Some(provider)) => provider,
        Ok(None) => return Ok(()),
        Err(message) => return Err(message.into()),
    };
    println!(
        "Talking to {} ({}). An empty line ends the chat.",
        provider.model(),
        provider.provider_name()
    );
    // The quickstart's fake key never reaches a result, an event or a row; the agent adds the
    // provider's own key to this redactor.
    let redactor = SecretRedactor::new([quickstart_tools::API_KEY]);
    let dispatcher = Dispatcher::builder(quickstart_tools::tools())
        .filter(ToolFilter::deny(["delete_repository"]))
        .redactor(redactor)
        .build();
    let config = AgentConfig::new()
        .instructions("You are a helpful assistant. Use the tools when they help.")
        .provider_events(|event| match event {
            ProviderEvent::TextDelta { text } => {
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
            ProviderEvent::ToolCallDone { call, .. } => println!("\n  [calls {}]", call.name),
            ProviderEvent::Retrying {
                attempt,
                wait_ms,
                reason,
                ..
            } => println!("\n  [retry {attempt} in {wait_ms} ms: {reason}]"),
            _ => {}
        });
    let agent = Agent::new(dispatcher, provider).with_config(config);
    let mut session = agent.session("chat");
    let stdin = std::io::stdin();
    loop {
        print!("\n> ");
        std::io::stdout().flush()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 || line.trim().is_empty() {
            return Ok(());
        }
        match session.run(line.trim(), RunOptions::new()).await {
            Ok(_) => println!(),
            Err(error) => println!("\n(the run failed: {error})"),
        }
    }
}
