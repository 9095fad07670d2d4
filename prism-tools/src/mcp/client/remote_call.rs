//! One `tools/call` to the server: timed out (a wait reset by progress, inside a hard maximum),
//! cancelled on the server when the caller gives up for any reason, with progress routed to the
//! call's context. Whatever the server does (answers, errs, hangs, dies), the call ends with an
//! outcome or an error, never a hang.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, CustomResult, InputResponses,
    Request, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::context::ToolExecutionContext;
use crate::error::ToolError;
use crate::redact::SecretRedactor;

use super::bounded_lines::LineOverflow;
use super::error::codes;
use super::notifications::ProgressRoutes;
use super::outcome::{self, InputRequired, RemoteOutcome};
use super::output_contract::OutputContract;
use super::server::RemoteServer;

/// How long past a call's deadline the bridge still waits for the SDK to give up by itself (its
/// timers fire at the same deadline, and it tells the server) before it gives up on its own: the
/// SDK's writes, its cancellation notice among them, wait for a server that may have stopped
/// reading.
const GRACE: Duration = Duration::from_secs(1);

/// What a call needs of its connection.
pub(crate) struct CallSite<'a> {
    pub(crate) server: &'a RemoteServer,
    /// The endpoint's credentials, taken out of the server's text.
    pub(crate) scrubber: &'a SecretRedactor,
    /// The calling dispatcher's redactor, whose secrets are taken out in the same pass.
    pub(crate) host: &'a SecretRedactor,
    pub(crate) peer: &'a Peer<RoleClient>,
    pub(crate) progress: &'a ProgressRoutes,
    /// Set when the session ended at a message over the transport's bound.
    pub(crate) overflow: &'a LineOverflow,
    /// The output schema the tool declared, which a successful result must keep.
    pub(crate) output: Option<&'a OutputContract>,
}

impl CallSite<'_> {
    /// A redactor of the endpoint's credentials and the host's secrets as one: one redactor
    /// after the other would leave the rest of a host secret that holds a credential (a query
    /// value such as `2`) once the credential inside it was replaced.
    pub(crate) fn scrubber(&self) -> SecretRedactor {
        self.scrubber.union(self.host)
    }

    /// `text` (an error of the HTTP stack, the SDK or the server) as a message quotes it: the
    /// endpoint's URL cut to its origin, its credentials and the host's secrets taken out.
    fn scrub(&self, text: &str) -> String {
        self.server.scrub_with(&self.scrubber(), text)
    }
}

/// Answers to a server's earlier `input_required`, sent with the call again.
pub(crate) struct Resume {
    pub(crate) responses: InputResponses,
    pub(crate) request_state: Option<String>,
}

/// Calls the remote tool `tool` with `arguments`.
pub(crate) async fn call(
    site: CallSite<'_>,
    tool: &str,
    arguments: Map<String, Value>,
    resume: Option<Resume>,
    ctx: &ToolExecutionContext,
) -> Result<RemoteOutcome, ToolError> {
    if ctx.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    let bounds = &site.server.bounds;
    let started = Instant::now();
    let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    if let Some(resume) = resume {
        params = params.with_input_responses(resume.responses);
        if let Some(state) = resume.request_state {
            params = params.with_request_state(state);
        }
    }
    let call_timeout = site.server.effective_call_timeout();
    let options = PeerRequestOptions::with_timeout(call_timeout)
        .reset_timeout_on_progress()
        .with_max_total_timeout(bounds.max_call_timeout);
    // The call's deadline: its timeout from the last progress heard, within the hard maximum.
    let deadline = |heard: Option<Instant>| {
        let idle = heard.unwrap_or(started) + call_timeout;
        let hard = started + bounds.max_call_timeout;
        if idle < hard {
            (idle, call_timeout)
        } else {
            (hard, bounds.max_call_timeout)
        }
    };
    let request = ClientRequest::CallToolRequest(Request::new(params));
    // Sending waits for room in the SDK's queue: bounded like the rest of the call.
    let (limit, waited) = deadline(None);
    let handle = tokio::select! {
        biased;
        () = ctx.cancellation().cancelled() => return Err(ToolError::cancelled()),
        sent = site.peer.send_cancellable_request(request, options) => match sent {
            Ok(handle) => handle,
            Err(error) => return Err(service_error(&site, tool, error)),
        },
        () = tokio::time::sleep_until(limit + GRACE) => {
            return Err(timed_out(site.server, tool, waited));
        }
    };
    let route = site
        .progress
        .register(handle.progress_token.clone(), ctx.clone());
    let mut cancel = CancelOnDrop {
        peer: Some(site.peer.clone()),
        id: handle.id.clone(),
        reason: "the caller gave up on the call",
    };
    let response = handle.await_response();
    tokio::pin!(response);
    let response = loop {
        let (limit, waited) = deadline(route.last_heard());
        tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => {
                cancel.reason = "the call was cancelled";
                return Err(ToolError::cancelled());
            }
            response = &mut response => break response,
            () = tokio::time::sleep_until(limit + GRACE) => {
                // Progress heard meanwhile moved the deadline: wait on.
                if deadline(route.last_heard()).0 > limit {
                    continue;
                }
                cancel.reason = "request timeout";
                return Err(timed_out(site.server, tool, waited));
            }
        }
    };
    // The SDK answered: it already told the server about its own timeout.
    cancel.peer = None;
    match response {
        Ok(ServerResult::CallToolResult(result)) => {
            // A result may echo the endpoint's credentials, so it is scrubbed whenever there
            // are some; an error's text is also quoted in messages, so it always is, and so is
            // a result held to a schema, whose breach quotes the server's keys.
            let scrubber = if result.is_error == Some(true)
                || !site.scrubber.is_empty()
                || site.output.is_some()
            {
                site.scrubber()
            } else {
                SecretRedactor::default()
            };
            outcome::complete(result, site.output, bounds.max_result_bytes, &scrubber)
        }
        // An empty answer has no structured value: a tool that declares a schema breaks it.
        Ok(ServerResult::EmptyResult(_)) => outcome::finish(
            Vec::new(),
            None,
            None,
            site.output,
            bounds.max_result_bytes,
            &SecretRedactor::default(),
        ),
        // The server's text like a result: scrubbed before the host gets it.
        Ok(ServerResult::InputRequiredResult(result)) => Ok(RemoteOutcome::InputRequired(
            InputRequired::from_wire(&site.server.name, tool, result).scrubbed(&site.scrubber()),
        )),
        // A tool result or a request for input the SDK could not read (a block of a newer kind,
        // a request of a newer method): read leniently, and a result scrubbed in one pass
        // whatever it is (this path is rare).
        Ok(ServerResult::CustomResult(CustomResult(value))) => {
            if let Some(request) = InputRequired::from_value(&site.server.name, tool, &value) {
                return Ok(RemoteOutcome::InputRequired(
                    request.scrubbed(&site.scrubber()),
                ));
            }
            outcome::lenient(
                value,
                site.output,
                bounds.max_result_bytes,
                &site.scrubber(),
            )
            .unwrap_or_else(|| Err(not_a_tool_result(site.server, tool)))
        }
        Ok(ServerResult::CreateTaskResult(_)) => Err(ToolError::with_code(
            codes::PROTOCOL_ERROR,
            format!(
                "MCP server `{}` answered `{tool}` with a task, which this client does not follow",
                site.server.name
            ),
        )),
        Ok(_) => Err(not_a_tool_result(site.server, tool)),
        Err(error) => Err(service_error(&site, tool, error)),
    }
}

fn not_a_tool_result(server: &RemoteServer, tool: &str) -> ToolError {
    ToolError::with_code(
        codes::PROTOCOL_ERROR,
        format!(
            "MCP server `{}` answered `{tool}` with something that is not a tool result",
            server.name
        ),
    )
}

fn timed_out(server: &RemoteServer, tool: &str, waited: Duration) -> ToolError {
    ToolError::with_code(
        codes::TIMEOUT,
        format!(
            "MCP server `{}` did not finish `{tool}` within {} ms; the call was cancelled",
            server.name,
            waited.as_millis()
        ),
    )
}

/// The error a failed request ends the call with. The server's text is passed on whole (the
/// endpoint's credentials taken out): the dispatcher redacts it, then cuts it to its bound, so a
/// secret is never cut before it is found.
fn service_error(site: &CallSite<'_>, tool: &str, error: ServiceError) -> ToolError {
    let server = site.server;
    // A session ended at a message over the bound fails its calls saying so: which call the
    // message answered cannot be told (see `bounded_lines`).
    if let Some(cause) = site.overflow.cause_of(&error) {
        return ToolError::with_code(
            codes::CONNECTION_LOST,
            format!(
                "MCP server `{}`: {cause}; `{tool}` did not finish and is not sent again (the next \
                 call opens a new session)",
                server.name
            ),
        );
    }
    match error {
        ServiceError::Timeout { timeout } => timed_out(server, tool, timeout),
        ServiceError::TransportClosed => ToolError::with_code(
            codes::CONNECTION_LOST,
            format!(
                "the connection to MCP server `{}` is gone; `{tool}` did not finish",
                server.name
            ),
        ),
        // Over HTTP each request is sent on its own: its failure carries its cause (a status,
        // an answer over the bound), which the caller needs to act on.
        ServiceError::TransportSend(error) if answer_too_large(&error) => ToolError::with_code(
            "output_too_large",
            format!(
                "MCP server `{}` answered `{tool}` past the transport's bound: {}",
                server.name,
                site.scrub(&error.error.to_string())
            ),
        ),
        ServiceError::TransportSend(error) => ToolError::with_code(
            codes::CONNECTION_LOST,
            format!(
                "the request to MCP server `{}` failed; `{tool}` did not finish: {}",
                server.name,
                site.scrub(&error.error.to_string())
            ),
        ),
        ServiceError::McpError(data) => ToolError::with_code(
            codes::PROTOCOL_ERROR,
            format!(
                "MCP server `{}` refused `{tool}` (JSON-RPC {}): {}",
                server.name,
                data.code.0,
                site.scrub(&data.message)
            ),
        ),
        other => ToolError::with_code(
            codes::PROTOCOL_ERROR,
            format!(
                "MCP server `{}`: `{tool}` failed: {}",
                server.name,
                site.scrub(&other.to_string())
            ),
        ),
    }
}

/// Whether a failed send is the HTTP transport refusing an answer over its bound.
fn answer_too_large(error: &DynamicTransportError) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(current) = cause {
        if matches!(
            current.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
            Some(StreamableHttpError::ResponseBodyTooLarge { .. })
        ) {
            return true;
        }
        cause = current.source();
    }
    false
}

/// Tells the server a request is abandoned when the call ends without its answer: cancelled
/// through the context, timed out by the bridge's own deadline, or dropped by the dispatcher (or,
/// for a listing, by its timeout).
pub(super) struct CancelOnDrop {
    /// Taken once the answer arrived: nothing to cancel.
    pub(super) peer: Option<Peer<RoleClient>>,
    pub(super) id: RequestId,
    pub(super) reason: &'static str,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let params =
            CancelledNotificationParam::new(Some(self.id.clone()), Some(self.reason.to_owned()));
        // Sending waits for the session's queue; a gone session answers at once with an error.
        runtime.spawn(async move {
            let _ =
                tokio::time::timeout(Duration::from_secs(5), peer.notify_cancelled(params)).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::scripted_server::{completed, connected};
    use std::time::Duration;

    use serde_json::{Value, json};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use crate::context::ToolExecutionContext;

    use super::super::error::codes;
    use super::super::outcome::RemoteOutcome;
    use super::super::scripted_server::scripted_server;
    use super::super::server::RemoteServer;

    /// An HTTP server speaking just enough streamable HTTP: it answers `initialize`, accepts
    /// notifications, refuses the standalone stream, and answers `tools/call` of `big` with a
    /// JSON body of 400,000 bytes, of `broken` with HTTP 500, of `whoami` with the request's
    /// `Authorization` header (a server quoting back what it was sent), of any other tool with a
    /// small result. Its URL.
    async fn fake_http() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream));
            }
        });
        url
    }

    async fn serve(mut stream: TcpStream) {
        let mut buffer = Vec::new();
        loop {
            let end = loop {
                if let Some(at) = buffer.windows(4).position(|bytes| bytes == b"\r\n\r\n") {
                    break at + 4;
                }
                if !read_more(&mut stream, &mut buffer).await {
                    return;
                }
            };
            let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
            let length = head
                .lines()
                .filter_map(|line| line.split_once(':'))
                .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, value)| value.trim().parse::<usize>().ok())
                .unwrap_or(0);
            while buffer.len() < end + length {
                if !read_more(&mut stream, &mut buffer).await {
                    return;
                }
            }
            let body: Value =
                serde_json::from_slice(&buffer[end..end + length]).unwrap_or(Value::Null);
            buffer.drain(..end + length);
            let post = head.starts_with("POST ");
            let authorization = head
                .lines()
                .filter_map(|line| line.split_once(':'))
                .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
                .map_or_else(String::new, |(_, value)| value.trim().to_owned());
            if stream
                .write_all(&respond(post, &body, &authorization))
                .await
                .is_err()
            {
                return;
            }
        }
    }

    async fn read_more(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> bool {
        let mut chunk = [0_u8; 8192];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => false,
            Ok(read) => {
                buffer.extend_from_slice(&chunk[..read]);
                true
            }
        }
    }

    fn respond(post: bool, body: &Value, authorization: &str) -> Vec<u8> {
        let reply = |status: &str, json: Option<Value>| {
            let body = json.map(|value| value.to_string()).unwrap_or_default();
            let kind = if body.is_empty() {
                ""
            } else {
                "Content-Type: application/json\r\n"
            };
            format!(
                "HTTP/1.1 {status}\r\n{kind}Content-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        };
        if !post {
            return reply("405 Method Not Allowed", None);
        }
        let Some(id) = body.get("id").cloned() else {
            return reply("202 Accepted", None);
        };
        let text = |text: String| json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
        match (body["method"].as_str(), body["params"]["name"].as_str()) {
            (Some("initialize"), _) => reply(
                "200 OK",
                Some(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1"}
                }})),
            ),
            (Some("tools/call"), Some("big")) => reply("200 OK", Some(text("x".repeat(400_000)))),
            (Some("tools/call"), Some("broken")) => reply("500 Internal Server Error", None),
            // Not JSON-RPC: the SDK quotes its first 256 bytes, which cut the token.
            (Some("tools/call"), Some("garbled")) => {
                let body = format!(
                    "{{\"note\":\"{}\",\"seen\":\"{authorization}\"}}",
                    "n".repeat(220)
                );
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .into_bytes()
            }
            (Some("tools/call"), Some("whoami")) => reply(
                "200 OK",
                Some(text(format!("you sent `Authorization: {authorization}`"))),
            ),
            (Some("tools/call"), _) => reply("200 OK", Some(text("small".to_owned()))),
            _ => reply(
                "200 OK",
                Some(
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "unknown"}}),
                ),
            ),
        }
    }

    /// Over HTTP, an answer over the transport's bound fails its call with `output_too_large`
    /// (not as a lost connection), a failed POST says why (its status), and the session goes on.
    #[tokio::test]
    async fn an_http_answer_over_the_bound_or_a_failed_post_says_why() {
        let server = RemoteServer::http("fake", fake_http().await)
            .max_result_bytes(1000)
            .call_timeout(Duration::from_secs(30));
        let client = connected(server).await;
        let ctx = ToolExecutionContext::new();
        let big = client.call("big", json!({}), &ctx).await.unwrap_err();
        assert_eq!(big.code().as_str(), "output_too_large", "{}", big.message());
        let broken = client.call("broken", json!({}), &ctx).await.unwrap_err();
        assert!(broken.message().contains("500"), "{}", broken.message());
        let small = client.call("small", json!({}), &ctx).await.unwrap();
        assert!(matches!(small, RemoteOutcome::Complete(_)), "{small:?}");
        client.close().await;
    }

    /// The HTTP stack sends a URL's user and password decoded, as a basic `Authorization`
    /// header: a server that quotes that header back, or the decoded password alone, has them
    /// taken out like the credentials as the URL spells them.
    #[tokio::test]
    async fn the_basic_credential_made_of_the_urls_user_and_password_is_taken_out() {
        let url = fake_http()
            .await
            .replacen("http://", "http://al%69ce:p%40ss-w0rd-7f3a@", 1);
        let server = RemoteServer::http("fake", url).call_timeout(Duration::from_secs(30));
        let client = connected(server).await;
        let output = completed(&client, "whoami").await;
        let text = output.content()[0].as_text().unwrap().to_owned();
        assert!(text.contains("Authorization: "), "{text}");
        // `alice:p@ss-w0rd-7f3a` in base64, as the header carries it, and its parts decoded.
        for secret in ["YWxpY2U6cEBzcy13MHJkLTdmM2E=", "p@ss-w0rd-7f3a", "alice:"] {
            assert!(!text.contains(secret), "{text}");
        }
        client.close().await;
    }

    /// An answer that is not JSON-RPC is quoted by the SDK, cut to its first 256 bytes: a
    /// credential the answer echoes across the cut leaves no part of itself in the call's error.
    #[tokio::test]
    async fn an_answer_the_sdk_quotes_cut_keeps_no_part_of_a_credential() {
        let token = "tok-5e2b8d1f7a9c4036";
        let server = RemoteServer::http("fake", fake_http().await)
            .header("Authorization", format!("Bearer {token}"))
            .call_timeout(Duration::from_secs(30));
        let client = connected(server).await;
        let ctx = ToolExecutionContext::new();
        let garbled = client.call("garbled", json!({}), &ctx).await.unwrap_err();
        let message = garbled.message();
        assert!(message.contains("nnnn"), "the answer is quoted: {message}");
        assert!(!message.contains(&token[..8]), "{message}");
        client.close().await;
    }

    /// A server over stdio that answers `tools/call` of `big` with one line of 200,000 bytes
    /// quoting its token, never answers `slow`, and answers any other call with a small result.
    const OVER_LONG_CALLS: &str = r#"    *'"method":"tools/call"'*'"big"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s ' "$id" "$API_TOKEN"; head -c 200000 /dev/zero | tr '\0' x; printf '"}]}}\n' ;;
    *'"method":"tools/call"'*'"slow"'*) ;;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"small"}]}}\n' "$id" ;;"#;

    /// Over stdio, an answer over the transport's bound ends the session at once: the call it
    /// answered and a call still waiting beside it fail with an error saying so, long before
    /// their timeout, and without quoting the server's secret; the next call opens a new
    /// session, with a new process.
    #[tokio::test]
    async fn a_stdio_answer_over_the_bound_ends_the_session_at_once_saying_why() {
        let token = "tok-3b8e1f6a9c2d47";
        let server = scripted_server("chatty", OVER_LONG_CALLS)
            .secret_env("API_TOKEN", token)
            .max_result_bytes(1000)
            .max_schema_bytes(1000)
            .call_timeout(Duration::from_secs(30));
        let bound = server.bounds.max_message_bytes();
        assert!(bound < 200_000, "{bound}");
        let client = connected(server).await;
        let first = client.process_id();
        let ctx = ToolExecutionContext::new();
        // Against a hang only: the error comes as soon as the line passes the bound.
        let guard = Duration::from_secs(20);
        let (slow, big) = tokio::time::timeout(guard, async {
            tokio::join!(client.call("slow", json!({}), &ctx), async {
                // The slow call is on its way first (it is never answered either way).
                tokio::task::yield_now().await;
                client.call("big", json!({}), &ctx).await
            })
        })
        .await
        .expect("the calls ended before their timeout");
        let said = format!("sent a message over {bound} bytes");
        for (tool, result) in [("big", big), ("slow", slow)] {
            let error = result.unwrap_err();
            let message = error.message();
            assert_eq!(error.code().as_str(), codes::CONNECTION_LOST, "{message}");
            assert!(message.contains(&said), "{message}");
            assert!(message.contains(&format!("`{tool}`")), "{message}");
            assert!(!message.contains(token), "{message}");
        }
        // The SDK ends the session just after it fails the calls waiting on it.
        tokio::time::timeout(guard, async {
            while !client.session_ended() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the session ended");
        let after = tokio::time::timeout(guard, client.call("small", json!({}), &ctx))
            .await
            .expect("the next call ended");
        assert!(matches!(after, Ok(RemoteOutcome::Complete(_))), "{after:?}");
        assert_ne!(client.process_id(), first);
        client.close().await;
    }
}
