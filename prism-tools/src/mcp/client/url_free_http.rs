//! The HTTP client the bridge hands the SDK: reqwest's, with the URL taken out of every error
//! it gives back, and the endpoint's credentials out of the server's answers those errors quote.
//!
//! reqwest quotes a failed request's URL, query string included, and an endpoint's token often
//! travels in the query; the SDK logs its transport errors whole, at `ERROR`, where no scrubber
//! of the bridge's can reach them. An error without its URL still says what failed (connect,
//! send, body, timeout), and the bridge's own messages name the endpoint by scheme, host and port.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use rmcp_sse_stream::Sse;

use crate::redact::SecretRedactor;

/// reqwest's client, every error it returns stripped of its URL (see the module docs).
#[derive(Clone)]
pub(super) struct UrlFreeClient {
    client: reqwest::Client,
    /// The endpoint's credentials.
    scrubber: SecretRedactor,
}

impl UrlFreeClient {
    /// `client`, for an endpoint whose credentials `scrubber` takes out.
    pub(super) fn new(client: reqwest::Client, scrubber: SecretRedactor) -> Self {
        Self { client, scrubber }
    }

    /// What a POST gave, its events and its error without the URL.
    fn answered(
        &self,
        posted: Result<StreamableHttpPostResponse, Failed>,
    ) -> Result<StreamableHttpPostResponse, Failed> {
        posted
            .map(answer_without_url)
            .map_err(|error| self.cleaned(error))
    }

    /// `error` without its URL and, where it quotes what the server answered (the body of a
    /// refusal, an answer it could not read, cut where the SDK stops reading), without the
    /// endpoint's credentials, a credential split by that cut included: the SDK logs these
    /// errors as they are.
    fn cleaned(&self, error: Failed) -> Failed {
        match error {
            StreamableHttpError::Client(error) => StreamableHttpError::Client(error.without_url()),
            StreamableHttpError::Sse(error) => {
                StreamableHttpError::Sse(event_error_without_url(error))
            }
            StreamableHttpError::UnexpectedServerResponse(text) => {
                StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    self.scrubber.redact_cut_str(&text).into_owned(),
                ))
            }
            StreamableHttpError::UnexpectedContentType(Some(kind)) => {
                StreamableHttpError::UnexpectedContentType(Some(
                    self.scrubber.redact_cut_str(&kind).into_owned(),
                ))
            }
            other => other,
        }
    }
}

type Failed = StreamableHttpError<reqwest::Error>;
type Events = BoxStream<'static, Result<Sse, SseError>>;

impl StreamableHttpClient for UrlFreeClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failed> {
        let posted = self
            .client
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.answered(posted)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Failed> {
        let posted = self
            .client
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.answered(posted)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failed> {
        let posted = self
            .client
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.answered(posted)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failed> {
        self.client
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
            .map_err(|error| self.cleaned(error))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Failed> {
        self.client
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .map(events_without_url)
            .map_err(|error| self.cleaned(error))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, Failed> {
        self.client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map(events_without_url)
            .map_err(|error| self.cleaned(error))
    }
}

/// An event stream's error: reading the body can fail with a reqwest error, URL and all.
fn event_error_without_url(error: SseError) -> SseError {
    match error {
        SseError::Body(body) => SseError::Body(match body.downcast::<reqwest::Error>() {
            Ok(error) => Box::new(error.without_url()),
            Err(other) => other,
        }),
        other => other,
    }
}

fn events_without_url(events: Events) -> Events {
    events
        .map(|event| event.map_err(event_error_without_url))
        .boxed()
}

fn answer_without_url(answer: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
    match answer {
        StreamableHttpPostResponse::Sse(events, session) => {
            StreamableHttpPostResponse::Sse(events_without_url(events), session)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_failed_request_loses_its_url() {
        // A server that takes each connection and closes it without an answer.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let closing = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                drop(stream);
            }
        });
        let client = UrlFreeClient::new(
            crate::tls::client_builder().unwrap().build().unwrap(),
            SecretRedactor::default(),
        );
        let url = format!("http://{address}/mcp?key=sk-query-1");
        let error = client
            .delete_session(url.into(), "s".into(), None, HashMap::new())
            .await
            .unwrap_err();
        closing.abort();
        let shown = format!("{error} {error:?}");
        assert!(matches!(error, StreamableHttpError::Client(_)), "{shown}");
        assert!(!shown.contains("sk-query-1"), "{shown}");
        assert!(!shown.contains("/mcp"), "{shown}");
    }

    /// The SDK logs its transport's errors as they are (a failed standalone stream, a worker
    /// that quits), and they quote the body of a refusal: a body echoing the request's
    /// credential, even cut where the SDK stops reading it, reaches the error without it.
    #[tokio::test]
    async fn a_refusal_echoing_the_credential_loses_it() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let token = "tok-81c3e9a2f5d74b60";
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let refusing = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut head = [0_u8; 4096];
                let _ = stream.read(&mut head).await;
                let body = format!("forbidden: the key Bearer {token} is revoked");
                let answer = format!(
                    "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        let scrubber = SecretRedactor::new([token]);
        let client = UrlFreeClient::new(
            crate::tls::client_builder().unwrap().build().unwrap(),
            scrubber,
        );
        let url = format!("http://{address}/mcp");
        let ping = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let ping: ClientJsonRpcMessage = serde_json::from_value(ping).unwrap();
        let failed = client
            .post_message(url.into(), ping, Some("s".into()), None, HashMap::new())
            .await;
        refusing.abort();
        let Err(error) = failed else {
            panic!("a refusal: {failed:?}");
        };
        let shown = format!("{error} {error:?}");
        assert!(shown.contains("forbidden"), "{shown}");
        assert!(!shown.contains("tok-81c3"), "{shown}");
    }

    #[test]
    fn an_event_streams_body_error_loses_its_url_and_other_errors_cross_unchanged() {
        let unchanged = event_error_without_url(SseError::InvalidLine);
        assert!(matches!(unchanged, SseError::InvalidLine));
        let other: Box<dyn std::error::Error + Send + Sync> = "not reqwest's".into();
        let SseError::Body(body) = event_error_without_url(SseError::Body(other)) else {
            panic!("a body error stays one");
        };
        assert_eq!(body.to_string(), "not reqwest's");
    }
}
