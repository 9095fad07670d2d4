//! The MCP server over streamable HTTP: rmcp's HTTP client in both protocol eras, the hardening
//! of the edge (Host, Origin, body bound, rate limit), and a re-issued call after a dropped
//! stream, which the effect store answers without a second effect.

mod mcp_server_support;

use std::num::NonZeroU32;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_server_support::{TestClient, first_text, fixture};
use prism::mcp::{HttpOptions, McpHttpServer, RateLimitLayer};
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    params
}

fn local() -> HttpOptions {
    HttpOptions::bind(([127, 0, 0, 1], 0).into())
}

async fn serve(server: &prism::mcp::McpServer, options: HttpOptions) -> McpHttpServer {
    let _ = rustls::crypto::ring::default_provider().install_default();
    server
        .clone()
        .serve_http(options)
        .await
        .expect("binds a free loopback port")
}

/// Sends one raw HTTP/1.1 request and returns the status code.
async fn status_of(server: &McpHttpServer, headers: &[(&str, &str)], body: &str) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = vec![0; 64];
    let read = stream.read(&mut response).await.unwrap();
    let head = String::from_utf8_lossy(&response[..read]).to_string();
    head.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {head:?}"))
}

/// A server letting each client two requests at once, then one an hour: a third request is
/// over the limit, however slow the machine.
async fn rate_limited_to_two(server: &prism::mcp::McpServer) -> McpHttpServer {
    let mut options = local();
    options.rate_limit =
        RateLimitLayer::per_period(Duration::from_secs(3600), NonZeroU32::new(2).unwrap());
    serve(server, options).await
}

/// An `initialize` from a local client (it opens a session), and the status it got.
async fn initialize(server: &McpHttpServer) -> u16 {
    let host = server.local_addr().to_string();
    status_of(server, &[("Host", &host)], INITIALIZE).await
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_eras_list_and_call_over_http() {
    let fixture = fixture();
    let server = serve(&fixture.server, local()).await;
    for client in [TestClient::current(), TestClient::handshake_era()] {
        let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp"));
        let client = mcp_server_support::start(client, transport).await;
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 7);
        let sum = client
            .call_tool(call("add", json!({"a": 20, "b": 22})))
            .await
            .unwrap();
        assert_eq!(first_text(&sum), "42");
        let denied = client.call_tool(call("hidden", json!({}))).await.unwrap();
        assert_eq!(denied.is_error, Some(true));
        // Approval through input_required (current) or an elicitation mid-call (handshake era).
        let wiped = client
            .call_tool(call("wipe", json!({"path": "/tmp/h"})))
            .await
            .unwrap();
        assert_eq!(first_text(&wiped), "wiped /tmp/h");
        client.cancel().await.unwrap();
    }
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 2);
    server.shutdown().await;
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused() {
    let fixture = fixture();
    let server = serve(&fixture.server, local()).await;
    let host = server.local_addr().to_string();
    assert_eq!(initialize(&server).await, 200);
    assert_eq!(
        status_of(&server, &[("Host", "attacker.example")], INITIALIZE).await,
        403,
        "a DNS-rebinding name is refused"
    );
    assert_eq!(
        status_of(
            &server,
            &[("Host", &host), ("Origin", "https://attacker.example")],
            INITIALIZE
        )
        .await,
        403,
        "another site's page is refused"
    );
    assert_eq!(
        status_of(
            &server,
            &[("Host", &host), ("Origin", "http://localhost:3000")],
            INITIALIZE
        )
        .await,
        200,
        "a local page is let through"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn bodies_over_the_bound_are_refused() {
    let fixture = fixture();
    let mut options = local();
    options.max_body_bytes = 1024;
    let server = serve(&fixture.server, options).await;
    let host = server.local_addr().to_string();
    let padded = INITIALIZE.replace("\"raw\"", &format!("\"{}\"", "x".repeat(2048)));
    assert_eq!(status_of(&server, &[("Host", &host)], &padded).await, 413);
    assert_eq!(initialize(&server).await, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn each_client_is_rate_limited() {
    let fixture = fixture();
    let server = rate_limited_to_two(&fixture.server).await;
    assert_eq!(initialize(&server).await, 200);
    assert_eq!(initialize(&server).await, 200);
    assert_eq!(initialize(&server).await, 429);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_reissued_after_a_dropped_stream_does_not_repeat_its_effect() {
    let fixture = fixture();
    let server = serve(&fixture.server, local()).await;
    let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp"));
    let first = mcp_server_support::start(TestClient::handshake_era(), transport).await;
    let request =
        ClientRequest::CallToolRequest(CallToolRequest::new(call("pay", json!({"cents": 500}))));
    let _pending = first
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    // The client goes away mid-call: its session and stream close without a cancellation.
    tokio::time::sleep(Duration::from_millis(50)).await;
    first.cancel().await.unwrap();
    // The payment still completes, and records its outcome.
    for _ in 0..400 {
        if fixture.paid.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        fixture.paid.load(Ordering::SeqCst),
        1,
        "the dropped call ran to its end"
    );

    let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp"));
    let again = mcp_server_support::start(TestClient::current(), transport).await;
    let mut replayed = None;
    for _ in 0..100 {
        let result = again
            .call_tool(call("pay", json!({"cents": 500})))
            .await
            .unwrap();
        // Until the first call's outcome is recorded, its claim is reported in flight.
        if result.is_error != Some(true) {
            replayed = Some(result);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let replayed = replayed.expect("the recorded outcome is returned");
    assert_eq!(
        replayed.structured_content,
        Some(json!({"paid": 500, "payment": 1}))
    );
    assert_eq!(
        fixture.paid.load(Ordering::SeqCst),
        1,
        "the effect ran once"
    );
    again.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn requests_refused_for_their_host_or_origin_use_none_of_the_rate_limit() {
    let fixture = fixture();
    let server = rate_limited_to_two(&fixture.server).await;
    let host = server.local_addr().to_string();
    // A page elsewhere, over and over; and headers rmcp alone would let through.
    for _ in 0..10 {
        let foreign = [("Host", host.as_str()), ("Origin", "http://evil.example")];
        assert_eq!(status_of(&server, &foreign, INITIALIZE).await, 403);
    }
    let two_hosts = [("Host", host.as_str()), ("Host", "attacker.example")];
    assert_eq!(status_of(&server, &two_hosts, INITIALIZE).await, 400);
    let two_origins = [
        ("Host", host.as_str()),
        ("Origin", "http://localhost:1"),
        ("Origin", "http://evil.example"),
    ];
    assert_eq!(status_of(&server, &two_origins, INITIALIZE).await, 403);
    // The local client still has its whole budget.
    for _ in 0..2 {
        assert_eq!(initialize(&server).await, 200);
    }
    server.shutdown().await;
}

/// Reads until the server closes `stream` (whatever it sent first), or panics after `within`.
async fn closed_within(stream: &mut tokio::net::TcpStream, within: Duration) {
    let mut sink = vec![0; 4096];
    tokio::time::timeout(within, async {
        while stream.read(&mut sink).await.is_ok_and(|read| read > 0) {}
    })
    .await
    .expect("the server closes the connection");
}

#[tokio::test]
async fn a_request_head_that_never_ends_is_closed_after_the_header_timeout() {
    let fixture = fixture();
    let mut options = local();
    options.header_timeout = Duration::from_millis(300);
    let server = serve(&fixture.server, options).await;
    let mut slow = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nX-Padding: ")
        .await
        .unwrap();
    closed_within(&mut slow, Duration::from_secs(20)).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_body_that_trickles_in_is_answered_and_closed_after_the_body_timeout() {
    let fixture = fixture();
    let mut options = local();
    options.body_timeout = Duration::from_millis(300);
    let server = serve(&fixture.server, options).await;
    let mut slow = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let host = server.local_addr().to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        INITIALIZE.len()
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    // Part of the body, and then a byte at a time, each well within any per-read timeout.
    slow.write_all(&INITIALIZE.as_bytes()[..10]).await.unwrap();
    let trickle = async {
        for byte in &INITIALIZE.as_bytes()[10..] {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if slow.write_all(std::slice::from_ref(byte)).await.is_err() {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), trickle).await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), slow.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes the connection");
    assert!(read.is_ok());
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 5"), "{answer}");
    assert!(answer.contains("did not arrive within 300ms"), "{answer}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_shutdown_no_connection_is_open_and_no_call_starts() {
    let fixture = fixture();
    let server = serve(&fixture.server, local()).await;
    // A stateless call of a tool with an effect, its body not yet all sent.
    let request = raw_pay(&server, 1);
    let (first, rest) = request.split_at(request.len() - 20);
    let mut paying = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    paying.write_all(first.as_bytes()).await.unwrap();
    let mut idle = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    idle.write_all(b"POST /mcp HTTP/1.1\r\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    tokio::time::timeout(Duration::from_secs(30), server.shutdown())
        .await
        .expect("shutdown ends within its grace");
    // The rest of the body finds the connection closed; nothing was paid.
    let _ = paying.write_all(rest.as_bytes()).await;
    closed_within(&mut paying, Duration::from_secs(1)).await;
    closed_within(&mut idle, Duration::from_secs(1)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fixture.paid.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_sessions_open_at_once_are_bounded() {
    let fixture = fixture();
    let mut options = local();
    options.max_sessions = 2;
    let server = serve(&fixture.server, options).await;
    // Each `initialize` outside a session opens one, which stays until it ends or idles out.
    for _ in 0..2 {
        assert_eq!(initialize(&server).await, 200);
    }
    assert_eq!(initialize(&server).await, 503);
    server.shutdown().await;
}

/// A host stops its program once `shutdown` returns: by then a call of a tool with an effect
/// that started must have recorded its outcome, even when its client went away mid-call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_returns_once_a_started_effect_recorded_its_outcome() {
    let fixture = fixture();
    let server = serve(&fixture.server, local()).await;
    let mut paying = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    paying
        .write_all(raw_pay(&server, 7).as_bytes())
        .await
        .unwrap();
    // The payment started; its client goes away.
    mcp_server_support::wait_for_row(&fixture.ledger, prism::dispatch::RecordStatus::Started).await;
    drop(paying);
    tokio::time::timeout(Duration::from_secs(30), server.shutdown())
        .await
        .expect("shutdown ends");
    assert_eq!(
        fixture.paid.load(Ordering::SeqCst),
        1,
        "the payment ran to its end"
    );
    let rows = fixture.ledger.records();
    assert!(
        rows.iter()
            .any(|row| row.status == prism::dispatch::RecordStatus::Finished),
        "its outcome is recorded: {rows:?}"
    );
}

/// A session id that is not text is no session id to rmcp, which opens a new session for the
/// `initialize` carrying it: such a request counts against the bound like any other.
#[tokio::test]
async fn a_session_id_that_is_not_text_does_not_slip_past_the_session_bound() {
    let fixture = fixture();
    let mut options = local();
    options.max_sessions = 2;
    let server = serve(&fixture.server, options).await;
    for _ in 0..2 {
        assert_eq!(initialize(&server).await, 200);
    }
    let host = server.local_addr().to_string();
    let garbled = [("Host", host.as_str()), ("Mcp-Session-Id", "\u{ff}")];
    assert_eq!(status_of(&server, &garbled, INITIALIZE).await, 503);
    server.shutdown().await;
}

/// A 2026-07-28 request has no session, whatever `Mcp-Session-Id` it carries (rmcp serves it
/// statelessly), so a made-up one does not let it past the bound that refuses stateless
/// requests while the sessions are full.
#[tokio::test]
async fn a_made_up_session_id_does_not_let_a_stateless_call_past_the_session_bound() {
    let fixture = fixture();
    let mut options = local();
    options.max_sessions = 1;
    let server = serve(&fixture.server, options).await;
    let host = server.local_addr().to_string();
    let call = stateless_call("add", r#"{"a":1,"b":2}"#);
    let stateless = [
        ("Host", host.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "add"),
    ];
    let mut made_up = stateless.to_vec();
    made_up.push(("Mcp-Session-Id", "made-up"));
    assert_eq!(status_of(&server, &made_up, &call).await, 200);
    assert_eq!(initialize(&server).await, 200);
    assert_eq!(status_of(&server, &stateless, &call).await, 503);
    assert_eq!(status_of(&server, &made_up, &call).await, 503);
    server.shutdown().await;
}

/// A whole HTTP request of a stateless 2026-07-28 call of `pay` for `cents`, as a raw client
/// writes it.
fn raw_pay(server: &McpHttpServer, cents: u64) -> String {
    raw_stateless_call(server, "pay", &format!(r#"{{"cents":{cents}}}"#))
}

/// A whole HTTP request of a stateless 2026-07-28 call of `name` with `arguments`.
fn raw_stateless_call(server: &McpHttpServer, name: &str, arguments: &str) -> String {
    let body = stateless_call(name, arguments);
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {name}\r\nContent-Length: {}\r\n\r\n{body}",
        server.local_addr(),
        body.len()
    )
}

/// The body of a stateless 2026-07-28 call of `name` with `arguments`.
fn stateless_call(name: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{{"name":"raw","version":"0"}},"io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    )
}

/// The first row of the call that ended in `ledger`: it must have ended cancelled.
async fn ended_cancelled(ledger: &prism::dispatch::InMemoryLedger) {
    let ended =
        mcp_server_support::wait_for_row(ledger, prism::dispatch::RecordStatus::Error).await;
    match ended.outcome {
        Some(prism::call::ToolOutcome::Error(error)) => {
            assert_eq!(error.code.as_str(), "cancelled")
        }
        other => panic!("expected a cancelled error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_call_whose_stream_closes_is_cancelled() {
    let fixture = fixture();
    let server = serve(&fixture.server, local()).await;
    let mut calling = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    calling
        .write_all(raw_stateless_call(&server, "slow", "{}").as_bytes())
        .await
        .unwrap();
    mcp_server_support::wait_for_row(&fixture.ledger, prism::dispatch::RecordStatus::Started).await;
    drop(calling);
    ended_cancelled(&fixture.ledger).await;
    server.shutdown().await;
}

/// Sends one POST of `body` with `headers` on a new connection, and returns the connection and
/// the response's head.
async fn post_raw(
    server: &McpHttpServer,
    headers: &[(&str, &str)],
    body: &str,
) -> (tokio::net::TcpStream, String) {
    request_raw(server, "POST", headers, body).await
}

/// Sends one request with `method`, `headers` and `body` on a new connection, and returns the
/// connection and the response's head.
async fn request_raw(
    server: &McpHttpServer,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (tokio::net::TcpStream, String) {
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        server.local_addr(),
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let read = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut byte))
            .await
            .expect("the server answers")
            .unwrap();
        assert_eq!(read, 1, "the connection closed mid-head: {head:?}");
        head.push(byte[0]);
    }
    (stream, String::from_utf8_lossy(&head).into_owned())
}

/// The value of the header `name` in a response's `head`, if it has one.
fn header_in(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name)
            .then(|| value.trim().to_owned())
    })
}

/// A pre-flight from a page, asking to POST JSON with the protocol's headers.
async fn pre_flight(server: &McpHttpServer, origin: &str) -> String {
    let asks = [
        ("Origin", origin),
        ("Access-Control-Request-Method", "POST"),
        (
            "Access-Control-Request-Headers",
            "content-type, mcp-protocol-version, mcp-session-id",
        ),
    ];
    request_raw(server, "OPTIONS", &asks, "").await.1
}

/// A page from a listed origin can use the server from a browser: its pre-flight is answered,
/// and the answers it reads let it see the session id. Another site's page gets nothing.
#[tokio::test]
async fn a_page_from_a_listed_origin_can_call_the_server_from_a_browser() {
    let fixture = fixture();
    let server = serve(&fixture.server, local()).await;
    let page = "http://localhost:5173";

    let head = pre_flight(&server, page).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        header_in(&head, "access-control-allow-origin").as_deref(),
        Some(page)
    );
    let methods = header_in(&head, "access-control-allow-methods").unwrap_or_default();
    assert!(
        methods.contains("POST") && methods.contains("DELETE"),
        "{head}"
    );
    let headers = header_in(&head, "access-control-allow-headers").unwrap_or_default();
    assert!(headers.contains("mcp-protocol-version"), "{head}");

    let (_open, head) = post_raw(&server, &[("Origin", page)], INITIALIZE).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        header_in(&head, "access-control-allow-origin").as_deref(),
        Some(page)
    );
    let exposed = header_in(&head, "access-control-expose-headers").unwrap_or_default();
    assert!(exposed.contains("mcp-session-id"), "{head}");
    assert!(header_in(&head, "mcp-session-id").is_some(), "{head}");

    let head = pre_flight(&server, "https://attacker.example").await;
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert_eq!(header_in(&head, "access-control-allow-origin"), None);

    // A client that is no browser sends no `Origin`, and gets no CORS headers.
    let (_open, head) = post_raw(&server, &[], INITIALIZE).await;
    assert_eq!(header_in(&head, "access-control-allow-origin"), None);
    server.shutdown().await;
}

/// A pre-flight opens no session, so the bound on sessions does not refuse it: the page of a
/// session already open must still reach it.
#[tokio::test]
async fn a_pre_flight_is_answered_when_the_sessions_are_at_their_bound() {
    let fixture = fixture();
    let mut options = local();
    options.max_sessions = 1;
    let server = serve(&fixture.server, options).await;
    assert_eq!(initialize(&server).await, 200);
    assert_eq!(initialize(&server).await, 503);
    let head = pre_flight(&server, "http://localhost:5173").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    server.shutdown().await;
}

/// Past the bound on connections, a new one is not served until one closes: idle connections
/// hold file descriptors, which the host's process runs out of.
#[tokio::test]
async fn the_connections_open_at_once_are_bounded() {
    let fixture = fixture();
    let mut options = local();
    options.max_connections = 1;
    let server = serve(&fixture.server, options).await;
    let idle = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    // However slow the machine, a server holding to its bound cannot answer while the idle
    // connection stays open.
    assert!(
        tokio::time::timeout(Duration::from_millis(500), initialize(&server))
            .await
            .is_err(),
        "a second connection was served while the first was open"
    );
    drop(idle);
    assert_eq!(initialize(&server).await, 200);
    server.shutdown().await;
}

/// Opens a handshake-era session with `initialize`, says the client is initialized, and returns
/// the session's id.
async fn open_session(server: &McpHttpServer, initialize: &str) -> String {
    let (_open, head) = post_raw(server, &[], initialize).await;
    let session = header_in(&head, "mcp-session-id").expect("a session id");
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (_done, head) = post_raw(
        server,
        &in_session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");
    session
}

/// In a session, the client's stream for one call closing (its connection dropped, no
/// `notifications/cancelled`) cancels that call of a tool without an effect, as in a stateless
/// request: the session lives on, and would otherwise keep the call running with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_a_session_whose_stream_closes_is_cancelled() {
    let fixture = fixture();
    let server = serve(&fixture.server, local()).await;
    let session = open_session(&server, INITIALIZE).await;
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (calling, head) = post_raw(
        &server,
        &in_session,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#,
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    mcp_server_support::wait_for_row(&fixture.ledger, prism::dispatch::RecordStatus::Started).await;
    drop(calling);
    ended_cancelled(&fixture.ledger).await;
    server.shutdown().await;
}

/// A header timeout too long to add to the current instant (`Duration::MAX` for "never") is
/// taken as one that never ends, as the body timeout is: it must not fail every connection.
#[tokio::test]
async fn a_header_timeout_that_never_ends_still_serves() {
    let fixture = fixture();
    let mut options = local();
    options.header_timeout = Duration::MAX;
    let server = serve(&fixture.server, options).await;
    assert_eq!(initialize(&server).await, 200);
    server.shutdown().await;
}

/// Reads `stream` until what it sent contains `text` (thirty seconds at most, then a panic).
async fn read_until(stream: &mut tokio::net::TcpStream, text: &str) -> String {
    let mut seen = Vec::new();
    let mut chunk = vec![0; 4096];
    tokio::time::timeout(Duration::from_secs(30), async {
        while !String::from_utf8_lossy(&seen).contains(text) {
            let read = stream.read(&mut chunk).await.unwrap();
            assert!(
                read > 0,
                "closed before {text:?}: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&chunk[..read]);
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {text:?} in {}", String::from_utf8_lossy(&seen)));
    String::from_utf8_lossy(&seen).into_owned()
}

/// A session's call waiting for a person's approval ends once its client closed the call's
/// stream, as it ends when the client cancels it: nobody is left to hear the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_in_a_session_ends_when_the_calls_stream_closes() {
    let fixture = fixture();
    let server = serve(&fixture.server, local()).await;
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let session = open_session(&server, initialize).await;
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (mut calling, head) = post_raw(
        &server,
        &in_session,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wipe","arguments":{"path":"/tmp/w"}}}"#,
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    read_until(&mut calling, "elicitation/create").await;
    drop(calling);
    let refused =
        mcp_server_support::wait_for_row(&fixture.ledger, prism::dispatch::RecordStatus::Blocked)
            .await;
    match &refused.outcome {
        Some(prism::call::ToolOutcome::Blocked(error)) => {
            assert!(error.message.contains("cancelled"), "{}", error.message)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(fixture.wiped.load(Ordering::SeqCst), 0);
    server.shutdown().await;
}
