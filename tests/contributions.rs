//! Contributions: tools offered by extensions stay inert until the host registers them.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use prism::call::BlockReason;
use prism::definition::{NotPrepared, Prepared, ToolFuture, ToolHandler};
use prism::registry::{ContributionRegistries, ExtensionApi};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use serde_json::{Value, json};

/// A handler that counts both of its steps, to prove contributing a tool touches neither.
struct Watched(Arc<AtomicUsize>);

impl ToolHandler for Watched {
    fn prepare(
        &self,
        arguments: &Value,
        _ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let touched = Arc::clone(&self.0);
        let arguments = arguments.clone();
        Ok(ToolFuture::new(async move {
            touched.fetch_add(1, Ordering::SeqCst);
            Ok(arguments)
        })
        .into())
    }
}

#[tokio::test]
async fn a_contributed_tool_is_stored_but_not_active() {
    let touched = Arc::new(AtomicUsize::new(0));
    let contributions = ContributionRegistries::new();
    let api = ExtensionApi::new(contributions.clone());
    api.register_tool(ToolDefinition::builder("echo").handler(Watched(Arc::clone(&touched))))
        .unwrap();

    assert_eq!(contributions.tools.list().len(), 1);
    assert_eq!(
        touched.load(Ordering::SeqCst),
        0,
        "registration runs nothing"
    );

    let active = ToolRegistry::new();
    let dispatcher = Dispatcher::builder(active.clone()).build();
    let result = run(&dispatcher, ToolCall::new("c1", "echo", json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::UnknownTool));
    assert_eq!(touched.load(Ordering::SeqCst), 0);

    // The host selects it explicitly.
    active
        .register(contributions.tools.resolve("echo").unwrap())
        .unwrap();
    let result = run(&dispatcher, ToolCall::new("c2", "echo", json!({"hi": 1}))).await;
    assert_eq!(result.as_value(), Some(&json!({"hi": 1})));
    assert_eq!(touched.load(Ordering::SeqCst), 2);
}

#[test]
fn contributions_refuse_silent_shadowing() {
    let contributions = ContributionRegistries::new();
    let api = ExtensionApi::new(contributions.clone());
    let first = echo("search");
    api.register_tool(first.clone()).unwrap();
    let error = api.register_tool(echo("search")).unwrap_err();
    assert_eq!(error.to_string(), "Duplicate tool: search");
    assert!(contributions.tools.get("search").unwrap().ptr_eq(&first));
}

#[test]
fn contributions_resolve_get_and_list_in_order() {
    let contributions = ContributionRegistries::new();
    for name in ["b", "a", "c"] {
        contributions.tools.register(echo(name)).unwrap();
    }
    let names: Vec<_> = contributions
        .tools
        .list()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    assert_eq!(names, ["b", "a", "c"]);
    assert!(contributions.tools.get("z").is_none());
    assert_eq!(
        contributions.tools.resolve("z").unwrap_err().to_string(),
        "Unknown tool: z"
    );
}

#[test]
fn two_extension_handles_write_to_the_same_contributions() {
    let contributions = ContributionRegistries::new();
    let first = ExtensionApi::new(contributions.clone());
    let second = ExtensionApi::new(contributions.clone());
    first.register_tool(echo("one")).unwrap();
    second.register_tool(echo("two")).unwrap();
    assert_eq!(contributions.tools.list().len(), 2);
    assert!(second.register_tool(echo("one")).is_err());
}
