//! Exact allow/deny filters, grants, and the per-call scope that can only narrow.

mod common;

use std::sync::{Arc, OnceLock};

use common::*;
use prism::call::{BlockReason, ErrorCode};
use prism::registry::{
    CompiledFilters, RegistrySnapshot, ToolFilter, ToolGrant, ToolScope, filter_tools,
};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use serde_json::json;

fn tools(names: &[&str]) -> Vec<ToolDefinition> {
    names.iter().map(|name| echo(name)).collect()
}

fn kept(tools: &[ToolDefinition], filters: &[ToolFilter]) -> Vec<String> {
    filter_tools(tools, filters)
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect()
}

#[test]
fn no_filter_keeps_everything_in_order() {
    let all = tools(&["c", "a", "b"]);
    assert_eq!(kept(&all, &[]), ["c", "a", "b"]);
    assert_eq!(kept(&all, &[ToolFilter::default()]), ["c", "a", "b"]);
}

#[test]
fn an_empty_allow_list_means_no_restriction() {
    let all = tools(&["a", "b"]);
    let empty_allow = ToolFilter::allow(Vec::<String>::new());
    assert_eq!(kept(&all, std::slice::from_ref(&empty_allow)), ["a", "b"]);
    // An empty allow list among others does not lift their restriction either.
    assert_eq!(kept(&all, &[ToolFilter::allow(["a"]), empty_allow]), ["a"]);
}

#[test]
fn allow_keeps_input_order_not_allow_order() {
    let all = tools(&["a", "b", "c", "d"]);
    assert_eq!(kept(&all, &[ToolFilter::allow(["d", "b"])]), ["b", "d"]);
}

#[test]
fn deny_wins_over_allow() {
    let all = tools(&["a", "b", "c"]);
    let filter = ToolFilter::allow(["a", "b"]).and_deny(["b"]);
    assert_eq!(kept(&all, &[filter]), ["a"]);
}

#[test]
fn every_non_empty_allow_list_must_include_the_tool_and_any_deny_excludes_it() {
    let all = tools(&["a", "b", "c", "d"]);
    let filters = [
        ToolFilter::allow(["a", "b", "c"]),
        ToolFilter::allow(["b", "c", "d"]),
        ToolFilter::deny(["c"]),
    ];
    assert_eq!(kept(&all, &filters), ["b"]);
    // Order of filters does not matter.
    let reversed: Vec<_> = filters.iter().rev().cloned().collect();
    assert_eq!(kept(&all, &reversed), ["b"]);
}

#[test]
fn filters_never_create_tools() {
    let all = tools(&["a"]);
    assert_eq!(kept(&all, &[ToolFilter::allow(["ghost", "a"])]), ["a"]);
    assert!(kept(&all, &[ToolFilter::allow(["ghost"])]).is_empty());
}

#[test]
fn names_match_exactly() {
    let all = tools(&["read", "read_file", "Read"]);
    assert_eq!(kept(&all, &[ToolFilter::allow(["read"])]), ["read"]);
    assert_eq!(
        kept(&all, &[ToolFilter::deny(["read"])]),
        ["read_file", "Read"]
    );
}

#[test]
fn compiled_filters_agree_with_filter_tools() {
    let filters = [ToolFilter::allow(["a", "b"]), ToolFilter::deny(["b"])];
    let compiled = CompiledFilters::new(&filters);
    assert!(compiled.allows("a"));
    assert!(!compiled.allows("b") && !compiled.allows("c"));
    assert!(!compiled.is_empty());
    assert!(CompiledFilters::new(&[ToolFilter::allow(Vec::<String>::new())]).is_empty());
}

#[test]
fn compiled_filters_follow_the_rule_in_any_order() {
    // The rule, written out: in every non-empty allow list and in no deny list.
    let rule = |filters: &[ToolFilter], name: &str| {
        filters.iter().all(|filter| {
            let listed = |names: &[String]| names.iter().any(|listed| listed == name);
            filter
                .allow
                .as_deref()
                .is_none_or(|allow| allow.is_empty() || listed(allow))
                && !listed(&filter.deny)
        })
    };
    let filters = [
        ToolFilter::allow(["a", "b", "c"]),
        ToolFilter::deny(["c"]),
        ToolFilter::allow(["b", "c", "d"]).and_deny(["a"]),
        ToolFilter::allow(Vec::<String>::new()).and_deny(["e"]),
    ];
    let orders = [
        [0, 1, 2, 3],
        [3, 2, 1, 0],
        [1, 0, 3, 2],
        [2, 3, 0, 1],
        [1, 3, 0, 2],
    ];
    for order in orders {
        for count in 0..=order.len() {
            let chosen: Vec<ToolFilter> =
                order[..count].iter().map(|&i| filters[i].clone()).collect();
            let compiled = CompiledFilters::new(&chosen);
            for name in ["a", "b", "c", "d", "e", "f"] {
                assert_eq!(
                    compiled.allows(name),
                    rule(&chosen, name),
                    "{name} under filters {:?}",
                    &order[..count]
                );
            }
        }
    }
}

#[test]
fn filters_read_the_spec_field_names() {
    let filter: ToolFilter =
        serde_json::from_value(json!({"allow": ["echo"], "deny": ["rm"]})).unwrap();
    assert_eq!(filter, ToolFilter::allow(["echo"]).and_deny(["rm"]));
    let open: ToolFilter = serde_json::from_value(json!({})).unwrap();
    assert_eq!(kept(&tools(&["x"]), &[open]), ["x"]);
}

#[test]
fn grants_and_filters_read_emptiness_oppositely() {
    assert!(!ToolGrant::only(Vec::<String>::new()).allows("a"));
    assert!(!ToolGrant::none().allows("a"));
    assert!(ToolGrant::All.allows("a"));
    assert_eq!(
        kept(&tools(&["a"]), &[ToolFilter::allow(Vec::<String>::new())]),
        ["a"]
    );
}

#[tokio::test]
async fn dispatch_applies_every_builder_filter() {
    let runs = Runs::new();
    let registry = ToolRegistry::from_iter([
        counted("a", &runs),
        counted("b", &runs),
        counted("c", &runs),
    ]);
    let dispatcher = Dispatcher::builder(registry)
        .filter(ToolFilter::allow(["a", "b"]))
        .filter(ToolFilter::deny(["b"]))
        .filter(None)
        .build();

    assert!(
        run(&dispatcher, ToolCall::new("1", "a", json!({})))
            .await
            .is_success()
    );
    for name in ["b", "c"] {
        let result = run(&dispatcher, ToolCall::new("2", name, json!({}))).await;
        assert_eq!(
            result.block_reason(),
            Some(BlockReason::ToolDenied),
            "{name}"
        );
        assert_eq!(error_of(&result).code, ErrorCode::ToolDenied);
    }
    assert_eq!(runs.count(), 1, "denied tools never run");
}

#[tokio::test]
async fn an_empty_allow_filter_restricts_nothing_at_dispatch() {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("a")]))
        .filter(ToolFilter::allow(Vec::<String>::new()))
        .build();
    assert!(
        run(&dispatcher, ToolCall::new("1", "a", json!({})))
            .await
            .is_success()
    );
}

fn scoped(grant: ToolGrant) -> ToolExecutionContext {
    ctx().with_scope(ToolScope::new(grant))
}

#[tokio::test]
async fn the_scope_narrows_dispatch_to_its_grant() {
    let runs = Runs::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([
        counted("a", &runs),
        counted("b", &runs),
    ]))
    .build();

    let ctx = scoped(ToolGrant::only(["a"]));
    assert!(
        run_in(&dispatcher, ToolCall::new("1", "a", json!({})), &ctx)
            .await
            .is_success()
    );
    let denied = run_in(&dispatcher, ToolCall::new("2", "b", json!({})), &ctx).await;
    assert_eq!(denied.block_reason(), Some(BlockReason::ToolDenied));

    let none = scoped(ToolGrant::none());
    let denied = run_in(&dispatcher, ToolCall::new("3", "a", json!({})), &none).await;
    assert_eq!(denied.block_reason(), Some(BlockReason::ToolDenied));
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn tools_hidden_this_turn_are_denied() {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("a"), echo("b")])).build();
    let ctx = ctx().with_scope(ToolScope::new(ToolGrant::All).with_visible(ToolGrant::only(["a"])));
    assert!(
        run_in(&dispatcher, ToolCall::new("1", "a", json!({})), &ctx)
            .await
            .is_success()
    );
    let hidden = run_in(&dispatcher, ToolCall::new("2", "b", json!({})), &ctx).await;
    assert_eq!(hidden.block_reason(), Some(BlockReason::ToolDenied));
}

#[tokio::test]
async fn a_scope_cannot_widen_a_builder_filter() {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("a")]))
        .filter(ToolFilter::deny(["a"]))
        .build();
    let ctx = scoped(ToolGrant::only(["a"]));
    let result = run_in(&dispatcher, ToolCall::new("1", "a", json!({})), &ctx).await;
    assert_eq!(result.block_reason(), Some(BlockReason::ToolDenied));
}

#[tokio::test]
async fn nested_scopes_only_narrow() {
    let dispatcher =
        Dispatcher::builder(ToolRegistry::from_iter([echo("a"), echo("b"), echo("c")])).build();
    let parent = scoped(ToolGrant::only(["a", "b"]));

    // A child asking for more gets the intersection.
    let child = parent
        .clone()
        .with_scope(ToolScope::new(ToolGrant::only(["b", "c"])));
    let widened = child.clone().with_scope(ToolScope::new(ToolGrant::All));
    for ctx in [&child, &widened] {
        assert!(
            run_in(&dispatcher, ToolCall::new("1", "b", json!({})), ctx)
                .await
                .is_success()
        );
        for name in ["a", "c"] {
            let result = run_in(&dispatcher, ToolCall::new("2", name, json!({})), ctx).await;
            assert_eq!(
                result.block_reason(),
                Some(BlockReason::ToolDenied),
                "{name}"
            );
        }
    }
    // Visible sets intersect as well.
    let turn = parent
        .clone()
        .with_scope(ToolScope::new(ToolGrant::All).with_visible(ToolGrant::only(["a"])));
    let later =
        turn.with_scope(ToolScope::new(ToolGrant::All).with_visible(ToolGrant::only(["a", "b"])));
    let result = run_in(&dispatcher, ToolCall::new("3", "b", json!({})), &later).await;
    assert_eq!(result.block_reason(), Some(BlockReason::ToolDenied));

    let narrowed = ToolScope::new(ToolGrant::only(["a", "b"])).narrow(&ToolGrant::only(["b", "z"]));
    assert!(narrowed.allows("b") && !narrowed.allows("a") && !narrowed.allows("z"));
}

#[tokio::test]
async fn a_tool_making_nested_calls_stays_inside_its_run_grant() {
    let nested: Arc<OnceLock<Dispatcher>> = Arc::new(OnceLock::new());
    let secret_runs = Runs::new();
    let outer = {
        let nested = Arc::clone(&nested);
        ToolDefinition::builder("outer").run(move |args, ctx| {
            let nested = Arc::clone(&nested);
            async move {
                let target = args["target"].as_str().unwrap_or_default().to_owned();
                let dispatcher = nested.get().expect("set before dispatch");
                let result = dispatcher
                    .dispatch(ToolCall::new("inner", target, json!({})), &ctx)
                    .await
                    .expect("no tripwire");
                Ok(json!({"inner": result.block_reason().map(BlockReason::as_str)}))
            }
        })
    };
    let registry =
        ToolRegistry::from_iter([outer, echo("allowed"), counted("admin", &secret_runs)]);
    let dispatcher = Dispatcher::builder(registry).build();
    nested.set(dispatcher.clone()).unwrap();

    let ctx = scoped(ToolGrant::only(["outer", "allowed"]));
    let via_allowed = run_in(
        &dispatcher,
        ToolCall::new("1", "outer", json!({"target": "allowed"})),
        &ctx,
    )
    .await;
    assert_eq!(via_allowed.as_value(), Some(&json!({"inner": null})));
    let via_admin = run_in(
        &dispatcher,
        ToolCall::new("2", "outer", json!({"target": "admin"})),
        &ctx,
    )
    .await;
    assert_eq!(via_admin.as_value(), Some(&json!({"inner": "tool_denied"})));
    assert_eq!(secret_runs.count(), 0);
}

#[tokio::test]
async fn pinned_tools_outlive_a_replacement_but_not_a_removal_from_the_run() {
    let registry = ToolRegistry::from_iter([ToolDefinition::builder("version")
        .parameters(object_schema())
        .run_sync(|_, _| Ok(json!("v1")))]);
    let dispatcher = Dispatcher::builder(registry.clone()).build();
    let pinned = std::sync::Arc::new(RegistrySnapshot::from_tools(registry.list()));
    let pinned_ctx = ctx().with_scope(ToolScope::new(ToolGrant::All).with_pinned_tools(pinned));

    // Replaced mid-run: the run keeps executing the definition it started with.
    registry
        .register(
            ToolDefinition::builder("version")
                .parameters(object_schema())
                .run_sync(|_, _| Ok(json!("v2"))),
        )
        .unwrap();
    let result = run_in(
        &dispatcher,
        ToolCall::new("1", "version", json!({})),
        &pinned_ctx,
    )
    .await;
    assert_eq!(result.as_value(), Some(&json!("v1")));
    let unpinned = run_in(
        &dispatcher,
        ToolCall::new("2", "version", json!({})),
        &ctx(),
    )
    .await;
    assert_eq!(unpinned.as_value(), Some(&json!("v2")));

    // Registered after the run started: not part of the run.
    registry.register(echo("newcomer")).unwrap();
    let late = run_in(
        &dispatcher,
        ToolCall::new("3", "newcomer", json!({})),
        &pinned_ctx,
    )
    .await;
    assert_eq!(late.block_reason(), Some(BlockReason::ToolDenied));
}

#[tokio::test]
async fn a_nested_scope_cannot_replace_the_tools_its_run_pinned() {
    let registry = ToolRegistry::from_iter([echo("old")]);
    let dispatcher = Dispatcher::builder(registry.clone()).build();
    let run_ctx =
        ctx().with_scope(ToolScope::new(ToolGrant::All).with_pinned_tools(registry.snapshot()));
    // Registered after the run started: not among the run's tools.
    registry.register(echo("new")).unwrap();
    let denied = run_in(&dispatcher, ToolCall::new("1", "new", json!({})), &run_ctx).await;
    assert_eq!(denied.block_reason(), Some(BlockReason::ToolDenied));

    // A nested caller that pins the live registry's tools instead gets no more than its run.
    let nested = run_ctx
        .clone()
        .with_scope(ToolScope::new(ToolGrant::All).with_pinned_tools(registry.snapshot()));
    let result = run_in(&dispatcher, ToolCall::new("2", "new", json!({})), &nested).await;
    assert_eq!(
        result.block_reason(),
        Some(BlockReason::ToolDenied),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_nested_scope_adds_its_validators_to_its_parents() {
    use prism::guard::{ArgumentValidator, validator_fn};
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("a")])).build();
    let refuses = |word: &'static str| -> Arc<dyn ArgumentValidator> {
        Arc::new(validator_fn(move |_, args| {
            match args.get("path").and_then(|path| path.as_str()) {
                Some(path) if path.contains(word) => Err(format!("no {word}").into()),
                _ => Ok(()),
            }
        }))
    };
    let parent = ctx().with_scope(ToolScope::new(ToolGrant::All).with_validator(refuses("etc")));
    // The nested scope brings its own validator: the parent's still runs, and so does its own.
    let child = parent
        .clone()
        .with_scope(ToolScope::new(ToolGrant::All).with_validator(refuses("home")));
    for (path, refused) in [("/etc/passwd", true), ("/home/x", true), ("/tmp/x", false)] {
        let call = ToolCall::new("1", "a", json!({ "path": path }));
        let result = run_in(&dispatcher, call, &child).await;
        let expected = refused.then_some(BlockReason::ValidationFailed);
        assert_eq!(result.block_reason(), expected, "{path}");
    }
    assert_eq!(child.scope().unwrap().validators().len(), 2);
}
