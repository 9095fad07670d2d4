//! A remote tool that declares an output schema is held to it: a successful result whose
//! `structuredContent` breaks the schema, or has none, is an error naming where it fails, never
//! a success; a remote error is not checked.

use serde_json::json;

use super::outcome::RemoteOutcome;
use super::scripted_server::{completed, connected, scripted_server};
use crate::context::ToolExecutionContext;
use crate::dispatch::{CollectingSink, InMemoryLedger};
use crate::{Dispatcher, ToolCall, ToolRegistry};

/// The token the scripted server is given as its secret.
const TOKEN: &str = "tok-9c41e7b2a05d36f8";

/// A server whose tools all declare the same output schema (an integer `n`, required, and any
/// other member an integer): `good` answers `{"n": 1}`, `bad` a string `n`, `leaky` a member
/// named after its token, `bare` only a text block, `fail` an error whose value breaks the
/// schema too, and `unlisted` (not in the list) a value that would break it.
const SHAPED: &str = r#"    *'"method":"tools/list"'*) s='{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":{"type":"integer"}}'; printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"good","inputSchema":{"type":"object"},"outputSchema":%s},{"name":"bad","inputSchema":{"type":"object"},"outputSchema":%s},{"name":"leaky","inputSchema":{"type":"object"},"outputSchema":%s},{"name":"bare","inputSchema":{"type":"object"},"outputSchema":%s},{"name":"fail","inputSchema":{"type":"object"},"outputSchema":%s}]}}\n' "$id" "$s" "$s" "$s" "$s" "$s" ;;
    *'"method":"tools/call"'*'"name":"good"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"one"}],"structuredContent":{"n":1}}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"bad"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":{"n":"one"}}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"leaky"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":{"n":1,"%s":"x"}}}\n' "$id" "$API_TOKEN" ;;
    *'"method":"tools/call"'*'"name":"bare"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"one"}]}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"fail"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"no such zone"}],"structuredContent":{"n":"none"},"isError":true}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"unlisted"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":{"n":"one"}}}\n' "$id" ;;"#;

/// The error a direct call of `tool` ends with, once the tools are listed.
async fn refused(tool: &str) -> crate::ToolError {
    let client = connected(scripted_server("shaped", SHAPED).secret_env("API_TOKEN", TOKEN)).await;
    client.tools().await.unwrap();
    let outcome = client
        .call(tool, json!({}), &ToolExecutionContext::new())
        .await;
    client.close().await;
    match outcome {
        Err(error) => error,
        Ok(outcome) => panic!("`{tool}` should fail, got {outcome:?}"),
    }
}

#[tokio::test]
async fn a_result_that_matches_the_schema_keeps_its_value() {
    let client = connected(scripted_server("shaped", SHAPED)).await;
    client.tools().await.unwrap();
    let output = completed(&client, "good").await;
    assert_eq!(output.value, json!({"n": 1}));
    assert_eq!(output.content()[0].as_text(), Some("one"));
    client.close().await;
}

#[tokio::test]
async fn a_result_that_breaks_the_schema_is_an_error_naming_where() {
    let error = refused("bad").await;
    assert_eq!(error.code().as_str(), "mcp_protocol_error");
    let message = error.message();
    assert!(message.contains("output schema"), "{message}");
    assert!(message.contains("/n"), "the pointer: {message}");
    assert!(message.contains("integer"), "the reason: {message}");
}

#[tokio::test]
async fn a_result_without_structured_content_is_an_error_when_a_schema_is_declared() {
    let error = refused("bare").await;
    assert_eq!(error.code().as_str(), "mcp_protocol_error");
    assert!(
        error.message().contains("structuredContent"),
        "{}",
        error.message()
    );
}

#[tokio::test]
async fn a_remote_error_is_not_checked_against_the_schema() {
    let client = connected(scripted_server("shaped", SHAPED)).await;
    client.tools().await.unwrap();
    let outcome = client
        .call("fail", json!({}), &ToolExecutionContext::new())
        .await;
    match outcome {
        Ok(RemoteOutcome::Failed(message)) => assert_eq!(message, "no such zone"),
        other => panic!("the remote error, got {other:?}"),
    }
    client.close().await;
}

/// The pointer of a violation may be made of the server's keys: one that quotes the endpoint's
/// secret has it taken out.
#[tokio::test]
async fn a_secret_in_the_breaking_value_stays_out_of_the_message() {
    let error = refused("leaky").await;
    let message = error.message();
    assert!(!message.contains(TOKEN), "{message}");
    assert!(message.contains("[REDACTED]"), "where it fails: {message}");
}

/// Through the dispatcher, a result that breaks its schema fails the call, and neither its
/// events nor its ledger rows carry the endpoint's secret the result quoted.
#[tokio::test]
async fn a_breaking_result_is_a_failed_call_whose_rows_and_events_never_carry_the_secret() {
    let client = connected(scripted_server("shaped", SHAPED).secret_env("API_TOKEN", TOKEN)).await;
    let tools = client.tools().await.unwrap().into_definitions();
    let ledger = InMemoryLedger::default();
    let events = CollectingSink::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(tools))
        .ledger(ledger.clone())
        .events(events.clone())
        .build();
    let ctx = ToolExecutionContext::new();
    let good = dispatcher
        .dispatch(ToolCall::new("c-good", "good", json!({})), &ctx)
        .await
        .unwrap();
    assert!(good.error_info().is_none(), "{good:?}");
    assert_eq!(good.as_value(), Some(&json!({"n": 1})));

    let leaky = dispatcher
        .dispatch(ToolCall::new("c-leaky", "leaky", json!({})), &ctx)
        .await
        .unwrap();
    let error = leaky.error_info().expect("a failed call");
    assert_eq!(error.code.as_str(), "mcp_protocol_error");
    assert!(!error.message.contains(TOKEN), "{}", error.message);
    let rows = serde_json::to_string(&ledger.records()).unwrap();
    assert!(!rows.contains(TOKEN), "a ledger row holds the token");
    let seen = format!("{:?}", events.events());
    assert!(!seen.contains(TOKEN), "an event holds the token");
    client.close().await;
}

/// A tool not listed yet has no declared schema to be held to: its result is taken as it is.
#[tokio::test]
async fn a_tool_never_listed_is_not_checked() {
    let client = connected(scripted_server("shaped", SHAPED)).await;
    let output = completed(&client, "unlisted").await;
    assert_eq!(output.value, json!({"n": "one"}));
    client.close().await;
}

/// An output schema the validator cannot compile costs its tool, with the reason, as an input
/// schema the host cannot take does.
#[tokio::test]
async fn a_tool_whose_output_schema_does_not_compile_is_skipped() {
    const BROKEN: &str = r#"    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"ok","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}},{"name":"broken","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":5}}}}]}}\n' "$id" ;;"#;
    let client = connected(scripted_server("broken", BROKEN)).await;
    let tools = client.tools().await.unwrap();
    let names: Vec<_> = tools.definitions().iter().map(|tool| tool.name()).collect();
    assert_eq!(names, ["ok"]);
    let [skipped] = tools.skipped() else {
        panic!("one tool skipped: {:?}", tools.skipped());
    };
    assert_eq!(skipped.name, "broken");
    assert!(
        skipped.reason.contains("output schema"),
        "{}",
        skipped.reason
    );
    assert!(
        skipped.reason.contains("/properties/n/type"),
        "{}",
        skipped.reason
    );
    client.close().await;
}

/// A server whose one tool, `pinned`, declares an output schema holding its token (a `const`
/// of 180 bytes and the token).
const PINNED: &str = r#"    *'"method":"tools/list"'*) pad=$(head -c 180 /dev/zero | tr '\0' x); printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"pinned","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"k":{"const":"%s%s"}}}}]}}\n' "$id" "$pad" "$API_TOKEN" ;;"#;

/// A schema that checks values against the server's token cannot lose the token without
/// changing what it accepts: the tool is skipped, and neither the definitions nor the reason
/// (which a validator's message, cut to a bound, could have filled) keep any part of it.
#[tokio::test]
async fn a_tool_whose_output_schema_pins_the_servers_token_is_skipped() {
    let client = connected(scripted_server("pinned", PINNED).secret_env("API_TOKEN", TOKEN)).await;
    let tools = client.tools().await.unwrap();
    assert!(tools.definitions().is_empty(), "{:?}", tools.definitions());
    let [skipped] = tools.skipped() else {
        panic!("one tool skipped: {:?}", tools.skipped());
    };
    assert_eq!(skipped.name, "pinned");
    assert!(skipped.reason.contains("output schema"), "{skipped:?}");
    // Not even the start of the token, as a cut would leave it.
    assert!(!skipped.reason.contains(&TOKEN[..8]), "{skipped:?}");
    client.close().await;
}
