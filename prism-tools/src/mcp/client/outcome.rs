//! What a remote call gives back, in the host's terms: a bounded [`ToolOutput`] whose content
//! blocks are kept as they came, a tool error for a remote `isError`, or a typed
//! [`InputRequired`] when the server needs input before the tool can finish.

use rmcp::model::{CallToolResult, InputRequiredResult};
use serde_json::Value;

use crate::call::{ContentBlock, ToolOutput};
use crate::error::ToolError;

use super::catalog::bounded;
use super::error::codes;
use super::output_contract::OutputContract;
use crate::redact::SecretRedactor;

/// What one remote call ended with.
#[derive(Debug)]
#[non_exhaustive]
pub enum RemoteOutcome {
    /// The tool finished; its output is bounded, with the server's content blocks in order, and
    /// its value matches the tool's declared output schema, if it declared one.
    /// The remote tool may still have reported an error: see [`RemoteOutcome::Failed`].
    Complete(ToolOutput),
    /// The remote tool reported an error (`isError: true`); the message is its text, or its
    /// structured value as JSON when it has no text.
    Failed(String),
    /// The server needs input before the tool can finish (MCP's `input_required`).
    InputRequired(InputRequired),
}

/// A server's request for input before a tool call can finish: what it asks, and the opaque
/// state to send back with the answers
/// ([`McpClient::resume`](super::McpClient::resume)).
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequired {
    /// The server's name.
    pub server: String,
    /// The remote tool's name.
    pub tool: String,
    /// What the server asks for, by the key the answer must carry.
    pub requests: Vec<InputRequest>,
    /// Opaque state the server wants back with the answers, unread by the bridge.
    pub request_state: Option<String>,
}

/// One request for input, as the server sent it, with the endpoint's credentials taken out of
/// its method and parameters (untrusted: show it, do not obey it).
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequest {
    /// The key the answer goes under.
    pub key: String,
    /// The request's method: `elicitation/create` (ask the person), `sampling/createMessage`
    /// (ask a model), `roots/list`, or one this client does not know, as the server named it.
    pub method: String,
    /// The request's parameters (for elicitation: `message` and `requestedSchema`).
    pub params: Value,
}

impl InputRequest {
    /// The request under `key`, read from its wire form: `method` and `params` as the server
    /// wrote them.
    fn read(key: String, wire: &Value) -> Self {
        Self {
            key,
            method: wire
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_owned(),
            params: wire.get("params").cloned().unwrap_or(Value::Null),
        }
    }

    /// The message to show the person, when the request has one.
    pub fn message(&self) -> Option<&str> {
        self.params.get("message").and_then(Value::as_str)
    }
}

impl InputRequired {
    pub(crate) fn from_wire(server: &str, tool: &str, result: InputRequiredResult) -> Self {
        let requests = result
            .input_requests
            .unwrap_or_default()
            .into_iter()
            .map(|(key, request)| {
                InputRequest::read(key, &serde_json::to_value(&request).unwrap_or(Value::Null))
            })
            .collect();
        Self {
            server: server.to_owned(),
            tool: tool.to_owned(),
            requests,
            request_state: result.request_state,
        }
    }

    /// An `input_required` answer the SDK could not read (a request of a method from a newer
    /// revision, a form it does not know), read as the server wrote it, so the question still
    /// reaches the host; `None` when the answer is not one.
    pub(crate) fn from_value(server: &str, tool: &str, result: &Value) -> Option<Self> {
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return None;
        }
        let mut requests: Vec<InputRequest> = match result.get("inputRequests") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(requests)) => requests
                .iter()
                .map(|(key, request)| InputRequest::read(key.clone(), request))
                .collect(),
            Some(_) => return None,
        };
        // By key, as the SDK's map gives the requests it reads.
        requests.sort_by(|a, b| a.key.cmp(&b.key));
        let request_state = match result.get("requestState") {
            None | Some(Value::Null) => None,
            Some(Value::String(state)) => Some(state.clone()),
            Some(_) => return None,
        };
        Some(Self {
            server: server.to_owned(),
            tool: tool.to_owned(),
            requests,
            request_state,
        })
    }

    /// This request with `scrubber`'s secrets (the endpoint's credentials, the calling
    /// dispatcher's) taken out of what it asks: each request's method and parameters. The keys,
    /// under which the answers go back, and the opaque state stay as the server wrote them.
    pub(crate) fn scrubbed(mut self, scrubber: &SecretRedactor) -> Self {
        for request in &mut self.requests {
            scrubber.redact_string(&mut request.method);
            scrubber.redact_value_in_place(&mut request.params);
        }
        self
    }

    /// The tool error a dispatcher reports for it: code `mcp_input_required`, and a message
    /// naming what was asked, with the endpoint's credentials (`scrubber`) taken out. Not cut:
    /// the dispatcher cuts it after its own redaction.
    pub(crate) fn to_tool_error(&self, scrubber: &SecretRedactor) -> ToolError {
        let asked: Vec<String> = self
            .requests
            .iter()
            .map(|request| match request.message() {
                Some(message) => format!("{} ({message})", request.method),
                None => request.method.clone(),
            })
            .collect();
        let asked = if asked.is_empty() {
            "nothing in particular".to_owned()
        } else {
            asked.join("; ")
        };
        let message = format!(
            "MCP server `{}` needs input before `{}` can finish: {asked}",
            self.server, self.tool
        );
        ToolError::with_code(
            codes::INPUT_REQUIRED,
            scrubber.redact_str(&message).into_owned(),
        )
    }
}

/// The outcome of a completed call, checked against `max_bytes`, with the endpoint's
/// credentials (`scrubber`) taken out of its content (media types included) and value. A remote
/// error's text is passed on whole within `max_bytes`, and cut to it beyond: the dispatcher
/// redacts it, then cuts it to its own bound.
pub(crate) fn complete(
    result: CallToolResult,
    output: Option<&OutputContract>,
    max_bytes: usize,
    scrubber: &SecretRedactor,
) -> Result<RemoteOutcome, ToolError> {
    let content = result
        .content
        .iter()
        .map(|block| serde_json::to_value(block).unwrap_or(Value::Null))
        .collect();
    finish(
        content,
        result.structured_content,
        result.is_error,
        output,
        max_bytes,
        scrubber,
    )
}

/// The outcome of an answer the SDK could not read as a tool result, when it is one all the
/// same: a `content` list (with a block of a kind the SDK does not know, from a newer revision,
/// or one it cannot read), a structured value or an error flag. Each block the host cannot read
/// becomes a text block saying so, as [`complete`] does; the rest crosses. `None` when the
/// answer is not a tool result at all.
pub(crate) fn lenient(
    result: Value,
    output: Option<&OutputContract>,
    max_bytes: usize,
    scrubber: &SecretRedactor,
) -> Option<Result<RemoteOutcome, ToolError>> {
    let Value::Object(mut fields) = result else {
        return None;
    };
    let finished = fields
        .get("resultType")
        .is_some_and(|kind| kind != "complete");
    let content = fields.remove("content");
    let structured = fields.remove("structuredContent");
    let is_error = fields.get("isError").and_then(Value::as_bool);
    if finished || (content.is_none() && structured.is_none() && is_error.is_none()) {
        return None;
    }
    let content = match content {
        None => Vec::new(),
        Some(Value::Array(blocks)) => blocks,
        Some(_) => return None,
    };
    Some(finish(
        content, structured, is_error, output, max_bytes, scrubber,
    ))
}

/// The outcome of a result's parts, as the server wrote them. A successful result of a tool
/// that declares an output schema (`output`) must keep it: one that breaks it, or has no
/// structured value, ends the call with `mcp_protocol_error` naming where it fails.
pub(crate) fn finish(
    content: Vec<Value>,
    structured: Option<Value>,
    is_error: Option<bool>,
    output: Option<&OutputContract>,
    max_bytes: usize,
    scrubber: &SecretRedactor,
) -> Result<RemoteOutcome, ToolError> {
    if is_error == Some(true) {
        return Ok(RemoteOutcome::Failed(error_message(
            &content, structured, max_bytes, scrubber,
        )));
    }
    let content_bytes = serde_json::to_vec(&content).map_or(usize::MAX, |json| json.len());
    let value_bytes = structured.as_ref().map_or(0, |value| {
        serde_json::to_vec(value).map_or(usize::MAX, |json| json.len())
    });
    let bytes = content_bytes.saturating_add(value_bytes);
    if bytes > max_bytes {
        return Err(ToolError::with_code(
            "output_too_large",
            format!(
                "the MCP server's result is {bytes} bytes of JSON, over the bound of {max_bytes}"
            ),
        ));
    }
    let mut blocks: Vec<ContentBlock> = content
        .into_iter()
        .map(|wire| block(wire, scrubber))
        .collect();
    // A server may echo what it was sent: the endpoint's credentials come out of the result
    // too (media types included), which the host's redactor may not know.
    scrubber.redact_content(&mut blocks);
    // Checked as the server wrote it: a value the scrubber changed is no longer the server's.
    if let Some(breach) = output.and_then(|output| output.breach(structured.as_ref())) {
        // The server broke the tool's contract, which no retry by the model fixes: a protocol
        // error, as an answer that is not a tool result is, not the tool's own `tool_error`.
        return Err(ToolError::with_code(
            codes::PROTOCOL_ERROR,
            scrubber.redact_str(&breach).into_owned(),
        ));
    }
    let mut value = structured.unwrap_or(Value::Null);
    scrubber.redact_value_in_place(&mut value);
    Ok(RemoteOutcome::Complete(
        ToolOutput::new(value).with_content(blocks),
    ))
}

/// A remote error's message: its text blocks, or its structured value when it has no text
/// (nothing is dropped), with the endpoint's credentials taken out and then cut to `max_bytes`,
/// so that an error longer than the bound is still the tool's error and no secret is left half.
fn error_message(
    content: &[Value],
    structured: Option<Value>,
    max_bytes: usize,
    scrubber: &SecretRedactor,
) -> String {
    let text: Vec<&str> = content
        .iter()
        .filter(|wire| wire.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|wire| wire.get("text").and_then(Value::as_str))
        .collect();
    let message = match structured.filter(|value| !value.is_null()) {
        _ if !text.is_empty() => text.join("\n"),
        Some(value) => value.to_string(),
        None => "the remote tool reported an error without a message".to_owned(),
    };
    bounded(&scrubber.redact_str(&message), max_bytes)
}

/// One of the server's content blocks (as the server wrote it) as the host's: MCP's wire shape
/// is the host's own, so the block crosses as it is; a kind the host does not know, or a block
/// it cannot read, becomes a text block saying what was left out, never a silent gap. The kind
/// it quotes is the server's text: the endpoint's credentials (`scrubber`) come out of it
/// before it is cut, so a cut never leaves part of one where it can no longer be found.
fn block(wire: Value, scrubber: &SecretRedactor) -> ContentBlock {
    let kind = wire.get("type").and_then(Value::as_str).map_or_else(
        || "unknown".to_owned(),
        |kind| bounded(&scrubber.redact_str(kind), 64),
    );
    serde_json::from_value(wire).unwrap_or_else(|_| {
        ContentBlock::text(format!(
            "[a content block of kind `{kind}` from the MCP server was left out: this host does not read it]"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::super::scripted_server::{completed, connected};
    use super::*;
    use serde_json::json;

    fn wire_result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn blocks_cross_as_they_are_and_errors_become_messages() {
        let result = wire_result(json!({
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
                {"type": "resource", "resource": {"uri": "mem://a", "mimeType": "text/plain", "text": "A"}}
            ],
            "structuredContent": {"n": 1}
        }));
        let RemoteOutcome::Complete(output) =
            complete(result, None, 10_000, &SecretRedactor::default()).unwrap()
        else {
            panic!("a complete result");
        };
        assert_eq!(output.value, json!({"n": 1}));
        let kinds: Vec<_> = output.content().iter().map(ContentBlock::kind).collect();
        assert_eq!(
            kinds,
            ["text", "image", "audio", "resource_link", "resource"]
        );

        let failed = wire_result(
            json!({"content": [{"type": "text", "text": "no such zone"}], "isError": true}),
        );
        match complete(failed, None, 10_000, &SecretRedactor::default()).unwrap() {
            RemoteOutcome::Failed(message) => assert_eq!(message, "no such zone"),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    /// A remote error told only in its structured value keeps what it says: the value is the
    /// message (with the endpoint's credentials taken out), not a generic "without a message".
    #[test]
    fn a_remote_error_with_only_a_structured_value_keeps_it_as_its_message() {
        let failed = wire_result(json!({
            "content": [],
            "structuredContent": {"error": "quota exceeded", "key": "sk-endpoint-1"},
            "isError": true
        }));
        let scrubber = SecretRedactor::new(["sk-endpoint-1"]);
        match complete(failed, None, 10_000, &scrubber).unwrap() {
            RemoteOutcome::Failed(message) => {
                assert!(message.contains("quota exceeded"), "{message}");
                assert!(!message.contains("sk-endpoint-1"), "{message}");
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn a_result_over_the_bound_is_refused_with_its_size() {
        let result = wire_result(json!({"content": [{"type": "text", "text": "x".repeat(500)}]}));
        let error = complete(result, None, 100, &SecretRedactor::default()).unwrap_err();
        assert_eq!(error.code().as_str(), "output_too_large");
        assert!(
            error.message().contains("over the bound of 100"),
            "{}",
            error.message()
        );
    }

    /// A remote error longer than the bound is still the tool's error, told by its text cut to
    /// the bound; the endpoint's credentials come out before the cut, so none is left half.
    #[test]
    fn a_remote_error_over_the_bound_is_its_message_cut() {
        let text = format!("{}sk-endpoint-1{}", "x".repeat(80), "y".repeat(500));
        let failed =
            wire_result(json!({"content": [{"type": "text", "text": text}], "isError": true}));
        let scrubber = SecretRedactor::new(["sk-endpoint-1"]);
        match complete(failed, None, 100, &scrubber).unwrap() {
            RemoteOutcome::Failed(message) => {
                assert!(message.len() <= 100, "{message}");
                assert!(message.starts_with("xxxx"), "{message}");
                assert!(message.contains("bytes in all"), "{message}");
                assert!(!message.contains("sk-e"), "{message}");
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    /// The `tools/call` answer of a server that asks for input the SDK cannot read: a form with
    /// a field of a kind it does not know, and a request of a method from a newer revision.
    const ASKING_CALLS: &str = r#"    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","inputRequests":{"pick":{"method":"elicitation/create","params":{"message":"Pick a zone","requestedSchema":{"type":"object","properties":{"zone":{"type":"object","properties":{}}}}}},"later":{"method":"future/ask","params":{"message":"Anything else?"}}},"requestState":"s1"}}\n' "$id" ;;"#;

    /// An `input_required` the SDK cannot read still reaches the host, typed, with what the
    /// server asked as it wrote it: not a protocol error that hides the question.
    #[tokio::test]
    async fn an_input_request_the_sdk_cannot_read_still_reaches_the_host() {
        use super::super::scripted_server::scripted_server;
        use crate::context::ToolExecutionContext;

        let server = scripted_server("asking", ASKING_CALLS);
        let client = connected(server).await;
        let ctx = ToolExecutionContext::new();
        let outcome = client.call("deploy", json!({}), &ctx).await;
        let Ok(RemoteOutcome::InputRequired(asked)) = outcome else {
            panic!("an input request: {outcome:?}");
        };
        assert_eq!(asked.tool, "deploy");
        assert_eq!(asked.request_state.as_deref(), Some("s1"));
        let requests: Vec<_> = asked
            .requests
            .iter()
            .map(|request| {
                (
                    request.key.as_str(),
                    request.method.as_str(),
                    request.message(),
                )
            })
            .collect();
        assert_eq!(
            requests,
            [
                ("later", "future/ask", Some("Anything else?")),
                ("pick", "elicitation/create", Some("Pick a zone")),
            ]
        );
        client.close().await;
    }

    /// The `tools/call` answer of a server asking for input with its token in the question (a
    /// form the SDK reads, and one of a newer method it does not).
    const ASKING_WITH_TOKEN: &str = r#"    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","inputRequests":{"pick":{"method":"elicitation/create","params":{"message":"Confirm key %s","requestedSchema":{"type":"object","properties":{}}}},"later":{"method":"future/ask","params":{"message":"Still %s?"}}},"requestState":"s1"}}\n' "$id" "$API_TOKEN" "$API_TOKEN" ;;"#;

    /// A request for input is the server's text like a result: the host gets it, typed, with
    /// the endpoint's credentials taken out of what it asks (its state, opaque, sent back as
    /// it came).
    #[tokio::test]
    async fn an_input_request_never_carries_the_endpoints_credentials() {
        use super::super::scripted_server::scripted_server;
        use crate::context::ToolExecutionContext;

        let token = "tok-2d7f4a9c1e8b6035";
        let server = scripted_server("asking", ASKING_WITH_TOKEN).secret_env("API_TOKEN", token);
        let client = connected(server).await;
        let outcome = client
            .call("deploy", json!({}), &ToolExecutionContext::new())
            .await;
        let Ok(RemoteOutcome::InputRequired(asked)) = outcome else {
            panic!("an input request: {outcome:?}");
        };
        let shown = format!("{asked:?}");
        assert!(shown.contains("Confirm key [REDACTED]"), "{shown}");
        assert!(!shown.contains(token), "{shown}");
        assert_eq!(asked.request_state.as_deref(), Some("s1"));
        client.close().await;
    }

    /// The `tools/call` answers of a server whose results hold a text block and a block of a
    /// kind this host does not know; `isError` when the tool is `fail`.
    const NEWER_CALLS: &str = r#"    *'"method":"tools/call"'*'"fail"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"no such zone"},{"type":"hologram","frames":3}],"isError":true}}\n' "$id" ;;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"hi"},{"type":"hologram","frames":3}],"structuredContent":{"n":1}}}\n' "$id" ;;"#;

    /// A block of a kind the host does not know (a newer revision's) costs only that block: the
    /// rest of the result crosses, with a text block saying what was left out, and a remote
    /// error stays the tool's error.
    #[tokio::test]
    async fn a_block_of_an_unknown_kind_is_left_out_and_the_rest_of_the_result_kept() {
        use super::super::scripted_server::scripted_server;
        use crate::context::ToolExecutionContext;

        let server = scripted_server("newer", NEWER_CALLS);
        let client = connected(server).await;
        let ctx = ToolExecutionContext::new();
        let output = completed(&client, "show").await;
        assert_eq!(output.value, json!({"n": 1}));
        let texts: Vec<_> = output
            .content()
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        assert_eq!(texts[0], "hi");
        assert!(texts[1].contains("`hologram`"), "{texts:?}");

        let failed = client.call("fail", json!({}), &ctx).await.unwrap();
        match failed {
            RemoteOutcome::Failed(message) => {
                assert!(message.contains("no such zone"), "{message}")
            }
            other => panic!("expected a failure, got {other:?}"),
        }
        client.close().await;
    }

    /// A result whose every media type quotes the endpoint's token: an image's, an audio's, a
    /// resource link's and an embedded resource's.
    fn quoting_media_types(token: &str) -> Value {
        json!({
            "content": [
                {"type": "image", "data": "iVBORw==", "mimeType": format!("image/png; k={token}")},
                {"type": "audio", "data": "UklGRg==", "mimeType": format!("audio/{token}")},
                {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": format!("text/{token}")},
                {"type": "resource", "resource": {"uri": "mem://a", "mimeType": format!("text/{token}"), "blob": "QQ=="}}
            ]
        })
    }

    /// A media type is the server's text like any other: one that quotes the endpoint's
    /// credentials has them taken out, whether the SDK read the result or the bridge read it
    /// leniently; the base64 data is left as it is.
    #[test]
    fn media_types_never_carry_the_endpoints_credentials() {
        let token = "sk-endpoint-1";
        let scrubber = SecretRedactor::new([token]);
        let read = complete(
            wire_result(quoting_media_types(token)),
            None,
            10_000,
            &scrubber,
        );
        let unread = lenient(quoting_media_types(token), None, 10_000, &scrubber).unwrap();
        for outcome in [read, unread] {
            let Ok(RemoteOutcome::Complete(output)) = outcome else {
                panic!("a complete result: {outcome:?}");
            };
            let json = serde_json::to_string(output.content()).unwrap();
            assert!(!json.contains(token), "{json}");
            assert!(json.contains("image/png; k=[REDACTED]"), "{json}");
            assert!(json.contains("iVBORw=="), "the data stays: {json}");
        }
    }

    /// The kind of a block the host cannot read is quoted in the text block that stands for
    /// it, cut to a bound: a kind holding the endpoint's token is scrubbed before the cut, so
    /// no part of the token is left where the scrubber can no longer find it.
    #[test]
    fn an_unknown_kinds_quote_never_keeps_part_of_a_credential() {
        let token = "sk-endpoint-7d2c9e4a1b8f";
        let kind = format!("{}{token}{}", "k".repeat(30), "z".repeat(30));
        let result = json!({"content": [{"type": kind, "frames": 3}]});
        let scrubber = SecretRedactor::new([token]);
        let outcome = lenient(result, None, 10_000, &scrubber).unwrap();
        let Ok(RemoteOutcome::Complete(output)) = outcome else {
            panic!("a complete result: {outcome:?}");
        };
        let text = output.content()[0].as_text().unwrap();
        assert!(text.contains("left out"), "{text}");
        assert!(!text.contains("sk-endp"), "{text}");
    }

    /// A result that breaks its tool's output schema fails with the validator's reason, which
    /// quotes the schema (a `const` the value should have been) and is cut to a bound: a
    /// server's token in the quoted text leaves no part of itself in the message.
    #[test]
    fn a_breach_quoting_the_schema_never_keeps_part_of_a_credential() {
        use super::super::output_contract::engine;
        use super::super::server::Bounds;

        let token = "sk-endpoint-7d2c9e4a1b8f";
        let expected = format!("{}{token}", "x".repeat(180));
        let schema = json!({"type": "object", "properties": {"k": {"const": expected}}});
        let contract = OutputContract::compile(
            &engine(&Bounds::default(), SecretRedactor::new([token])),
            &schema,
        )
        .unwrap();
        let scrubber = SecretRedactor::new([token]);
        let structured = Some(json!({"k": "other"}));
        let error = finish(
            Vec::new(),
            structured,
            None,
            Some(&contract),
            10_000,
            &scrubber,
        )
        .unwrap_err();
        let message = error.message();
        assert!(message.contains("/k"), "{message}");
        assert!(!message.contains("sk-endp"), "{message}");
    }

    /// A server of one tool, `show`, that writes its token into its blocks' media types.
    const QUOTING_MEDIA_TYPES: &str = r#"    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"show","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"image","data":"iVBORw==","mimeType":"image/%s"},{"type":"resource","resource":{"uri":"mem://a","mimeType":"text/%s","text":"A"}}]}}\n' "$id" "$API_TOKEN" "$API_TOKEN" ;;"#;

    /// A token a server writes into a media type reaches neither the model nor a ledger row.
    #[tokio::test]
    async fn a_media_type_quoting_a_token_reaches_no_result_and_no_row() {
        use super::super::scripted_server::scripted_server;
        use crate::dispatch::InMemoryLedger;
        use crate::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};

        let token = "tok-7d2c9e4a1b8f60357";
        let server = scripted_server("media", QUOTING_MEDIA_TYPES).secret_env("API_TOKEN", token);
        let client = connected(server).await;
        let tools = client.tools().await.unwrap().into_definitions();
        let ledger = InMemoryLedger::default();
        let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(tools))
            .ledger(ledger.clone())
            .build();
        let call = ToolCall::new("c-show", "show", json!({}));
        let result = dispatcher
            .dispatch(call, &ToolExecutionContext::new())
            .await
            .unwrap();
        let shown = serde_json::to_string(result.content()).unwrap();
        assert!(!shown.contains(token), "{shown}");
        assert!(shown.contains("image/[REDACTED]"), "{shown}");
        let rows = serde_json::to_string(&ledger.records()).unwrap();
        assert!(!rows.contains(token), "a ledger row holds the token");
        client.close().await;
    }
}
