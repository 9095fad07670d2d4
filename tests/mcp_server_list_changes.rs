//! The MCP server tells its clients when the tools they could list change: handshake-era
//! sessions by `notifications/tools/list_changed`, 2026-07-28 clients on the stream of their
//! `subscriptions/listen`, in memory (the stdio transport's framing) and over streamable HTTP.

mod mcp_server_support;

use std::future::Future;
use std::time::Duration;

use mcp_server_support::{TestClient, fixture};
use prism::ToolDefinition;
use prism::mcp::{HttpOptions, McpHttpServer, McpServer};
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{RoleClient, RunningService, Subscription};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

type Client = RunningService<RoleClient, TestClient>;

/// Generous: the machine running the tests may be busy.
const PATIENCE: Duration = Duration::from_secs(30);

async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, future)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

async fn connect(server: &McpServer, client: TestClient) -> Client {
    let transport = mcp_server_support::serve_in_memory(server, 64 * 1024);
    within(
        "the handshake",
        mcp_server_support::start(client, transport),
    )
    .await
}

async fn serve(server: &McpServer) -> McpHttpServer {
    let _ = rustls::crypto::ring::default_provider().install_default();
    server
        .clone()
        .serve_http(HttpOptions::bind(([127, 0, 0, 1], 0).into()))
        .await
        .expect("binds a free loopback port")
}

fn echo(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .parameters(json!({"type": "object"}))
        .run_sync(|args: &Value, _| Ok(args.clone()))
}

/// The names of every tool the client is shown.
async fn listed(client: &Client) -> Vec<String> {
    let tools = within("tools/list", client.list_all_tools()).await.unwrap();
    tools
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

/// Waits until the client has heard more than `seen` `tools/list_changed` notifications, and
/// returns how many it has heard.
async fn heard_after(client: &Client, seen: usize) -> usize {
    let mut changes = client.service().list_changes.subscribe();
    let heard = within(
        "notifications/tools/list_changed",
        changes.wait_for(|count| *count > seen),
    )
    .await
    .expect("the client's counter lives as long as the client");
    *heard
}

/// The next notification on `subscription`, which must say the tool list changed.
async fn next_list_change(subscription: &mut Subscription) {
    let notification = within("the subscription's next notification", subscription.next())
        .await
        .expect("the subscription carries valid messages")
        .expect("the subscription is still open");
    assert!(
        matches!(
            notification,
            ServerNotification::ToolListChangedNotification(_)
        ),
        "{notification:?}"
    );
}

/// Registers `late` and then removes `add`, checking after each that the handshake-era `client`
/// is told, and that a fresh `tools/list` shows the change.
async fn a_handshake_era_client_hears_both_changes(
    fixture: &mcp_server_support::Fixture,
    client: &Client,
) {
    assert!(!listed(client).await.contains(&"late".to_owned()));
    fixture.registry.register(echo("late")).unwrap();
    let heard = heard_after(client, 0).await;
    assert!(listed(client).await.contains(&"late".to_owned()));

    assert!(fixture.registry.remove("add").is_some());
    heard_after(client, heard).await;
    let now = listed(client).await;
    assert!(
        now.contains(&"late".to_owned()) && !now.contains(&"add".to_owned()),
        "{now:?}"
    );
}

#[tokio::test]
async fn the_server_says_its_tool_list_can_change() {
    let fixture = fixture();
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    let info = client
        .peer_info()
        .expect("the handshake gave the server's info");
    let tools = info
        .capabilities
        .tools
        .as_ref()
        .expect("the server has tools");
    assert_eq!(tools.list_changed, Some(true));
    within("the client's end", client.cancel()).await.unwrap();
}

#[tokio::test]
async fn a_handshake_era_client_is_told_when_a_tool_is_registered_or_removed() {
    let fixture = fixture();
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    a_handshake_era_client_hears_both_changes(&fixture, &client).await;
    within("the client's end", client.cancel()).await.unwrap();
}

/// A change made as soon as the handshake is over, before the client listed anything, is still
/// announced: the session's starting point is when it opened, not when it first listed.
#[tokio::test]
async fn a_change_right_after_the_handshake_is_announced() {
    let fixture = fixture();
    let client = connect(&fixture.server, TestClient::handshake_era()).await;
    fixture.registry.register(echo("early")).unwrap();
    heard_after(&client, 0).await;
    assert!(listed(&client).await.contains(&"early".to_owned()));
    within("the client's end", client.cancel()).await.unwrap();
}

#[tokio::test]
async fn every_connected_session_is_told() {
    let fixture = fixture();
    let first = connect(&fixture.server, TestClient::handshake_era()).await;
    let second = connect(&fixture.server, TestClient::handshake_era()).await;
    fixture.registry.register(echo("late")).unwrap();
    heard_after(&first, 0).await;
    heard_after(&second, 0).await;
    for client in [first, second] {
        within("the client's end", client.cancel()).await.unwrap();
    }
}

#[tokio::test]
async fn a_current_client_that_listens_is_told_on_its_stream() {
    let fixture = fixture();
    let client = connect(&fixture.server, TestClient::current()).await;
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = within("the acknowledgment", client.peer().listen(filter))
        .await
        .expect("the server accepts subscriptions/listen");
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));

    fixture.registry.register(echo("late")).unwrap();
    next_list_change(&mut subscription).await;
    assert!(listed(&client).await.contains(&"late".to_owned()));

    assert!(fixture.registry.remove("late").is_some());
    next_list_change(&mut subscription).await;
    assert!(!listed(&client).await.contains(&"late".to_owned()));

    within("the subscription's end", subscription.cancel())
        .await
        .unwrap();
    within("the client's end", client.cancel()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_era_session_over_http_is_told() {
    let fixture = fixture();
    let server = serve(&fixture.server).await;
    let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp"));
    let client = within(
        "the handshake",
        mcp_server_support::start(TestClient::handshake_era(), transport),
    )
    .await;
    a_handshake_era_client_hears_both_changes(&fixture, &client).await;
    within("the client's end", client.cancel()).await.unwrap();
    within("the shutdown", server.shutdown()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_current_client_over_http_is_told_on_its_stream() {
    let fixture = fixture();
    let server = serve(&fixture.server).await;
    let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp"));
    let client = within(
        "the first request",
        mcp_server_support::start(TestClient::current(), transport),
    )
    .await;
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = within("the acknowledgment", client.peer().listen(filter))
        .await
        .expect("the server accepts subscriptions/listen");
    fixture.registry.register(echo("late")).unwrap();
    next_list_change(&mut subscription).await;
    assert!(listed(&client).await.contains(&"late".to_owned()));
    within("the subscription's end", subscription.cancel())
        .await
        .unwrap();
    within("the client's end", client.cancel()).await.unwrap();
    within("the shutdown", server.shutdown()).await;
}
