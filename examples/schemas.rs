//! The schema the model sees: the quickstart's tools as each provider dialect receives them.
//!
//! For every dialect, each tool is printed with the name the model sees (mapped for providers
//! whose name rule refuses it), the strict flag to send, the lowered parameter schema, and every
//! change lowering made to the canonical schema. Run it with `cargo run --example schemas`, or
//! `cargo run --example schemas -- gemini_parameters` for one dialect.

#[path = "support/quickstart_tools.rs"]
#[allow(dead_code)] // The quickstart also uses the secret it names; this example does not.
mod quickstart_tools;

use prism::provider::names::{NameRule, ToolNames};
use prism::schema::{Dialect, LoweringCache};

/// The name rule of the provider a dialect is sent to; `None` where names go as registered.
fn name_rule(dialect: Dialect) -> Option<NameRule> {
    match dialect {
        Dialect::OpenAiChat { .. } | Dialect::OpenAiResponses { .. } => Some(NameRule::OpenAi),
        Dialect::Anthropic { .. } => Some(NameRule::Anthropic),
        Dialect::GeminiParameters | Dialect::GeminiJsonSchema => Some(NameRule::Gemini),
        _ => None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let only = std::env::args().nth(1);
    let registry = quickstart_tools::tools();
    let tools = registry.list();
    let cache = LoweringCache::default();
    for dialect in Dialect::ALL {
        if only.as_deref().is_some_and(|name| name != dialect.name()) {
            continue;
        }
        println!("=== {dialect} ===");
        let names = name_rule(dialect)
            .map(|rule| ToolNames::new(rule, tools.iter().map(|tool| tool.name())))
            .transpose()?;
        for tool in &tools {
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
        println!();
    }
    Ok(())
}
