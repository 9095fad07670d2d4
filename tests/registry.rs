//! The registry: replace by default, strict on demand, lookups, insertion order and snapshots.

mod common;

use common::*;
use prism::call::BlockReason;
use prism::definition::ToolAnnotations;
use prism::effects::EffectPolicy;
use prism::registry::{DuplicatePolicy, DuplicateTool, RegistryError, UnknownTool};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolRegistry};
use serde_json::json;

fn names(tools: &[ToolDefinition]) -> Vec<&str> {
    tools.iter().map(ToolDefinition::name).collect()
}

#[test]
fn get_returns_the_registered_tool_and_none_for_other_names() {
    let registry = ToolRegistry::new();
    let add = echo("add");
    registry.register(add.clone()).unwrap();

    assert!(registry.get("add").unwrap().ptr_eq(&add));
    assert!(
        registry.get("Add").is_none(),
        "names are exact, not case-folded"
    );
    assert!(registry.get("sub").is_none());
    assert!(registry.contains("add") && !registry.contains("sub"));
}

#[test]
fn resolve_fails_closed_with_the_spec_message() {
    let registry = ToolRegistry::from_iter([echo("add")]);
    assert_eq!(registry.resolve("add").unwrap().name(), "add");

    let error = registry.resolve("delete_everything").unwrap_err();
    assert_eq!(error.to_string(), "Unknown tool: delete_everything");
    assert_eq!(error, UnknownTool("delete_everything".to_owned()));
}

#[test]
fn list_is_in_insertion_order() {
    let registry = ToolRegistry::new();
    for name in ["zeta", "alpha", "mid", "beta"] {
        registry.register(echo(name)).unwrap();
    }
    assert_eq!(names(&registry.list()), ["zeta", "alpha", "mid", "beta"]);
    assert_eq!(registry.len(), 4);
}

#[test]
fn replacing_is_the_default_and_keeps_the_slot() {
    let registry = ToolRegistry::new();
    assert_eq!(registry.policy(), DuplicatePolicy::Replace);
    for name in ["a", "b", "c"] {
        registry.register(echo(name)).unwrap();
    }
    let newer_b = echo("b");
    registry.register(newer_b.clone()).unwrap();

    assert_eq!(names(&registry.list()), ["a", "b", "c"]);
    assert!(registry.get("b").unwrap().ptr_eq(&newer_b));
    assert_eq!(registry.len(), 3);
}

#[test]
fn strict_registries_refuse_duplicates_and_keep_the_first() {
    for registry in [
        ToolRegistry::strict(),
        ToolRegistry::with_policy(DuplicatePolicy::Error),
    ] {
        let first = echo("search");
        registry.register(first.clone()).unwrap();
        let error = registry.register(echo("search")).unwrap_err();
        assert_eq!(error.to_string(), "Duplicate tool: search");
        assert_eq!(
            error,
            RegistryError::Duplicate(DuplicateTool("search".to_owned()))
        );
        assert!(registry.get("search").unwrap().ptr_eq(&first));
        assert_eq!(registry.len(), 1);
    }
}

#[test]
fn from_iter_replaces_later_duplicates_in_the_first_slot() {
    let last_a = echo("a");
    let registry = ToolRegistry::from_iter([echo("a"), echo("b"), last_a.clone()]);
    assert_eq!(names(&registry.list()), ["a", "b"]);
    assert!(registry.get("a").unwrap().ptr_eq(&last_a));
    assert_eq!(registry.policy(), DuplicatePolicy::Replace);
}

#[test]
fn snapshots_ignore_later_registrations_and_replacements() {
    let registry = ToolRegistry::new();
    let original = echo("a");
    registry.register(original.clone()).unwrap();
    let snapshot = registry.snapshot();

    registry.register(echo("b")).unwrap();
    registry.register(echo("a")).unwrap();

    assert_eq!(snapshot.len(), 1);
    assert!(snapshot.get("b").is_none());
    assert!(snapshot.get("a").unwrap().ptr_eq(&original));
    let listed: Vec<_> = snapshot.iter().map(ToolDefinition::name).collect();
    assert_eq!(listed, ["a"]);
    // The registry itself moved on.
    assert_eq!(names(&registry.list()), ["a", "b"]);
    assert!(!registry.get("a").unwrap().ptr_eq(&original));
}

#[test]
fn clones_share_one_registry() {
    let registry = ToolRegistry::new();
    let clone = registry.clone();
    clone.register(echo("late")).unwrap();
    assert!(registry.get("late").is_some());
}

#[test]
fn concurrent_registrations_are_all_kept() {
    let registry = ToolRegistry::new();
    std::thread::scope(|scope| {
        for writer in 0..2 {
            let registry = registry.clone();
            scope.spawn(move || {
                for n in 0..50 {
                    registry.register(echo(&format!("w{writer}_{n}"))).unwrap();
                }
            });
        }
    });
    assert_eq!(registry.len(), 100);
    for writer in 0..2 {
        let order: Vec<_> = registry
            .list()
            .iter()
            .map(|tool| tool.name().to_owned())
            .filter(|name| name.starts_with(&format!("w{writer}_")))
            .collect();
        let expected: Vec<_> = (0..50).map(|n| format!("w{writer}_{n}")).collect();
        assert_eq!(order, expected, "each writer's tools keep their order");
    }
}

#[tokio::test]
async fn a_dispatcher_sees_tools_registered_after_it_was_built() {
    let registry = ToolRegistry::new();
    let dispatcher = Dispatcher::builder(registry.clone()).build();

    let before = run(&dispatcher, ToolCall::new("c1", "late", json!({}))).await;
    assert_eq!(before.block_reason(), Some(BlockReason::UnknownTool));

    registry.register(echo("late")).unwrap();
    let after = run(&dispatcher, ToolCall::new("c2", "late", json!({"x": 1}))).await;
    assert_eq!(after.as_value(), Some(&json!({"x": 1})));
}

#[tokio::test]
async fn a_replacement_takes_effect_for_the_next_dispatch() {
    let registry = ToolRegistry::new();
    registry
        .register(ToolDefinition::builder("v").run_sync(|_, _| Ok(json!(1))))
        .unwrap();
    let dispatcher = Dispatcher::builder(registry.clone()).build();
    assert_eq!(
        run(&dispatcher, ToolCall::new("c1", "v", json!({})))
            .await
            .as_value(),
        Some(&json!(1))
    );

    registry
        .register(ToolDefinition::builder("v").run_sync(|_, _| Ok(json!(2))))
        .unwrap();
    assert_eq!(
        run(&dispatcher, ToolCall::new("c2", "v", json!({})))
            .await
            .as_value(),
        Some(&json!(2))
    );
}

#[test]
fn definitions_are_cheap_clones_of_one_tool() {
    let tool = ToolDefinition::builder("pay")
        .description("Sends money.")
        .parameters(json!({"type": "object"}))
        .output_schema(json!({"type": "string"}))
        .annotations(ToolAnnotations {
            destructive: Some(true),
            open_world: Some(true),
            ..ToolAnnotations::default()
        })
        .exclusive(true)
        .effect(EffectPolicy::default())
        .run_sync(|_, _| Ok(json!("ok")));
    let clone = tool.clone();
    assert!(clone.ptr_eq(&tool));
    assert_eq!(clone.description(), Some("Sends money."));
    assert_eq!(clone.output_schema(), Some(&json!({"type": "string"})));
    assert!(clone.is_exclusive());
    assert_eq!(clone.effect(), Some(&EffectPolicy::default()));
    assert_eq!(clone.annotations().destructive, Some(true));
    // The MCP hint names on the wire.
    assert_eq!(
        serde_json::to_value(clone.annotations()).unwrap(),
        json!({"destructiveHint": true, "openWorldHint": true})
    );
}

#[test]
fn remove_returns_the_tool_keeps_the_order_of_the_rest_and_spares_earlier_snapshots() {
    let registry = ToolRegistry::new();
    let b = echo("b");
    for tool in [echo("a"), b.clone(), echo("c")] {
        registry.register(tool).unwrap();
    }
    let clone = registry.clone();
    let before = registry.snapshot();

    assert!(clone.remove("b").unwrap().ptr_eq(&b));
    assert!(registry.remove("b").is_none(), "already removed");
    assert!(registry.remove("missing").is_none());

    assert_eq!(names(&registry.list()), ["a", "c"]);
    assert!(!registry.contains("b"));
    assert_eq!(
        registry.resolve("b").unwrap_err().to_string(),
        "Unknown tool: b"
    );
    assert!(
        before.get("b").unwrap().ptr_eq(&b),
        "a snapshot taken before keeps it"
    );
    assert_eq!(before.len(), 3);

    registry.register(echo("b")).unwrap();
    assert_eq!(
        names(&registry.list()),
        ["a", "c", "b"],
        "a new tool goes last"
    );
}
