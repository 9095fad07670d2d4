//! [`HttpProvider`]: a [`WireFormat`](crate::provider::wire::WireFormat) over HTTP, with
//! timeouts, retries and a redacted key.
//!
//! ```text
//! complete:  prepare tools ─► encode ─► key ─► attempt ─► answer
//!                                         ▲       │ failed before the body began, retryable
//!                                         └─ wait ◄┘ (a `Retrying` event; at most 2 by default)
//! attempt:   send ─► head and first event (or first piece) within first_byte ─► 2xx? stream:
//!            events into the decoder, each within gap of the last  ·  whole (or a JSON body):
//!            body, then decode  ·  else: status error
//! ```
//!
//! Dropping the future (the run's cancellation does) drops the connection with it.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::time::{timeout, timeout_at};
use tracing::Instrument;

use crate::effects::BoxFuture;
use crate::provider::http::api::Api;
use crate::provider::http::key::{ApiKey, ResolvedKey};
use crate::provider::http::retry::{server_wait, should_retry};
use crate::provider::http::span::{chat_span, record_outcome};
use crate::provider::http::status::{bounded, status_error};
use crate::provider::http::stream::{
    FirstByte, bounded_body, error_chain, read_error_body, read_stream, read_whole, transport,
};
use crate::provider::http::{RetryPolicy, Timeouts};
use crate::provider::prepare::prepare_tools;
use crate::provider::wire::{ModelSettings, ToolTable};
use crate::redact::SecretRedactor;
use crate::redact::shown_url;
use crate::run::{
    Provider, ProviderError, ProviderErrorKind, ProviderEvent, ProviderRequest, ProviderResponse,
};
use crate::schema::LoweringCache;

/// The most bytes of an error answer read for its message.
const ERROR_BODY_LIMIT: u64 = 64 << 10;

/// A model behind an HTTP API: OpenAI Chat Completions (and every compatible server), OpenAI
/// Responses, Anthropic Messages or Gemini. Cheap to clone.
///
/// ```no_run
/// use prism::provider::http::{HttpProvider, KeySource};
///
/// // A local OpenAI-compatible server (Ollama, vLLM, llama.cpp) needs no key.
/// let local = HttpProvider::openai_compatible("http://localhost:11434/v1", "qwen3:8b")
///     .build()
///     .unwrap();
/// // OpenAI itself, with the key from OPENAI_API_KEY.
/// let openai = HttpProvider::openai_chat("gpt-4o-mini").build().unwrap();
/// ```
#[derive(Clone)]
pub struct HttpProvider {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) client: reqwest::Client,
    pub(crate) api: Api,
    pub(crate) settings: ModelSettings,
    pub(crate) key: ResolvedKey,
    /// Knows the fixed key; a host source's key is added per turn.
    pub(crate) redactor: SecretRedactor,
    /// The host source's most recent distinct keys, newest last, for [`Provider::secrets`].
    pub(crate) host_keys: Mutex<Vec<ApiKey>>,
    pub(crate) timeouts: Timeouts,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_response_bytes: u64,
    pub(crate) strict_tools: bool,
    pub(crate) lowering: LoweringCache,
}

/// How many of a host source's keys [`HttpProvider`] keeps for the redactor.
const HOST_KEYS_KEPT: usize = 8;

/// A failed attempt, and whether it may be tried again.
struct Failure {
    error: ProviderError,
    retry: bool,
    headers: Option<reqwest::header::HeaderMap>,
}

impl Failure {
    fn last(error: ProviderError) -> Self {
        Self {
            error,
            retry: false,
            headers: None,
        }
    }
}

impl HttpProvider {
    /// The model requests ask for.
    pub fn model(&self) -> &str {
        &self.inner.settings.model
    }

    /// `gen_ai.provider.name` of this API (`openai`, `anthropic`, `gcp.gemini`).
    pub fn provider_name(&self) -> &'static str {
        self.inner.api.provider_name
    }

    async fn turn(&self, request: &ProviderRequest<'_>) -> Result<ProviderResponse, ProviderError> {
        let inner = &*self.inner;
        let invalid =
            |message: String| ProviderError::with_kind(ProviderErrorKind::InvalidRequest, message);
        let dialect = inner.api.dialect(inner.strict_tools);
        let prepared = prepare_tools(request.tools, dialect, inner.api.names, &inner.lowering)
            .map_err(|error| invalid(error.to_string()))?;
        let tools = Arc::new(prepared.table);
        let encoded = inner
            .api
            .format
            .encode_request(request, &tools, &inner.settings)
            .map_err(|error| invalid(error.to_string()))?;
        // What the lowering or the format could not send as it was is never silent.
        for note in &prepared.notes {
            tracing::debug!(target: "prism_tools", at = %note.at, "{}", note.note);
        }
        for note in &encoded.notes {
            tracing::warn!(target: "prism_tools", at = %note.at, "{}", note.note);
        }
        let body =
            bytes::Bytes::from(serde_json::to_vec(&encoded.body).map_err(|error| {
                invalid(format!("the request body could not be written: {error}"))
            })?);
        let key = self.key().await?;
        // A host source's key is not known when the provider is built: redact it here.
        let redact = |error: ProviderError| match (&inner.key, &key) {
            (ResolvedKey::Host(_), Some(key)) => {
                error.redacted(&SecretRedactor::new([key.expose()]))
            }
            _ => error,
        };
        let mut retry = 0;
        loop {
            let failure = match self
                .attempt(request, &tools, body.clone(), key.as_ref())
                .await
            {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            if !failure.retry || retry >= inner.retry.max_retries {
                return Err(redact(failure.error));
            }
            let wait = inner.retry.wait(retry, failure.headers.as_ref());
            retry += 1;
            request.observe(&ProviderEvent::Retrying {
                attempt: retry,
                wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                reason: failure.error.kind().as_str().to_owned(),
                status: failure.error.status(),
            });
            tracing::debug!(
                target: "prism_tools",
                retry,
                wait_ms = wait.as_millis() as u64,
                error = %redact(failure.error).redacted(&inner.redactor),
                "provider turn retried"
            );
            tokio::time::sleep(wait).await;
        }
    }

    async fn key(&self) -> Result<Option<ApiKey>, ProviderError> {
        match &self.inner.key {
            ResolvedKey::None => Ok(None),
            ResolvedKey::Fixed(key) => Ok(Some(key.clone())),
            ResolvedKey::Host(source) => {
                let key = source.api_key().await.map_err(|message| {
                    ProviderError::with_kind(
                        ProviderErrorKind::Authentication,
                        format!("the key source has no key: {message}"),
                    )
                })?;
                self.remember_host_key(&key);
                Ok(Some(key))
            }
        }
    }

    /// Keeps the last [`HOST_KEYS_KEPT`] distinct keys, so a key rotated away while a tool may
    /// still echo it stays redacted for a while, and a source that mints a key per request
    /// cannot grow the list without bound.
    fn remember_host_key(&self, key: &ApiKey) {
        let mut keys = self
            .inner
            .host_keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if keys.last() != Some(key) {
            keys.retain(|kept| kept != key);
            if keys.len() == HOST_KEYS_KEPT {
                keys.remove(0);
            }
            keys.push(key.clone());
        }
    }

    /// One request and its answer.
    async fn attempt(
        &self,
        request: &ProviderRequest<'_>,
        tools: &Arc<ToolTable>,
        body: bytes::Bytes,
        key: Option<&ApiKey>,
    ) -> Result<ProviderResponse, Failure> {
        let inner = &*self.inner;
        let timeouts = &inner.timeouts;
        let mut http = inner
            .client
            .post(inner.api.url(&inner.settings))
            .header("content-type", "application/json")
            .body(body);
        let accept = if inner.settings.stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        http = http.header("accept", accept);
        for (name, value) in &inner.api.headers {
            http = http.header(*name, value);
        }
        if let Some(key) = key {
            http = inner.api.auth.apply(http, key.expose());
        }
        let first_byte = FirstByte::starting_now(timeouts.first_byte);
        let response = match timeout_at(first_byte.deadline, http.send()).await {
            Err(_) => {
                let error = transport(format!(
                    "no answer from the provider within {:?}",
                    timeouts.first_byte
                ));
                return Err(retryable(error));
            }
            Ok(Err(error)) => {
                let retry = error.is_connect() || error.is_timeout() || error.is_request();
                let failure = transport(format!(
                    "the request could not be sent: {}",
                    error_chain(&error.without_url())
                ));
                return Err(Failure {
                    retry,
                    ..Failure::last(failure)
                });
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status().as_u16();
        let received = AtomicU64::new(0);
        // Every secret known here is taken out of what the provider says before it is cut: the
        // provider's, a host source's key (the provider did not know it when it was built) and
        // the run's.
        let redactor = || {
            let mut redactor = inner.redactor.clone();
            if let (ResolvedKey::Host(_), Some(key)) = (&inner.key, key) {
                redactor = redactor.union(&SecretRedactor::new([key.expose()]));
            }
            if let Some(run) = request.redactor {
                redactor = redactor.union(run);
            }
            redactor
        };
        if !(200..300).contains(&status) {
            let headers = response.headers().clone();
            let limit = ERROR_BODY_LIMIT.min(inner.max_response_bytes);
            let text = read_error_body(response, limit, timeouts.gap).await;
            let mut error = status_error(status, &text, &redactor());
            if let Some(wait) = server_wait(&headers) {
                error = error.with_retry_after(wait);
            }
            return Err(Failure {
                retry: should_retry(status, &headers),
                error,
                headers: Some(headers),
            });
        }
        // A JSON body is no stream even when one was asked for: a gateway's error sent with a
        // 2xx status, or a whole answer from a server that ignores `stream`.
        let stream = inner.settings.stream && !is_json(&response);
        let body = bounded_body(response, inner.max_response_bytes, &received);
        let answer = if stream {
            let decoder = inner.api.format.stream_decoder(Arc::clone(tools));
            read_stream(body, decoder, request, first_byte, timeouts.gap).await
        } else {
            let format = &*inner.api.format;
            read_whole(body, format, tools, request, first_byte, timeouts.gap).await
        };
        answer.map_err(|error| {
            // A failure before any byte of the body arrived is as good as no answer.
            if received.load(Ordering::Relaxed) == 0 && error.kind() == ProviderErrorKind::Transport
            {
                retryable(error)
            } else {
                // An error event of the stream quotes the provider as a failed status does.
                Failure::last(bounded(error, &redactor()))
            }
        })
    }
}

/// Whether the answer says its body is JSON (`application/json`, parameters aside).
fn is_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media_type| media_type.trim().eq_ignore_ascii_case("application/json"))
}

fn retryable(error: ProviderError) -> Failure {
    Failure {
        retry: true,
        ..Failure::last(error)
    }
}

impl Provider for HttpProvider {
    /// The fixed key (given or read from the environment), or the keys a host source gave
    /// so far; an agent adds them to its dispatcher's redactor after every turn.
    fn secrets(&self) -> Vec<String> {
        match &self.inner.key {
            ResolvedKey::Fixed(key) => vec![key.expose().to_owned()],
            ResolvedKey::Host(_) => self
                .inner
                .host_keys
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .map(|key| key.expose().to_owned())
                .collect(),
            ResolvedKey::None => Vec::new(),
        }
    }

    fn complete<'a>(
        &'a self,
        request: ProviderRequest<'a>,
    ) -> BoxFuture<'a, Result<ProviderResponse, ProviderError>> {
        Box::pin(async move {
            let inner = &*self.inner;
            let span = chat_span(inner.api.provider_name, &inner.settings.model);
            let limit = inner.timeouts.turn;
            let answer = async {
                match timeout(limit, self.turn(&request)).await {
                    Ok(answer) => answer,
                    Err(_) => Err(transport(format!("the turn took longer than {limit:?}"))),
                }
            }
            .instrument(span.clone())
            .await;
            record_outcome(&span, &answer);
            answer.map_err(|error| error.redacted(&inner.redactor))
        })
    }
}

impl fmt::Debug for HttpProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &*self.inner;
        let key = match &inner.key {
            ResolvedKey::None => "none",
            ResolvedKey::Fixed(_) => crate::redact::REDACTED,
            ResolvedKey::Host(_) => "host source",
        };
        f.debug_struct("HttpProvider")
            .field("provider", &inner.api.provider_name)
            .field("format", &inner.api.format.name())
            .field("url", &shown_url(&inner.api.url(&inner.settings)))
            .field("model", &inner.settings.model)
            .field("key", &key)
            .field("timeouts", &inner.timeouts)
            .field("retry", &inner.retry)
            .field("max_response_bytes", &inner.max_response_bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::provider::http::{KeySource, SecretSource};

    /// A vault that mints a new key per request.
    struct Minting(AtomicUsize);

    impl SecretSource for Minting {
        fn api_key(&self) -> BoxFuture<'_, Result<ApiKey, String>> {
            let n = self.0.fetch_add(1, Ordering::Relaxed);
            Box::pin(async move { Ok(ApiKey::new(format!("key-{n}"))) })
        }
    }

    #[tokio::test]
    async fn a_host_source_keys_are_kept_newest_last_and_bounded() {
        let provider = HttpProvider::openai_compatible("http://127.0.0.1:9/v1", "m")
            .key(KeySource::host(Minting(AtomicUsize::new(0))))
            .build()
            .unwrap();
        assert!(provider.secrets().is_empty(), "no key fetched yet");
        for _ in 0..HOST_KEYS_KEPT + 3 {
            provider.key().await.unwrap();
        }
        let expected: Vec<String> = (3..HOST_KEYS_KEPT + 3)
            .map(|n| format!("key-{n}"))
            .collect();
        assert_eq!(provider.secrets(), expected);
    }
}
