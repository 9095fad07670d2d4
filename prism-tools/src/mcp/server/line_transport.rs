//! The stdio transport: one JSON-RPC message per line.
//!
//! It frames, bounds and answers lines as rmcp's own line transport does (the same 16 MiB
//! bound, the same handling of unreadable lines, rmcp's codec writing every answer), and differs
//! in one thing, how a line is read. rmcp reads every line as its union of all client messages,
//! which tries each kind of request in turn until one fits; `tools/call` is the twelfth, so each
//! call first ran the decoders of eleven other request types and made and dropped eleven
//! decoding errors. Most lines a tool server reads are calls, so a line is read as rmcp's
//! `tools/call` request first, and a line that is not exactly one goes to rmcp's codec. Both
//! readings give the same message for every line the first accepts (see the tests).

use std::sync::{Arc, LazyLock};

use bytes::{BufMut, BytesMut};
use futures_util::SinkExt;
use memchr::memmem::Finder;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ErrorData,
    InputResponses, JsonObject, JsonRpcMessage, JsonRpcRequest, JsonRpcVersion2_0, RequestId,
    RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{
    DEFAULT_MAX_LINE_LENGTH, JsonRpcMessageCodec, JsonRpcMessageCodecError,
};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::Mutex;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, Decoder, FramedWrite};

/// How much room a read is given: a pipe holds 64 KiB, and a call's line is well under that.
const READ_SIZE: usize = 8 * 1024;

/// A line longer than this grew the read buffer past what lines usually need, so the buffer lets
/// that allocation go once the line has been taken from it.
const LONG_LINE: usize = 32 * 1024;

type Writer<W> = FramedWrite<W, JsonRpcMessageCodec<ServerJsonRpcMessage>>;

/// A server's end of a line-delimited JSON-RPC stream.
pub(super) struct LineTransport<R, W> {
    read: R,
    buffer: BytesMut,
    lines: AnyDelimiterCodec,
    messages: JsonRpcMessageCodec<ClientJsonRpcMessage>,
    write: Arc<Mutex<Option<Writer<W>>>>,
    /// A well-formed line that is no client message is answered with "Invalid request", as rmcp
    /// does. `receive` can be dropped between queueing that answer and flushing it, so where it
    /// got to is kept here.
    refusal: Option<Refusal>,
    /// A long line (read or dropped) has been taken from `buffer`, whose allocation is then as
    /// large as that line: the next read starts on a buffer sized for what is left.
    shrink: bool,
}

#[derive(Clone, Copy)]
enum Refusal {
    Queue,
    Flush,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Lines are bounded as rmcp bounds them, at 16 MiB.
    pub(super) fn new(read: R, write: W) -> Self {
        Self::with_line_limit(read, write, DEFAULT_MAX_LINE_LENGTH)
    }

    fn with_line_limit(read: R, write: W, max_line_length: usize) -> Self {
        Self {
            read,
            buffer: BytesMut::new(),
            // rmcp's bound is on a line with its newline; the codec's is on the text before it.
            lines: AnyDelimiterCodec::new_with_max_length(
                b"\n".to_vec(),
                b"\n".to_vec(),
                max_line_length.saturating_sub(1),
            ),
            messages: JsonRpcMessageCodec::new(),
            write: Arc::new(Mutex::new(Some(FramedWrite::new(
                write,
                JsonRpcMessageCodec::new(),
            )))),
            refusal: None,
            shrink: false,
        }
    }

    /// Reads one line as a message. `None` when the line carries none to act on: blank, not
    /// JSON, a notification outside MCP (skipped, as rmcp skips it), or not a client message
    /// (an "Invalid request" answer is then due).
    fn message(&mut self, line: &[u8]) -> Option<ClientJsonRpcMessage> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return None;
        }
        if let Some(call) = tool_call(line) {
            return Some(call);
        }
        let mut whole = BytesMut::with_capacity(line.len() + 1);
        whole.extend_from_slice(line);
        whole.put_u8(b'\n');
        match self.messages.decode(&mut whole) {
            Ok(message) => message,
            Err(JsonRpcMessageCodecError::Serde(error)) if error.is_data() => {
                tracing::debug!("an MCP client sent a line that is no client message: {error}");
                self.refusal = Some(Refusal::Queue);
                None
            }
            Err(error) => {
                tracing::debug!("an MCP client sent a line that is not JSON: {error}");
                None
            }
        }
    }

    /// Reads what the client has sent so far, at least one byte unless the stream ended.
    async fn read_more(&mut self) -> std::io::Result<usize> {
        if std::mem::take(&mut self.shrink) {
            self.buffer = BytesMut::from(&self.buffer[..]);
        }
        self.buffer.reserve(READ_SIZE);
        self.read.read_buf(&mut self.buffer).await
    }

    /// Writes the "Invalid request" answer that is due, if one is.
    async fn refuse(&mut self) -> Result<(), ()> {
        let Some(state) = self.refusal else {
            return Ok(());
        };
        let mut write = self.write.lock().await;
        let framed = write.as_mut().ok_or(())?;
        if matches!(state, Refusal::Queue) {
            let refusal = ServerJsonRpcMessage::error(
                ErrorData::invalid_request("Invalid request", None),
                None,
            );
            framed.feed(refusal).await.map_err(drop)?;
            self.refusal = Some(Refusal::Flush);
        }
        framed.flush().await.map_err(drop)?;
        self.refusal = None;
        Ok(())
    }
}

/// Reads `line` as rmcp's `tools/call` request, or `None` when it is not exactly one: rmcp's
/// reading then decides what it is. A request that also has a `result` or an `error` member is
/// no request to rmcp, so it is left to rmcp too.
///
/// A line that does not name the method is not read here at all: any other line (a client's
/// answer to the server, which can be large) is then read once, by rmcp, not twice. A call
/// whose method is written with escapes is left to rmcp too.
///
/// The line is read into plain structs and the request built from them. rmcp's own types nest
/// three flattened layers (the JSON-RPC envelope, the request's `_meta`, its parameters), and
/// serde reads a flattened layer by first copying every member into a buffer and then reading
/// the buffer: that took most of a call's reading. Any line these structs refuse (a repeated
/// member, a member of the wrong type) goes to rmcp, so where both read a line they give the
/// same message (see the tests).
fn tool_call(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    // Built once: building a searcher costs more than searching a call's line.
    static METHOD: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"tools/call"));
    METHOD.find(line)?;
    let line: ToolCallLine = serde_json::from_slice(line).ok()?;
    if line.result.0 || line.error.0 {
        return None;
    }
    let ToolCallParams {
        meta,
        name,
        arguments,
        input_responses,
        request_state,
    } = line.params;
    let mut params = CallToolRequestParams::new(name);
    params.arguments = arguments;
    params.input_responses = input_responses;
    params.request_state = request_state;
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions.insert(RequestMetaObject::from(meta));
    }
    Some(JsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc: JsonRpcVersion2_0,
        id: line.id,
        request: ClientRequest::CallToolRequest(request),
    }))
}

/// A `tools/call` line as rmcp reads it, less its flattening. Other members are ignored, as
/// rmcp ignores them.
#[derive(Deserialize)]
struct ToolCallLine {
    #[serde(rename = "jsonrpc", deserialize_with = "version")]
    _jsonrpc: (),
    id: RequestId,
    #[serde(rename = "method", deserialize_with = "call_method")]
    _method: (),
    params: ToolCallParams,
    #[serde(default)]
    result: Member,
    #[serde(default)]
    error: Member,
}

/// The parameters of a `tools/call` line. The request's `_meta` goes to its extensions, where
/// rmcp puts it, and is not kept in the parameters.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolCallParams {
    #[serde(rename = "_meta")]
    meta: Option<JsonObject>,
    name: String,
    arguments: Option<JsonObject>,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

/// JSON-RPC's version, `2.0`. Like [`call_method`], read in place and only when written without
/// escapes (rmcp reads both into a `String` first).
fn version<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    exactly(deserializer, "2.0")
}

/// The method `tools/call` (the line was found by that text).
fn call_method<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    exactly(deserializer, "tools/call")
}

fn exactly<'de, D: serde::Deserializer<'de>>(deserializer: D, text: &str) -> Result<(), D::Error> {
    if <&str>::deserialize(deserializer)? == text {
        Ok(())
    } else {
        Err(serde::de::Error::custom(format_args!("not {text}")))
    }
}

/// Whether an object has a member, whatever its value (`null` included).
#[derive(Default)]
struct Member(bool);

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| Member(true))
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            match write.lock().await.as_mut() {
                Some(framed) => framed.send(item).await.map_err(Into::into),
                None => Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the stdio transport is closed",
                )),
            }
        }
    }

    /// Cancellation-safe: rmcp polls it beside its other work and drops it when that is ready
    /// first. Bytes read wait in the buffer; a line is taken from it and read as a message
    /// with no await between.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            self.refuse().await.ok()?;
            match self.lines.decode(&mut self.buffer) {
                Ok(Some(line)) => {
                    self.shrink |= line.len() > LONG_LINE;
                    if let Some(message) = self.message(&line) {
                        return Some(message);
                    }
                }
                Ok(None) => match self.read_more().await {
                    // A last line with no newline is cut short, and is dropped as rmcp does.
                    Ok(0) => return None,
                    Ok(_) => {}
                    Err(error) => {
                        tracing::error!("reading an MCP client's stdin failed: {error}");
                        return None;
                    }
                },
                Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => {
                    self.shrink = true;
                    tracing::error!(
                        max_line_length = self.lines.max_length().saturating_add(1),
                        "an MCP client's message exceeded the line limit and was dropped"
                    );
                }
                Err(AnyDelimiterCodecError::Io(error)) => {
                    tracing::error!("reading an MCP client's stdin failed: {error}");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rmcp::model::{ErrorCode, NumberOrString};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    /// rmcp's own reading of a line.
    fn rmcp_reads(line: &[u8]) -> Result<ClientJsonRpcMessage, serde_json::Error> {
        serde_json::from_slice(line)
    }

    /// Both readings of `line` agree: either the direct one declines, or rmcp's gives the same
    /// message, on the wire and in every field.
    fn readings_agree(line: &[u8]) -> Result<bool, String> {
        let Some(direct) = tool_call(line) else {
            return Ok(false);
        };
        let text = String::from_utf8_lossy(line);
        let rmcp = rmcp_reads(line).map_err(|error| format!("rmcp refuses {text}: {error}"))?;
        let wire = |message: &ClientJsonRpcMessage| serde_json::to_value(message).unwrap();
        if wire(&direct) != wire(&rmcp) || format!("{direct:?}") != format!("{rmcp:?}") {
            return Err(format!("{text}: {direct:?} against {rmcp:?}"));
        }
        Ok(true)
    }

    #[test]
    fn a_tool_call_is_read_directly_as_rmcp_reads_it() {
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"noop","arguments":{"a":[1,2.5,"x"]},"_meta":{"progressToken":7}}}"#;
        let Some(JsonRpcMessage::Request(request)) = tool_call(line) else {
            panic!("a tools/call line is read directly");
        };
        assert_eq!(request.id, NumberOrString::Number(7));
        let ClientRequest::CallToolRequest(call) = request.request else {
            panic!("read as a tools/call request");
        };
        assert_eq!(call.params.name, "noop");
        assert_eq!(readings_agree(line), Ok(true));
    }

    #[tokio::test]
    async fn a_call_whose_method_or_version_is_written_with_escapes_is_read_by_rmcp() {
        let (_client, server) = tokio::io::duplex(1024);
        let (server_read, server_write) = tokio::io::split(server);
        let mut transport = LineTransport::new(server_read, server_write);
        let lines: [&[u8]; 2] = [
            br#"{"jsonrpc":"2.0","id":4,"method":"tools\/call","params":{"name":"a"}}"#,
            br#"{"jsonrpc":"2\u002e0","id":4,"method":"tools/call","params":{"name":"a"}}"#,
        ];
        for line in lines {
            assert!(tool_call(line).is_none());
            let Some(JsonRpcMessage::Request(request)) = transport.message(line) else {
                panic!("rmcp reads the call");
            };
            assert!(
                matches!(request.request, ClientRequest::CallToolRequest(call) if call.params.name == "a")
            );
        }
    }

    #[test]
    fn a_line_that_is_not_exactly_a_tool_call_is_left_to_rmcp() {
        let lines: [&[u8]; 9] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"result":null}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"error":{}}"#,
            br#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"a"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":[]}}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}".as_bytes(),
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"a"}}"#,
        ];
        for line in lines {
            assert!(
                tool_call(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    /// `tools/call` parameters rmcp reads.
    const CALL_PARAMS: &[&str] = &[
        r#"{"name":"noop"}"#,
        r#"{"name":"noop","arguments":{}}"#,
        r#"{"name":"x","arguments":{"a":1.5e300,"b":"\u00e9\n","c":[null,true]}}"#,
        r#"{"name":"x","arguments":null}"#,
        r#"{"name":"x","_meta":{"progressToken":7}}"#,
        r#"{"name":"x","_meta":{"progressToken":"t","other":{"deep":[1]}}}"#,
        r#"{"name":"x","task":{"ttl":1000}}"#,
        r#"{"name":"x","extra":true}"#,
        r#"{"name":"x","requestState":"sealed","inputResponses":{"approval":{"action":"accept","content":{"approve":true}}}}"#,
        r#"{"name":"x","requestState":null,"inputResponses":null}"#,
        r#"{"name":"x","meta":{"progressToken":1},"_meta":{}}"#,
        r#"{"name":"x","_meta":null}"#,
    ];

    /// `tools/call` parameters rmcp does not read as such.
    const OTHER_PARAMS: &[&str] = &[
        r#"{"name":"x","arguments":[]}"#,
        r#"{"name":1}"#,
        r#"{}"#,
        "null",
        r#"{"name":"x","name":"y"}"#,
        r#"{"name":"x","arguments":{},"arguments":{"a":1}}"#,
        r#"{"name":"x","_meta":{},"_meta":{"progressToken":1}}"#,
        r#"{"name":"x","requestState":1}"#,
        r#"{"name":"x","inputResponses":[]}"#,
    ];

    /// Members a client's line may have, right and wrong, each written as JSON text so that a
    /// line can repeat one.
    fn member() -> impl Strategy<Value = String> {
        let values = |key: &'static str, values: &'static [&'static str]| {
            proptest::sample::select(values).prop_map(move |value| format!("\"{key}\":{value}"))
        };
        prop_oneof![
            values(
                "jsonrpc",
                &[r#""2.0""#, r#""2.0""#, r#""1.0""#, "2", "null"]
            ),
            values(
                "id",
                &[
                    "1",
                    "0",
                    "-3",
                    "18446744073709551615",
                    r#""a""#,
                    "null",
                    "1.5",
                    "{}"
                ]
            ),
            values(
                "method",
                &[
                    r#""tools/call""#,
                    r#""tools/call""#,
                    r#""tools/list""#,
                    r#""ping""#,
                    "1"
                ]
            ),
            proptest::sample::select(CALL_PARAMS).prop_map(|params| format!("\"params\":{params}")),
            values("params", OTHER_PARAMS),
            values("result", &["{}", "null"]),
            values("error", &[r#"{"code":1,"message":"m"}"#, "null"]),
            values("_meta", &[r#"{"progressToken":1}"#]),
            values("extra", &["1", r#""tools/call""#]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn the_direct_reading_gives_what_rmcps_gives(
            members in proptest::collection::vec(member(), 0..8)
        ) {
            let line = format!("{{{}}}", members.join(","));
            readings_agree(line.as_bytes()).map_err(TestCaseError::fail)?;
        }

        /// Well-formed calls, which the direct reading accepts unless they carry a response's
        /// member, so that it is compared on lines it reads and not only on lines it declines.
        #[test]
        fn the_direct_reading_of_a_well_formed_call_gives_what_rmcps_gives(
            id in prop_oneof![Just("1".to_owned()), "[1-9][0-9]{0,17}", "\"[a-z]{0,4}\""],
            params in proptest::sample::select(CALL_PARAMS),
            extra in proptest::option::of(member().prop_filter("a member a call has no other of", |member| {
                ["\"_meta\"", "\"extra\"", "\"result\"", "\"error\""]
                    .iter()
                    .any(|key| member.starts_with(key))
            })),
        ) {
            let mut members = vec![
                r#""jsonrpc":"2.0""#.to_owned(),
                format!("\"id\":{id}"),
                r#""method":"tools/call""#.to_owned(),
                format!("\"params\":{params}"),
            ];
            let response = extra
                .as_ref()
                .is_some_and(|member| member.starts_with("\"result\"") || member.starts_with("\"error\""));
            members.extend(extra);
            let line = format!("{{{}}}", members.join(","));
            // A call that also carries a response's member is no request to rmcp.
            prop_assert_eq!(readings_agree(line.as_bytes()), Ok(!response), "{}", line);
        }
    }

    #[tokio::test]
    async fn lines_are_read_as_rmcp_reads_them_and_a_non_message_is_refused() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let mut transport = LineTransport::new(server_read, server_write);
        let (client_read, mut client_write) = tokio::io::split(client);
        let sent = concat!(
            "\n",
            "not json\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#,
            "\r\n",
            r#"{"hello":1}"#,
            "\n",
            "\u{feff}",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cut"#,
        );
        client_write.write_all(sent.as_bytes()).await.unwrap();

        let request = |message: Option<ClientJsonRpcMessage>| match message {
            Some(JsonRpcMessage::Request(request)) => (request.id, request.request),
            other => panic!("expected a request, got {other:?}"),
        };
        let (id, call) = request(transport.receive().await);
        assert_eq!(id, NumberOrString::Number(1));
        assert!(matches!(call, ClientRequest::CallToolRequest(call) if call.params.name == "a"));
        let (id, list) = request(transport.receive().await);
        assert_eq!(id, NumberOrString::Number(2));
        assert!(matches!(list, ClientRequest::ListToolsRequest(_)));

        let mut answers = BufReader::new(client_read).lines();
        let refusal = answers.next_line().await.unwrap().unwrap();
        let refusal: ServerJsonRpcMessage = serde_json::from_str(&refusal).unwrap();
        let JsonRpcMessage::Error(refusal) = refusal else {
            panic!("a line that is no message is answered with an error, got {refusal:?}");
        };
        assert_eq!(refusal.error.code, ErrorCode::INVALID_REQUEST);

        // The client goes away in the middle of a line: that line is dropped.
        client_write.shutdown().await.unwrap();
        assert!(transport.receive().await.is_none());
    }

    /// A line far longer than most grows the read buffer; once it has been read, the buffer goes
    /// back to the size a call needs rather than keeping that allocation for the session.
    #[tokio::test]
    async fn the_read_buffer_shrinks_back_after_a_long_line() {
        for limit in [4 << 20, 1 << 20] {
            let (client, server) = tokio::io::duplex(64 * 1024);
            let (server_read, server_write) = tokio::io::split(server);
            let mut transport = LineTransport::with_line_limit(server_read, server_write, limit);
            let (_client_read, mut client_write) = tokio::io::split(client);
            let call = |id: u32, name: &str| {
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{name}\"}}}}\n"
                )
            };
            // Read when the limit allows it, dropped as over-long when it does not.
            let long = call(1, &"a".repeat(2 << 20));
            let next = call(2, "b");
            let writing = tokio::spawn(async move {
                client_write.write_all(long.as_bytes()).await.unwrap();
                client_write.write_all(next.as_bytes()).await.unwrap();
                client_write
            });
            if limit > 2 << 20 {
                let Some(JsonRpcMessage::Request(request)) = transport.receive().await else {
                    panic!("the long line is read");
                };
                assert_eq!(request.id, NumberOrString::Number(1));
            }
            let Some(JsonRpcMessage::Request(request)) = transport.receive().await else {
                panic!("the next line is read");
            };
            assert_eq!(request.id, NumberOrString::Number(2));
            let mut client_write = writing.await.unwrap();
            client_write
                .write_all(call(3, "c").as_bytes())
                .await
                .unwrap();
            let Some(JsonRpcMessage::Request(request)) = transport.receive().await else {
                panic!("the next line is read");
            };
            assert_eq!(request.id, NumberOrString::Number(3));
            assert!(
                transport.buffer.capacity() <= 64 * 1024,
                "the read buffer kept {} bytes after a line of 2 MiB (limit {limit})",
                transport.buffer.capacity()
            );
        }
    }

    /// rmcp's bound counts a line's newline (and a `\r` before it): a line whose text is exactly
    /// the bound is one byte over it.
    #[tokio::test]
    async fn the_line_bound_counts_the_newline_as_rmcps_does() {
        let call = |id: u32| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"a"}}}}"#
            )
        };
        let limit = call(1).len();
        for (newline, lines) in [("\n", 1), ("\r\n", 2)] {
            let (client, server) = tokio::io::duplex(64 * 1024);
            let (server_read, server_write) = tokio::io::split(server);
            let mut transport =
                LineTransport::with_line_limit(server_read, server_write, limit + lines - 1);
            let (_client_read, mut client_write) = tokio::io::split(client);
            let short = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":""}}"#;
            let sent = format!("{}{newline}{}{newline}{short}{newline}", call(1), call(2));
            client_write.write_all(sent.as_bytes()).await.unwrap();
            client_write.shutdown().await.unwrap();
            let Some(JsonRpcMessage::Request(request)) = transport.receive().await else {
                panic!("the line under the bound is read");
            };
            assert_eq!(
                request.id,
                NumberOrString::Number(3),
                "a line one byte over the bound with {newline:?} is dropped"
            );
            assert!(transport.receive().await.is_none());
        }
    }

    #[tokio::test]
    async fn an_over_long_line_is_dropped_and_the_next_one_is_read() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let mut transport = LineTransport::with_line_limit(server_read, server_write, 256);
        let (_client_read, mut client_write) = tokio::io::split(client);
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{}"}}}}"#,
            "a".repeat(1_000)
        );
        let next = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}"#;
        client_write
            .write_all(format!("{long}\n{next}\n").as_bytes())
            .await
            .unwrap();
        let Some(JsonRpcMessage::Request(request)) = transport.receive().await else {
            panic!("the line after the over-long one is read");
        };
        assert_eq!(request.id, NumberOrString::Number(2));
    }
}
