//! `search_tools` across a suspension: a resumed search covers what the suspended turn's search
//! covered (its narrowed tools), even when hidden calls are allowed.

mod run_support;

#[path = "support/search.rs"]
mod search_support;

use prism::run::ScriptedProvider;
use prism::run::{
    AgentConfig, ApprovalDecision, DisclosureMode, InMemoryApprovalStore, approval_fn, narrowing_fn,
};
use prism::{Agent, Dispatcher, ProviderResponse, RunOptions, ToolCall, ToolRegistry};

use run_support::tool_rows;
use search_support::catalog;
use serde_json::json;

/// An agent in search mode whose narrowing hides `stock_quote` on every turn while hidden calls
/// are allowed (a hidden tool is callable by name, but search covers only the narrowed list);
/// `send_email` waits for approval.
fn agent(provider: ScriptedProvider) -> Agent {
    let registry = ToolRegistry::from_iter(catalog());
    let config = AgentConfig::new()
        .tools_disclosure(DisclosureMode::Search { top_k: 2 })
        .allow_hidden_tool_calls(true)
        .tool_narrowing(narrowing_fn(|request| {
            let ids = request.tool_ids.iter().map(|id| id.to_string());
            Ok::<_, String>(ids.filter(|id| id != "stock_quote").collect::<Vec<_>>())
        }));
    Agent::new(Dispatcher::builder(registry).build(), provider)
        .with_config(config)
        .with_approvals(InMemoryApprovalStore::new())
        .with_approval_policy(approval_fn(|tool, _| tool.name() == "send_email"))
}

/// Narrowing hides `stock_quote` on every turn; hidden calls are allowed (so a hidden tool is
/// callable by name, but search must still not list or activate it: search only ever covers the
/// turn's narrowed list). The model calls `send_email` (which waits for approval) and then
/// `search_tools` for "stock price" in the same turn, which runs only once the run resumes: it
/// must cover the narrowed list, as it would have in the turn, not everything the (wider)
/// dispatch grant allows.
#[tokio::test]
async fn a_resumed_search_tools_call_stays_within_the_turns_narrowing() {
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "send_email", json!({})),
            ToolCall::new(
                "c2",
                "search_tools",
                json!({"query": "stock price share ticker"}),
            ),
        ]),
        ProviderResponse::text("Sent."),
    ]);
    let agent = agent(provider);
    let mut session = agent.session("s");
    let outcome = session
        .run("Mail my broker", RunOptions::new())
        .await
        .unwrap();
    let key = outcome.pending_approvals()[0].key.clone();
    session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();

    let rows = tool_rows(session.transcript());
    let found = rows[1].as_value().unwrap().as_str().unwrap().to_owned();
    assert!(
        !found.contains("stock_quote"),
        "search listed a tool hidden by this turn's narrowing: {found:?}"
    );
    assert!(
        !session.activated_tools().contains("stock_quote"),
        "search activated a tool hidden by this turn's narrowing"
    );
}

/// The same turn without a suspension keeps `search_tools` within the narrowing.
#[tokio::test]
async fn control_an_unsuspended_search_tools_call_stays_within_the_narrowing() {
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new(
            "c2",
            "search_tools",
            json!({"query": "stock price share ticker"}),
        )]),
        ProviderResponse::text("Done."),
    ]);
    let agent = agent(provider);
    let mut session = agent.session("s");
    session
        .run("Mail my broker", RunOptions::new())
        .await
        .unwrap();
    let rows = tool_rows(session.transcript());
    let found = rows[0].as_value().unwrap().as_str().unwrap().to_owned();
    assert!(!found.contains("stock_quote"), "{found:?}");
}
