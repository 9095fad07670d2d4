//! The tools the model sees: the quickstart's tools as each provider receives them.
//!
//! First, for each wire format (OpenAI Chat Completions, OpenAI Responses, Anthropic, Gemini),
//! the `tools` entries of a real request body, exactly as the format encodes them: the name the
//! model sees (mapped where the provider's name rule refuses the registered one), the
//! description, the strict flag and the lowered schema, then every change the encoding made.
//! Then, for each of the ten schema dialects, the lowered parameter schema alone with its
//! downgrades.
//!
//! Run it with `cargo run --example schemas`; an argument prints only the wire formats and
//! dialects of that name. Wire formats are named with a hyphen (`openai-chat`,
//! `openai-responses`, `anthropic`, `gemini`) and dialects with an underscore, as the headings
//! print them: `cargo run --example schemas -- openai-responses` one wire format,
//! `cargo run --example schemas -- gemini_parameters` one dialect, and `anthropic` both the
//! Anthropic wire format and the dialect of that name.

#[path = "support/quickstart_tools.rs"]
#[allow(dead_code)] // The quickstart also uses the secret it names; this example does not.
mod quickstart_tools;

use prism::provider::anthropic::Anthropic;
use prism::provider::gemini::Gemini;
use prism::provider::names::{NameRule, ToolNames};
use prism::provider::openai_chat::OpenAiChat;
use prism::provider::openai_responses::OpenAiResponses;
use prism::provider::prepare::prepare_tools;
use prism::provider::wire::{ModelSettings, WireFormat};
use prism::run::{ToolsMetadata, TurnMetadata};
use prism::schema::{Dialect, LoweringCache};
use prism::{Message, ProviderRequest, ToolDefinition};

/// The four wire formats, each with the dialect its tools are lowered to and its name rule.
fn formats() -> Vec<(Box<dyn WireFormat>, Dialect, NameRule)> {
    vec![
        (
            Box::new(OpenAiChat::new()),
            Dialect::OpenAiChat { strict: true },
            NameRule::OpenAi,
        ),
        (
            Box::new(OpenAiResponses),
            Dialect::OpenAiResponses { strict: true },
            NameRule::OpenAi,
        ),
        (
            Box::new(Anthropic),
            Dialect::Anthropic { strict: false },
            NameRule::Anthropic,
        ),
        (
            Box::new(Gemini::new()),
            Dialect::GeminiParameters,
            NameRule::Gemini,
        ),
    ]
}

/// The name rule of the provider a dialect is sent to; `None` where names go as registered.
fn name_rule(dialect: Dialect) -> Option<NameRule> {
    match dialect {
        Dialect::OpenAiChat { .. } | Dialect::OpenAiResponses { .. } => Some(NameRule::OpenAi),
        Dialect::Anthropic { .. } => Some(NameRule::Anthropic),
        Dialect::GeminiParameters | Dialect::GeminiJsonSchema => Some(NameRule::Gemini),
        _ => None,
    }
}

/// Prints the `tools` part of the request body `format` sends for `tools`.
fn print_wire_tools(
    format: &dyn WireFormat,
    dialect: Dialect,
    rule: NameRule,
    tools: &[ToolDefinition],
    cache: &LoweringCache,
) -> Result<(), Box<dyn std::error::Error>> {
    let prepared = prepare_tools(tools, dialect, rule, cache)?;
    let transcript = [Message::user("What can you do?")];
    let metadata = TurnMetadata {
        session_id: "example".into(),
        run_id: "example".into(),
        turn: 1,
        tools: ToolsMetadata::of_names(tools.iter().map(ToolDefinition::name)),
    };
    let request = ProviderRequest::new(&transcript, tools, &metadata);
    let settings = ModelSettings::new("model-name");
    let encoded = format.encode_request(&request, &prepared.table, &settings)?;
    // Gemini nests its function declarations one level down; the others list tools directly.
    let entries = encoded.body.get("tools").cloned().unwrap_or_default();
    println!("{}", serde_json::to_string_pretty(&entries)?);
    for note in prepared.notes.iter().chain(&encoded.notes) {
        println!("  - {note}");
    }
    Ok(())
}

/// Prints each tool's lowered schema in `dialect`, with the changes lowering made.
fn print_dialect(
    dialect: Dialect,
    tools: &[ToolDefinition],
    cache: &LoweringCache,
) -> Result<(), Box<dyn std::error::Error>> {
    let names = name_rule(dialect)
        .map(|rule| ToolNames::new(rule, tools.iter().map(ToolDefinition::name)))
        .transpose()?;
    for tool in tools {
        let wire = names
            .as_ref()
            .and_then(|names| names.wire(tool.name()))
            .unwrap_or(tool.name());
        match cache.lower(tool, dialect) {
            Ok(lowered) => {
                println!("{wire}  (strict: {})", lowered.strict());
                if let Some(reason) = lowered.non_strict_reason() {
                    println!("  not strict: {reason}");
                }
                println!("  {}", serde_json::to_string(lowered.schema())?);
                for downgrade in lowered.downgrades() {
                    println!("  - {downgrade}");
                }
            }
            Err(error) => println!("{wire}  cannot be lowered: {error}"),
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let only = std::env::args().nth(1);
    let wanted = |name: &str| only.as_deref().is_none_or(|only| only == name);
    let tools = quickstart_tools::tools().list();
    let cache = LoweringCache::default();
    for (format, dialect, rule) in formats() {
        if wanted(format.name()) {
            println!("=== {} request `tools` ({dialect}) ===", format.name());
            print_wire_tools(&*format, dialect, rule, &tools, &cache)?;
            println!();
        }
    }
    for dialect in Dialect::ALL {
        if wanted(dialect.name()) {
            println!("=== {dialect} schemas ===");
            print_dialect(dialect, &tools, &cache)?;
            println!();
        }
    }
    Ok(())
}
