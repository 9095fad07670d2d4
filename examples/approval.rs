//! A secure agent whose run suspends before a destructive tool, is stored as JSON, resumed in a
//! "new process" with a person's approval, and finishes.
//!
//! Run it with `cargo run --example approval`.

use prism::definition::ToolAnnotations;
use prism::guard::{permission_fn, trust_fn, validator_fn};
use prism::run::{
    ApprovalDecision, ApprovalStore, InMemoryApprovalStore, RunEnd, ScriptedProvider, SessionState,
};
use prism::{
    Agent, Dispatcher, ProviderResponse, RunOptions, ToolCall, ToolDefinition, ToolRegistry,
};
use serde_json::{Value, json};

fn agent(
    registry: &ToolRegistry,
    provider: &ScriptedProvider,
    store: &InMemoryApprovalStore,
) -> Result<Agent, Box<dyn std::error::Error>> {
    // Trust, permission and a validator are required by the type of `build_secure`.
    let dispatcher = Dispatcher::builder(registry.clone())
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .validate(validator_fn(|_tool, args: &Value| {
            match args.get("path").and_then(Value::as_str) {
                Some(path) if path.starts_with("/srv/") => Ok(()),
                _ => Err("paths must be under /srv/".into()),
            }
        }))
        .build_secure()?;
    Ok(Agent::secure(dispatcher, provider.clone(), store.clone()))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let delete = ToolDefinition::builder("delete_dir")
        .description("Deletes a directory.")
        .parameters(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        }))
        .annotations(ToolAnnotations {
            destructive: Some(true),
            ..ToolAnnotations::default()
        })
        .run_sync(|args: &Value, _| {
            println!("  (side effect) deleting {}", args["path"]);
            Ok(json!({"deleted": args["path"]}))
        });
    let list = ToolDefinition::builder("list_dir")
        .description("Lists a directory.")
        .parameters(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
        .run_sync(|_, _| Ok(json!(["old-logs", "cache"])));
    let registry = ToolRegistry::from_iter([list, delete]);
    let store = InMemoryApprovalStore::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "list_dir", json!({"path": "/srv/app"})),
            ToolCall::new("c2", "delete_dir", json!({"path": "/srv/app/old-logs"})),
        ]),
        ProviderResponse::text("Removed /srv/app/old-logs."),
    ]);

    println!("== run: the model lists, then wants to delete");
    let mut session = agent(&registry, &provider, &store)?.session("ops-1");
    let outcome = session.run("Clean old logs", RunOptions::new()).await?;
    for pending in outcome.pending_approvals() {
        println!(
            "suspended: {} wants {} with {} (arguments hash {}…)",
            pending.key.call_id,
            pending.key.tool,
            pending.arguments,
            &pending.key.arguments_hash[..12]
        );
    }
    let stored = serde_json::to_string(&session.state())?;
    println!(
        "stored the session: {} bytes; nothing was deleted yet",
        stored.len()
    );

    println!("\n== later, elsewhere: a person approves what the store shows");
    let waiting = store.pending("ops-1").await?;
    let decisions: Vec<_> = waiting
        .iter()
        .map(|pending| ApprovalDecision::approve(&pending.key))
        .collect();
    let state: SessionState = serde_json::from_str(&stored)?;
    let mut restored = agent(&registry, &provider, &store)?.restore(state);
    let outcome = restored.resume(decisions).await?;
    assert_eq!(outcome.end, RunEnd::Completed);
    for row in restored.transcript() {
        if let Some(result) = row.as_tool_result() {
            println!(
                "row {} {}: {}",
                result.tool_call_id,
                result.name,
                serde_json::to_string(result)?
            );
        }
    }
    println!("answer: {}", outcome.summary().text);
    Ok(())
}
