//! Per-run grants: the snapshot, unknown names, resuming from stored state, skills, nested calls
//! and the run's validator.

mod run_support;

use std::sync::{Arc, Mutex, OnceLock};

use prism::call::BlockReason;
use prism::guard::validator_fn;
use prism::registry::ToolFilter;
use prism::run::{AgentConfig, ScriptedProvider, SessionState, Skill};
use prism::{
    Agent, Dispatcher, ProviderResponse, RunError, RunOptions, ToolCall, ToolDefinition,
    ToolExecutionContext, ToolRegistry,
};
use run_support::{named, summary, tool_rows};
use serde_json::{Value, json};

fn registry() -> ToolRegistry {
    ToolRegistry::from_iter([named("read"), named("write"), named("delete")])
}

fn agent(registry: ToolRegistry, provider: &ScriptedProvider) -> Agent {
    Agent::new(Dispatcher::builder(registry).build(), provider.clone())
}

#[tokio::test]
async fn no_tool_names_grants_every_registered_tool_in_registry_order() {
    let provider = ScriptedProvider::new([ProviderResponse::text("done")]);
    let mut session = agent(registry(), &provider).session("s");
    session.run("hi", RunOptions::new()).await.unwrap();
    assert_eq!(
        provider.requests()[0].tool_names,
        ["read", "write", "delete"]
    );

    let provider = ScriptedProvider::new([ProviderResponse::text("done")]);
    let mut session = agent(registry(), &provider).session("s");
    session
        .run("hi", RunOptions::new().tool_names(["delete", "read"]))
        .await
        .unwrap();
    assert_eq!(
        provider.requests()[0].tool_names,
        ["read", "delete"],
        "the order names are listed in does not change the schemas"
    );
}

#[tokio::test]
async fn an_empty_grant_means_no_tools_and_calls_are_denied() {
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "read", json!({}))]),
        ProviderResponse::text("done"),
    ]);
    let mut session = agent(registry(), &provider).session("s");
    session
        .run("hi", RunOptions::new().tool_names(Vec::<String>::new()))
        .await
        .unwrap();
    assert!(provider.requests()[0].tool_names.is_empty());
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::ToolDenied));
}

#[tokio::test]
async fn an_unknown_name_fails_before_the_first_turn_and_writes_nothing() {
    let provider = ScriptedProvider::new([ProviderResponse::text("never sent")]);
    let mut session = agent(registry(), &provider).session("s");
    let error = session
        .run(
            "hi",
            RunOptions::new().tool_names(["read", "launch", "nuke"]),
        )
        .await
        .unwrap_err();
    assert_eq!(
        error,
        RunError::UnknownTools {
            names: vec!["launch".into(), "nuke".into()]
        }
    );
    assert!(provider.requests().is_empty());
    assert!(session.transcript().is_empty());
    assert_eq!(session.state().runs, 0);
}

#[tokio::test]
async fn a_registered_tool_outside_the_grant_is_denied_not_unknown() {
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "delete", json!({})),
            ToolCall::new("c2", "read", json!({})),
        ]),
        ProviderResponse::text("done"),
    ]);
    let mut session = agent(registry(), &provider).session("s");
    session
        .run("hi", RunOptions::new().tool_names(["read"]))
        .await
        .unwrap();
    let rows = tool_rows(session.transcript());
    assert_eq!(
        summary(&rows),
        [
            ("c1".to_owned(), "tool_denied".to_owned()),
            ("c2".to_owned(), "ok".to_owned())
        ]
    );
}

#[tokio::test]
async fn resuming_from_stored_state_cannot_widen_the_grant() {
    let registry = registry();
    let provider = ScriptedProvider::new([ProviderResponse::text("first")]);
    let mut session = agent(registry.clone(), &provider).session("s");
    session
        .run("hi", RunOptions::new().tool_names(["read", "write"]))
        .await
        .unwrap();
    let stored = serde_json::to_string(&session.state()).unwrap();

    // The host registers more tools; the stored session must not see them.
    registry.register(named("launch")).unwrap();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "launch", json!({})),
            ToolCall::new("c2", "delete", json!({})),
            ToolCall::new("c3", "write", json!({})),
        ]),
        ProviderResponse::text("second"),
    ]);
    let state: SessionState = serde_json::from_str(&stored).unwrap();
    let mut resumed = agent(registry, &provider).restore(state);
    resumed
        .run(
            "again",
            RunOptions::new().tool_names(["read", "write", "delete", "launch"]),
        )
        .await
        .unwrap();

    assert_eq!(provider.requests()[0].tool_names, ["read", "write"]);
    let rows = tool_rows(resumed.transcript());
    assert_eq!(
        summary(&rows),
        [
            ("c1".to_owned(), "tool_denied".to_owned()),
            ("c2".to_owned(), "tool_denied".to_owned()),
            ("c3".to_owned(), "ok".to_owned())
        ]
    );
    assert_eq!(resumed.state().grant.unwrap(), ["read", "write"]);
}

#[tokio::test]
async fn a_skill_whose_tools_are_missing_fails_before_the_provider_turn() {
    let provider = ScriptedProvider::new([ProviderResponse::text("never sent")]);
    let agent = agent(registry(), &provider).with_config(
        AgentConfig::new().skills([Skill::new("cleanup").with_tool_names(["delete"])]),
    );
    let mut session = agent.session("s");

    // Registered, but not granted to this run: the skill cannot rely on it.
    let error = session
        .run("hi", RunOptions::new().tool_names(["read"]))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        RunError::MissingSkillTools {
            skill: "cleanup".into(),
            names: vec!["delete".into()]
        }
    );
    assert!(provider.requests().is_empty());
    assert!(session.transcript().is_empty());

    // A run whose grant covers the skill goes ahead; the skill grants nothing by itself.
    let provider = ScriptedProvider::new([ProviderResponse::text("ok")]);
    let agent = Agent::new(agent.dispatcher().clone(), provider.clone()).with_config(
        AgentConfig::new().skills([Skill::new("cleanup").with_tool_names(["delete"])]),
    );
    let mut session = agent.session("t");
    session
        .run("hi", RunOptions::new().tool_names(["delete"]))
        .await
        .unwrap();
    assert_eq!(provider.requests()[0].tool_names, ["delete"]);
}

#[tokio::test]
async fn a_tool_making_nested_calls_cannot_reach_past_the_grant() {
    let dispatcher_slot: Arc<OnceLock<Dispatcher>> = Arc::default();
    let nested_results: Arc<Mutex<Vec<Value>>> = Arc::default();
    let outer = {
        let slot = Arc::clone(&dispatcher_slot);
        let results = Arc::clone(&nested_results);
        ToolDefinition::builder("outer").run(move |_args, ctx: ToolExecutionContext| {
            let slot = Arc::clone(&slot);
            let results = Arc::clone(&results);
            async move {
                let dispatcher = slot.get().expect("set before the run").clone();
                for (id, name) in [("n1", "read"), ("n2", "delete")] {
                    let result = dispatcher
                        .dispatch(ToolCall::new(id, name, json!({})), &ctx)
                        .await
                        .map_err(|tripwire| tripwire.to_string())?;
                    results
                        .lock()
                        .unwrap()
                        .push(serde_json::to_value(&result).unwrap());
                }
                Ok(json!("nested calls made"))
            }
        })
    };
    let registry = ToolRegistry::from_iter([outer, named("read"), named("delete")]);
    let dispatcher = Dispatcher::builder(registry).build();
    dispatcher_slot.set(dispatcher.clone()).unwrap();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "outer", json!({}))]),
        ProviderResponse::text("done"),
    ]);
    let mut session = Agent::new(dispatcher, provider).session("s");
    session
        .run("hi", RunOptions::new().tool_names(["outer", "read"]))
        .await
        .unwrap();

    let nested = nested_results.lock().unwrap();
    assert_eq!(nested[0]["value"], json!({"tool": "read"}));
    assert_eq!(nested[1]["error"]["code"], json!("tool_denied"));
}

#[tokio::test]
async fn the_dispatchers_validator_always_runs_and_the_run_validator_replaces_the_agents() {
    let calls: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let log = |name: &'static str, refuse: &'static str| {
        let calls = Arc::clone(&calls);
        validator_fn(move |_tool, args: &Value| {
            calls.lock().unwrap().push(name);
            if args.get(refuse).is_some() {
                Err(format!("{name} refuses {refuse}").into())
            } else {
                Ok(())
            }
        })
    };
    let dispatcher = Dispatcher::builder(registry())
        .validate(log("host", "host_no"))
        .build();
    let turns = || {
        ScriptedProvider::new([
            ProviderResponse::calls([
                ToolCall::new("c1", "read", json!({"host_no": 1})),
                ToolCall::new("c2", "read", json!({"agent_no": 1})),
                ToolCall::new("c3", "read", json!({"run_no": 1})),
            ]),
            ProviderResponse::text("done"),
        ])
    };
    let agent = Agent::new(dispatcher, turns())
        .with_config(AgentConfig::new().validator(log("agent", "agent_no")));

    let mut session = agent.session("s1");
    session.run("hi", RunOptions::new()).await.unwrap();
    let codes: Vec<_> = summary(&tool_rows(session.transcript()))
        .into_iter()
        .map(|(_, code)| code)
        .collect();
    assert_eq!(codes, ["validation_failed", "validation_failed", "ok"]);
    assert_eq!(
        std::mem::take(&mut *calls.lock().unwrap()),
        ["host", "host", "agent", "host", "agent"],
        "the host's validator first, the agent's after it in its own slot"
    );

    let agent = Agent::new(agent.dispatcher().clone(), turns())
        .with_config(AgentConfig::new().validator(log("agent", "agent_no")));
    let mut session = agent.session("s2");
    session
        .run("hi", RunOptions::new().validate(log("run", "run_no")))
        .await
        .unwrap();
    let codes: Vec<_> = summary(&tool_rows(session.transcript()))
        .into_iter()
        .map(|(_, code)| code)
        .collect();
    assert_eq!(codes, ["validation_failed", "ok", "validation_failed"]);
    assert!(
        !calls.lock().unwrap().contains(&"agent"),
        "the run's validator wins"
    );
}

#[tokio::test]
async fn a_tool_removed_during_a_run_is_unknown_to_its_later_calls() {
    let registry = registry();
    let live = registry.clone();
    registry
        .register(
            ToolDefinition::builder("retire")
                .run_sync(move |_, _| Ok(Value::from(live.remove("delete").is_some()))),
        )
        .unwrap();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "retire", json!({}))]),
        ProviderResponse::calls([
            ToolCall::new("c2", "delete", json!({})),
            ToolCall::new("c3", "read", json!({})),
        ]),
        ProviderResponse::text("done"),
    ]);
    let mut session = agent(registry.clone(), &provider).session("s");
    session.run("hi", RunOptions::new()).await.unwrap();
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].as_value(), Some(&json!(true)));
    assert_eq!(
        summary(&rows),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "unknown_tool".to_owned()),
            ("c3".to_owned(), "ok".to_owned())
        ]
    );
    assert!(!registry.contains("delete"));
}

#[tokio::test]
async fn tools_the_dispatchers_filters_refuse_are_neither_granted_nor_described() {
    // The host denied `delete` when it built the dispatcher: the model must not be shown a
    // tool it can never call, whether the run names it or not.
    let dispatcher = || {
        Dispatcher::builder(registry())
            .filter(ToolFilter::deny(["delete"]))
            .build()
    };
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "delete", json!({}))]),
        ProviderResponse::text("done"),
        ProviderResponse::text("done again"),
    ]);
    let mut session = Agent::new(dispatcher(), provider.clone()).session("s");
    session.run("hi", RunOptions::new()).await.unwrap();
    session
        .run("again", RunOptions::new().tool_names(["read", "delete"]))
        .await
        .unwrap();

    let requests = provider.requests();
    assert_eq!(requests[0].tool_names, ["read", "write"]);
    assert_eq!(requests[2].tool_names, ["read"]);
    assert_eq!(
        summary(&tool_rows(session.transcript())),
        [("c1".to_owned(), "tool_denied".to_owned())],
        "still refused when called by name"
    );

    // A skill that needs the denied tool finds it missing, as the host-active set lacks it.
    let skill = Skill::new("cleanup").with_tool_names(["delete"]);
    let provider = ScriptedProvider::new([ProviderResponse::text("never")]);
    let mut session = Agent::new(dispatcher(), provider.clone())
        .with_config(AgentConfig::new().skills([skill]))
        .session("s2");
    let error = session.run("hi", RunOptions::new()).await.unwrap_err();
    assert!(
        matches!(error, RunError::MissingSkillTools { .. }),
        "{error:?}"
    );
    assert!(provider.requests().is_empty());
}
