//! Tool disclosure in the run layer: `All` is byte-identical to no setting; `Search` describes the
//! best matches plus `search_tools`, which is callable only during the turn that described it.

mod run_support;

#[path = "support/search.rs"]
mod search_support;

use prism::call::BlockReason;
use prism::dispatch::SecretRedactor;
use prism::guard::permission_fn;
use prism::registry::ToolFilter;
use prism::run::{
    AgentConfig, ApprovalDecision, DisclosureMode, InMemoryApprovalStore, RecordedRequest,
    RunEventKind, RunEventLog, ScriptedProvider, ToolsMetadata, approval_fn, narrowing_fn,
};
use prism::search::{ScoreError, ScoreRequest, SearchConfig, ToolScorer};
use prism::{
    Agent, Dispatcher, ProviderResponse, RunError, RunOptions, ToolCall, ToolDefinition,
    ToolExecutionContext, ToolRegistry,
};

use run_support::{summary, tool_rows};
use search_support::{catalog, tool};
use serde_json::json;

fn agent(provider: &ScriptedProvider) -> Agent {
    let registry = ToolRegistry::from_iter(catalog());
    Agent::new(Dispatcher::builder(registry).build(), provider.clone())
}

fn search(top_k: usize) -> DisclosureMode {
    DisclosureMode::Search { top_k }
}

fn described(requests: &[RecordedRequest]) -> Vec<Vec<String>> {
    requests
        .iter()
        .map(|request| request.tool_names.clone())
        .collect()
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ProviderResponse {
    ProviderResponse::calls([ToolCall::new(id, name, arguments)])
}

#[tokio::test]
async fn all_mode_sends_the_same_bytes_as_a_run_without_the_setting() {
    let script = || {
        ScriptedProvider::new([
            call("c1", "get_weather", json!({})),
            ProviderResponse::text("Sunny."),
        ])
    };
    let runs = [
        (AgentConfig::new(), RunOptions::new()),
        (
            AgentConfig::new().tools_disclosure(DisclosureMode::All),
            RunOptions::new(),
        ),
        (
            AgentConfig::new().tools_disclosure(search(2)),
            RunOptions::new().tools_disclosure(DisclosureMode::All),
        ),
    ];
    let mut recorded = Vec::new();
    for (config, options) in runs {
        let provider = script();
        let mut session = agent(&provider).with_config(config).session("s");
        session.run("Weather in Paris?", options).await.unwrap();
        recorded.push((provider.requests(), session.state()));
    }
    assert_eq!(recorded[0].0.len(), 2);
    assert_eq!(recorded[0].0[0].tool_names.len(), catalog().len());
    assert_eq!(recorded[0], recorded[1]);
    assert_eq!(recorded[0], recorded[2]);
}

#[tokio::test]
async fn search_mode_describes_the_best_matches_then_search_tools() {
    let provider = ScriptedProvider::new([ProviderResponse::text("Sunny.")]);
    let log = RunEventLog::new();
    let agent = agent(&provider).with_events(log.clone());
    let options = RunOptions::new().tools_disclosure(search(2));
    let mut session = agent.session("s");
    session
        .run("What is the weather in Paris?", options)
        .await
        .unwrap();

    let request = &provider.requests()[0];
    assert_eq!(request.tool_names, ["get_weather", "search_tools"]);
    // `search_tools` is part of the request: the hash covers it.
    let expected = ToolsMetadata::of_names(["get_weather", "search_tools"]);
    assert_eq!(request.metadata.tools, expected);
    assert!(
        log.events()
            .iter()
            .all(|event| !matches!(event.kind, RunEventKind::ToolsFullyDisclosed { .. }))
    );
}

#[tokio::test]
async fn the_run_setting_wins_over_the_agent() {
    let provider = ScriptedProvider::new([ProviderResponse::text("ok")]);
    let agent = agent(&provider).with_config(AgentConfig::new().tools_disclosure(search(4)));
    let mut session = agent.session("s");
    let narrower = RunOptions::new().tools_disclosure(search(1));
    session.run("weather or email?", narrower).await.unwrap();
    assert_eq!(
        provider.requests()[0].tool_names.len(),
        2,
        "one ranked tool"
    );
}

#[tokio::test]
async fn search_tools_finds_lines_and_activates_them_for_later_turns() {
    let provider = ScriptedProvider::new([
        call("c1", "search_tools", json!({"query": "translate"})),
        call("c2", "translate_text", json!({"text": "bonjour"})),
        ProviderResponse::text("Hello."),
    ]);
    let mut session = agent(&provider).session("s");
    let options = RunOptions::new().tools_disclosure(search(2));
    session.run("Say hello in English", options).await.unwrap();

    let rows = tool_rows(session.transcript());
    assert_eq!(
        rows[0].as_value(),
        Some(&json!(
            "translate_text: Translates text between languages. [matched: translate]"
        ))
    );
    assert_eq!(summary(&rows)[1], ("c2".to_owned(), "ok".to_owned()));
    let turns = described(&provider.requests());
    assert_eq!(turns[0], ["search_tools"]);
    assert_eq!(turns[1], ["translate_text", "search_tools"]);
    assert_eq!(turns[2], turns[1], "activation is stable across turns");
    assert_eq!(
        session.activated_tools().names().collect::<Vec<_>>(),
        ["translate_text"]
    );
}

#[tokio::test]
async fn activation_survives_a_stored_session_and_can_be_cleared() {
    let provider = ScriptedProvider::new([
        call("c1", "search_tools", json!({"query": "stock price"})),
        ProviderResponse::text("Found it."),
    ]);
    let agent = agent(&provider).with_config(AgentConfig::new().tools_disclosure(search(2)));
    let mut session = agent.session("s");
    session
        .run("Something about money", RunOptions::new())
        .await
        .unwrap();

    let stored = serde_json::to_value(session.state()).unwrap();
    assert_eq!(stored["activatedToolNames"], json!(["stock_quote"]));
    let mut restored = agent.restore(serde_json::from_value(stored).unwrap());
    provider.push(ProviderResponse::text("Again."));
    restored.run("hello", RunOptions::new()).await.unwrap();
    assert_eq!(
        described(&provider.requests())[2],
        ["stock_quote", "search_tools"]
    );

    restored.clear_activated_tools();
    provider.push(ProviderResponse::text("Fresh."));
    restored.run("hello", RunOptions::new()).await.unwrap();
    assert_eq!(described(&provider.requests())[3], ["search_tools"]);
    let state = serde_json::to_value(restored.state()).unwrap();
    assert!(state.get("activatedToolNames").is_none());
}

#[tokio::test]
async fn activation_survives_a_suspended_run_stored_and_resumed() {
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "search_tools", json!({"query": "stock price"})),
            ToolCall::new("c2", "send_email", json!({})),
        ]),
        ProviderResponse::text("Sent."),
    ]);
    // Every call asks for approval, except the run's own search_tools.
    let agent = agent(&provider)
        .with_config(AgentConfig::new().tools_disclosure(search(2)))
        .with_approvals(InMemoryApprovalStore::new())
        .with_approval_policy(approval_fn(|_, _| true));
    let mut session = agent.session("s");
    let outcome = session
        .run("Mail my broker", RunOptions::new())
        .await
        .unwrap();
    let pending = outcome.pending_approvals().to_vec();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].key.call_id.as_str(), "c2");

    let stored = serde_json::to_string(&session.state()).unwrap();
    let mut restored = agent.restore(serde_json::from_str(&stored).unwrap());
    restored
        .resume([ApprovalDecision::approve(&pending[0].key)])
        .await
        .unwrap();
    let rows = summary(&tool_rows(restored.transcript()));
    assert_eq!(
        rows,
        [("c1".into(), "ok".into()), ("c2".into(), "ok".into())]
    );
    let turns = described(&provider.requests());
    assert_eq!(
        turns,
        [vec!["search_tools"], vec!["stock_quote", "search_tools"]]
    );
}

#[tokio::test]
async fn a_search_tools_call_after_a_waiting_call_runs_when_the_run_resumes() {
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "send_email", json!({})),
            ToolCall::new("c2", "search_tools", json!({"query": "stock price"})),
        ]),
        ProviderResponse::text("Sent."),
    ]);
    let agent = agent(&provider)
        .with_config(AgentConfig::new().tools_disclosure(search(2)))
        .with_approvals(InMemoryApprovalStore::new())
        .with_approval_policy(approval_fn(|_, _| true));
    let mut session = agent.session("s");
    let outcome = session
        .run("Mail my broker", RunOptions::new())
        .await
        .unwrap();
    let key = outcome.pending_approvals()[0].key.clone();

    // `search_tools` never started before the run suspended: the resumed run still reaches it.
    let stored = serde_json::to_string(&session.state()).unwrap();
    let mut restored = agent.restore(serde_json::from_str(&stored).unwrap());
    restored
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    assert_eq!(
        summary(&tool_rows(restored.transcript())),
        [("c1".into(), "ok".into()), ("c2".into(), "ok".into())]
    );
    assert_eq!(
        described(&provider.requests())[1],
        ["stock_quote", "search_tools"],
        "what it found is activated"
    );
}

#[tokio::test]
async fn activated_names_are_inert_and_the_oldest_is_evicted_at_128() {
    let provider = ScriptedProvider::new([
        call("c1", "ghost_0", json!({})),
        call("c2", "search_tools", json!({"query": "stock price"})),
        ProviderResponse::text("Done."),
    ]);
    let agent = agent(&provider).with_config(AgentConfig::new().tools_disclosure(search(2)));
    let mut state = agent.session("s").state();
    state.activated_tool_names = (0..128).map(|i| format!("ghost_{i}")).collect();
    let mut session = agent.restore(state);
    session.run("hello", RunOptions::new()).await.unwrap();

    assert_eq!(described(&provider.requests())[0], ["search_tools"]);
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::UnknownTool));
    let activated = session.activated_tools();
    assert_eq!(activated.len(), 128);
    assert_eq!(activated.names().next(), Some("ghost_1"));
    assert_eq!(activated.names().last(), Some("stock_quote"));
}

#[tokio::test]
async fn a_host_tool_named_search_tools_fails_a_search_run_at_start() {
    let provider = ScriptedProvider::new([ProviderResponse::text("ok")]);
    let registry = ToolRegistry::from_iter(catalog());
    registry
        .register(tool("search_tools", "The host's own."))
        .unwrap();
    let agent = Agent::new(Dispatcher::builder(registry).build(), provider.clone());
    let mut session = agent.session("s");

    let error = session
        .run("hi", RunOptions::new().tools_disclosure(search(2)))
        .await
        .unwrap_err();
    assert_eq!(error, RunError::ReservedToolName);
    assert!(error.to_string().contains("`search_tools` is reserved"));
    assert!(session.transcript().is_empty() && provider.requests().is_empty());

    // Outside search mode it is an ordinary host tool; left out of the grant, it is no conflict.
    session.run("hi", RunOptions::new()).await.unwrap();
    assert!(
        provider.requests()[0]
            .tool_names
            .contains(&"search_tools".into())
    );
    provider.push(ProviderResponse::text("ok"));
    let granted = RunOptions::new()
        .tool_names(["get_weather"])
        .tools_disclosure(search(2));
    session.run("weather", granted).await.unwrap();
    assert_eq!(
        provider.requests()[1].tool_names,
        ["get_weather", "search_tools"]
    );
}

#[tokio::test]
async fn the_dispatchers_guards_apply_to_search_tools() {
    // Filters are known up front: refusing the name fails a search run before anything is sent.
    let provider = ScriptedProvider::new([ProviderResponse::text("ok")]);
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(catalog()))
        .filter(ToolFilter::deny(["search_tools"]))
        .build();
    let mut session = Agent::new(dispatcher, provider.clone()).session("s");
    let error = session
        .run("hi", RunOptions::new().tools_disclosure(search(2)))
        .await
        .unwrap_err();
    assert!(matches!(error, RunError::Misconfigured { .. }), "{error}");
    assert!(provider.requests().is_empty());

    // A permission policy decides per call: refused, and nothing is activated.
    let provider = ScriptedProvider::new([
        call("c1", "search_tools", json!({"query": "stock price"})),
        ProviderResponse::text("ok"),
    ]);
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(catalog()))
        .permission(permission_fn(|tool, _, _| match tool.name() {
            "search_tools" => Err("no searching".into()),
            _ => Ok(()),
        }))
        .build();
    let mut session = Agent::new(dispatcher, provider).session("s");
    let options = RunOptions::new().tools_disclosure(search(2));
    session.run("hi", options).await.unwrap();
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::PermissionDenied));
    assert!(session.activated_tools().is_empty());
}

#[tokio::test]
async fn search_covers_only_the_narrowed_grant_and_describing_never_authorises() {
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new(
                "c1",
                "search_tools",
                json!({"query": "email translate weather", "k": 5}),
            ),
            ToolCall::new("c2", "stock_quote", json!({})),
            ToolCall::new("c3", "translate_text", json!({})),
            ToolCall::new("c4", "send_email", json!({})),
        ]),
        ProviderResponse::text("Done."),
    ]);
    let agent = agent(&provider).with_config(AgentConfig::new().tools_disclosure(search(1)));
    let mut state = agent.session("s").state();
    state.activated_tool_names = ["translate_text"].into_iter().collect();
    let mut session = agent.restore(state);
    // Granted: everything but send_email. Visible: everything granted but translate_text.
    let options = RunOptions::new()
        .tool_names(["get_weather", "stock_quote", "translate_text", "read_inbox"])
        .tool_narrowing(narrowing_fn(|request| {
            let ids = request.tool_ids.iter().map(|id| id.to_string());
            Ok::<_, String>(ids.filter(|id| id != "translate_text").collect::<Vec<_>>())
        }));
    session.run("What is the weather?", options).await.unwrap();

    // Activated but hidden this turn: not described.
    assert_eq!(
        described(&provider.requests())[0],
        ["get_weather", "search_tools"]
    );
    let rows = tool_rows(session.transcript());
    // Only the visible read_inbox and get_weather can match; never translate_text or send_email.
    let found = rows[0].as_value().unwrap().as_str().unwrap();
    let mut names: Vec<&str> = found
        .lines()
        .map(|line| line.split(':').next().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["get_weather", "read_inbox"]);
    assert_eq!(
        summary(&rows)[1..],
        [
            ("c2".to_owned(), "ok".to_owned()),
            ("c3".to_owned(), "tool_denied".to_owned()),
            ("c4".to_owned(), "tool_denied".to_owned()),
        ],
        "undescribed but visible: callable; hidden or not granted: denied"
    );
}

#[tokio::test]
async fn search_tools_is_callable_only_in_the_turn_that_described_it() {
    let provider = ScriptedProvider::new([
        call("c1", "search_tools", json!({"query": "weather"})),
        ProviderResponse::text("All mode."),
    ]);
    let mut session = agent(&provider).session("s");
    session.run("hi", RunOptions::new()).await.unwrap();
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::UnknownTool));
    assert!(session.activated_tools().is_empty());

    // A search-mode turn narrowed to nothing describes no search_tools and cannot call it.
    provider.push(call("c2", "search_tools", json!({"query": "weather"})));
    provider.push(ProviderResponse::text("Nothing visible."));
    let options = RunOptions::new()
        .tools_disclosure(search(2))
        .tool_narrowing(narrowing_fn(|_| Ok::<_, String>(Vec::<String>::new())));
    session.run("weather", options).await.unwrap();
    assert!(provider.requests()[2].tool_names.is_empty());
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[1].block_reason(), Some(BlockReason::UnknownTool));

    // Outside any run, the dispatcher does not know it.
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(catalog())).build();
    let direct = ToolCall::new("c3", "search_tools", json!({"query": "weather"}));
    let result = dispatcher
        .dispatch(direct, &ToolExecutionContext::new())
        .await;
    assert_eq!(
        result.unwrap().block_reason(),
        Some(BlockReason::UnknownTool)
    );
}

/// A scorer that always fails, mentioning a secret.
struct Failing;

impl ToolScorer for Failing {
    fn score(&self, _: &ScoreRequest<'_>, _: &mut [f32]) -> Result<(), ScoreError> {
        Err(ScoreError::new("backend sk-secret is down"))
    }
}

fn full_disclosures(log: &RunEventLog) -> Vec<(u32, String, String)> {
    log.events()
        .into_iter()
        .filter_map(|event| match event.kind {
            RunEventKind::ToolsFullyDisclosed {
                turn,
                reason,
                message,
            } => Some((turn, reason, message)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn search_failures_describe_every_tool_and_say_so() {
    let provider = ScriptedProvider::new([ProviderResponse::text("ok")]);
    let log = RunEventLog::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(catalog()))
        .redactor(SecretRedactor::new(["sk-secret"]))
        .build();
    let options = RunOptions::new()
        .tools_disclosure(search(2))
        .tool_search(SearchConfig::default().with_scorer(Failing));
    Agent::new(dispatcher, provider.clone())
        .with_events(log.clone())
        .session("s")
        .run("weather", options)
        .await
        .unwrap();
    assert_eq!(provider.requests()[0].tool_names.len(), catalog().len());
    let reported = full_disclosures(&log);
    assert_eq!(reported.len(), 1);
    assert_eq!(
        (reported[0].0, reported[0].1.as_str()),
        (1, "scorer_failed")
    );
    assert!(reported[0].2.contains("backend") && !reported[0].2.contains("sk-secret"));

    // Over the index cap: every tool, no search_tools, and an event.
    let many: Vec<ToolDefinition> = (0..1025)
        .map(|i| tool(&format!("tool_{i}"), "A numbered tool."))
        .collect();
    let provider = ScriptedProvider::new([ProviderResponse::text("ok")]);
    let log = RunEventLog::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(many)).build();
    Agent::new(dispatcher, provider.clone())
        .with_events(log.clone())
        .session("s")
        .run("tool", RunOptions::new().tools_disclosure(search(2)))
        .await
        .unwrap();
    let names = &provider.requests()[0].tool_names;
    assert_eq!(names.len(), 1025);
    assert!(!names.contains(&"search_tools".to_owned()));
    assert_eq!(full_disclosures(&log)[0].1, "too_many_tools");
}

/// A scorer whose long message ends in a secret, across the message bound.
struct Verbose;

impl ToolScorer for Verbose {
    fn score(&self, _: &ScoreRequest<'_>, _: &mut [f32]) -> Result<(), ScoreError> {
        Err(ScoreError::new(format!(
            "{} sk-straddling-secret",
            "x".repeat(190)
        )))
    }
}

#[tokio::test]
async fn a_scorer_message_is_redacted_before_it_is_cut() {
    let log = RunEventLog::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(catalog()))
        .redactor(SecretRedactor::new(["sk-straddling-secret"]))
        .build();
    let options = RunOptions::new()
        .tools_disclosure(search(2))
        .tool_search(SearchConfig::default().with_scorer(Verbose));
    let provider = ScriptedProvider::new([ProviderResponse::text("ok")]);
    Agent::new(dispatcher, provider)
        .with_events(log.clone())
        .session("s")
        .run("weather", options)
        .await
        .unwrap();
    let message = &full_disclosures(&log)[0].2;
    assert!(!message.contains("sk-strad"), "{message}");
    assert!(message.len() < 300, "the message is bounded: {message}");
}

#[tokio::test]
async fn search_disclosure_is_deterministic_and_runs_on_any_task() {
    let mut recorded = Vec::new();
    for _ in 0..2 {
        let provider = ScriptedProvider::new([
            call(
                "c1",
                "search_tools",
                json!({"query": "email inbox messages"}),
            ),
            ProviderResponse::text("Done."),
        ]);
        let mut session = agent(&provider).session("s");
        let options = RunOptions::new().tools_disclosure(search(3));
        // Spawned: a search-mode run is `Send`, like any other.
        let state = tokio::spawn(async move {
            session
                .run("Check my mail and the weather", options)
                .await
                .unwrap();
            session.state()
        });
        recorded.push((state.await.unwrap(), provider.requests()));
    }
    assert_eq!(recorded[0].1.len(), 2);
    assert_eq!(recorded[0], recorded[1]);
}
