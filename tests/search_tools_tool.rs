//! The generated `search_tools` tool and session activation.

use prism::guard::permission_fn;
use prism::search::{
    ActivatedTools, MAX_ACTIVATED_TOOLS, MAX_TOP_K, SEARCH_TOOLS_NAME, SearchConfig, SearchLimits,
    SharedActivatedTools,
};
use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};
use serde_json::json;

#[path = "support/search.rs"]
mod support;
use support::{call_search, catalog, names, tool};

#[tokio::test]
async fn search_tools_returns_inert_lines_and_activates_what_it_found() {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools);
    let activated = SharedActivatedTools::default();
    let turn = search.disclose(&tools, "hello", &activated);
    assert!(turn.tools().is_empty());
    let search_tool = turn.search_tool().unwrap();
    assert_eq!(
        search_tool.parameters().unwrap()["required"],
        json!(["query"])
    );

    let text = call_search(search_tool, json!({"query": "email messages"}))
        .await
        .unwrap();
    assert_eq!(
        text,
        "send_email: Sends an email message to one or more recipients. [matched: email, messages]\n\
         read_inbox: Lists the newest email messages in the inbox. [matched: email, messages]"
    );
    assert_eq!(
        activated.snapshot().names().collect::<Vec<_>>(),
        ["send_email", "read_inbox"]
    );

    // The next turn discloses the activated tools whatever its query.
    let next = search.disclose(&tools, "thanks", &activated);
    assert_eq!(names(next.tools()), ["send_email", "read_inbox"]);

    let text = call_search(search_tool, json!({"query": "zzz"}))
        .await
        .unwrap();
    assert_eq!(text, "No tools matched the query.");
}

#[tokio::test]
async fn search_tools_only_searches_its_turns_input_list() {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools);
    let activated = SharedActivatedTools::default();
    let narrowed = vec![tools[2].clone()];
    let turn = search.disclose(&narrowed, "", &activated);
    let text = call_search(
        turn.search_tool().unwrap(),
        json!({"query": "email weather"}),
    )
    .await
    .unwrap();
    assert!(text.starts_with("get_weather:") && !text.contains("email:"));
    assert_eq!(
        activated.snapshot().names().collect::<Vec<_>>(),
        ["get_weather"]
    );
}

#[tokio::test]
async fn search_tools_bounds_k_and_notes_a_cut_query() {
    let tools: Vec<_> = (0..80)
        .map(|i| tool(&format!("report_{i}"), "Builds a sales report."))
        .collect();
    let limits = SearchLimits::default().with_max_query_bytes(12);
    let search = SearchConfig::default().with_limits(limits).index(&tools);
    let turn = search.disclose(&tools, "", &SharedActivatedTools::default());
    let search_tool = turn.search_tool().unwrap();

    let text = call_search(search_tool, json!({"query": "sales report", "k": 1000}))
        .await
        .unwrap();
    assert_eq!(text.lines().count(), MAX_TOP_K);
    let text = call_search(search_tool, json!({"query": "sales report"}))
        .await
        .unwrap();
    assert_eq!(text.lines().count(), 16);
    let text = call_search(
        search_tool,
        json!({"query": "sales report and more", "k": 2}),
    )
    .await
    .unwrap();
    assert_eq!(
        text.lines().next(),
        Some("Note: the query was cut to its first 12 bytes.")
    );
    assert_eq!(text.lines().count(), 3);
}

#[tokio::test]
async fn search_tools_refuses_bad_arguments_before_running() {
    let tools = catalog();
    let activated = SharedActivatedTools::default();
    let turn = SearchConfig::default()
        .index(&tools)
        .disclose(&tools, "", &activated);
    let search_tool = turn.search_tool().unwrap();
    for arguments in [
        json!({}),
        json!({"query": 3}),
        json!({"query": "email", "k": -1}),
        json!({"query": "email", "limit": 2}),
    ] {
        let error = call_search(search_tool, arguments).await.unwrap_err();
        assert!(
            error.starts_with("Invalid arguments for tool `search_tools`"),
            "{error}"
        );
    }
    assert!(activated.snapshot().is_empty());
}

#[tokio::test]
async fn a_refused_search_call_activates_nothing() {
    let tools = catalog();
    let activated = SharedActivatedTools::default();
    let turn = SearchConfig::default()
        .index(&tools)
        .disclose(&tools, "", &activated);
    let registry = ToolRegistry::from_iter([turn.search_tool().unwrap().clone()]);
    let call = || ToolCall::new("c1", SEARCH_TOOLS_NAME, json!({"query": "email"}));
    let ctx = ToolExecutionContext::new();

    let refusing = Dispatcher::builder(registry.clone())
        .permission(permission_fn(|_, _, _| Err("not now".into())))
        .build();
    let result = refusing.dispatch(call(), &ctx).await.unwrap();
    assert!(result.error_info().is_some());
    assert!(activated.snapshot().is_empty());

    let allowing = Dispatcher::builder(registry).build();
    let result = allowing.dispatch(call(), &ctx).await.unwrap();
    assert!(
        result
            .as_value()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("send_email")
    );
    assert!(activated.snapshot().contains("send_email"));
}

#[test]
fn activation_survives_a_stored_and_resumed_session_and_can_be_cleared() {
    let tools = catalog();
    let search = SearchConfig::default().index(&tools);
    let session = SharedActivatedTools::default();
    session.activate_all(["stock_quote"]);

    let stored = serde_json::to_value(session.snapshot()).unwrap();
    assert_eq!(stored, json!(["stock_quote"]));
    let resumed = SharedActivatedTools::new(serde_json::from_value(stored).unwrap());
    let turn = search.disclose(&tools, "hello", &resumed);
    assert_eq!(names(turn.tools()), ["stock_quote"]);

    resumed.clear();
    assert!(
        search
            .disclose(&tools, "hello", &resumed)
            .tools()
            .is_empty()
    );
}

#[test]
fn activation_keeps_the_newest_128_names() {
    let tools: Vec<_> = (0..130)
        .map(|i| tool(&format!("t{i}"), "Unrelated."))
        .collect();
    let search = SearchConfig::default().index(&tools);
    let session = SharedActivatedTools::default();
    session.activate_all(tools.iter().map(|tool| tool.name().to_owned()));
    let turn = search.disclose(&tools, "", &session);
    assert_eq!(turn.tools().len(), MAX_ACTIVATED_TOOLS);
    assert_eq!(turn.tools()[0].name(), "t2");
    let restored: ActivatedTools =
        serde_json::from_value(serde_json::to_value(session.snapshot()).unwrap()).unwrap();
    assert_eq!(restored.len(), MAX_ACTIVATED_TOOLS);
}
