//! What a search backend is: [`SearchBackend`], a query and its hits. The host implements the
//! trait for the search it runs or buys; [`SearxngBackend`](super::SearxngBackend) and
//! [`BraveBackend`](super::BraveBackend) come with the crate.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use reqwest::header::RETRY_AFTER;
use url::Url;

use super::body::read_bounded;
use super::error::{WebError, WebErrorKind};
use super::fetch::request_error;
use crate::redact::SecretRedactor;

/// One search, as the tool hands it to a backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchQuery {
    /// The words searched for.
    pub query: String,
    /// How many hits are wanted (already bounded by the tool).
    pub count: usize,
    /// A language code (`en`, `fr`), when the caller asked for one.
    pub language: Option<String>,
}

/// One search hit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SearchHit {
    /// The page's title.
    pub title: String,
    /// The page's URL.
    pub url: String,
    /// A short text from the page, as the search engine shows it.
    pub snippet: String,
}

/// What [`SearchBackend::search`] returns.
pub type SearchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<SearchHit>, WebError>> + Send + 'a>>;

/// A search engine behind `web_search`. Errors use [`WebErrorKind::RateLimited`] when the
/// engine asks to slow down and [`WebErrorKind::Backend`] when it fails otherwise.
///
/// ```
/// use prism::tools::web::{SearchBackend, SearchFuture, SearchHit, SearchQuery};
///
/// struct Fixed;
///
/// impl SearchBackend for Fixed {
///     fn name(&self) -> &str {
///         "fixed"
///     }
///     fn search<'a>(&'a self, query: &'a SearchQuery) -> SearchFuture<'a> {
///         Box::pin(async move {
///             Ok(vec![SearchHit {
///                 title: format!("About {}", query.query),
///                 url: "https://example.org/".into(),
///                 snippet: String::new(),
///             }])
///         })
///     }
/// }
/// ```
pub trait SearchBackend: Send + Sync + 'static {
    /// A short name for results and logs (`searxng`, `brave`).
    fn name(&self) -> &str;

    /// Runs `query`.
    fn search<'a>(&'a self, query: &'a SearchQuery) -> SearchFuture<'a>;
}

/// Bytes of a search API's answer read at most.
const MAX_ANSWER_BYTES: usize = 2 * 1024 * 1024;

/// Sends `request` and returns the JSON answer, mapping 429 to a rate-limit error (with the
/// server's Retry-After) and any other failure status to a backend error quoting the answer.
///
/// The answer is quoted whole (within [`MAX_ANSWER_BYTES`]) with the backend's own credentials
/// (`own`) taken out: the dispatcher redacts the error before it cuts it, so a cut never leaves
/// part of a secret. A failed request names the endpoint without its query, which holds the
/// model's words (a secret among them, encoded where the redactor cannot find it).
pub(crate) async fn json_answer(
    backend: &str,
    url: &Url,
    request: reqwest::RequestBuilder,
    timeout: Duration,
    own: &SecretRedactor,
) -> Result<serde_json::Value, WebError> {
    let exchange = async {
        let response = request.send().await.map_err(|error| {
            // Named without its query (the model's words, encoded) and without the user and
            // password of an instance behind basic authentication.
            let mut endpoint = url.clone();
            endpoint.set_query(None);
            let _ = endpoint.set_password(None);
            let _ = endpoint.set_username("");
            request_error(&endpoint, &error.without_url())
        })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let body = read_bounded(response, MAX_ANSWER_BYTES, timeout).await?;
        let text = own
            .redact_str(&String::from_utf8_lossy(&body.bytes))
            .into_owned();
        if status.as_u16() == 429 {
            let wait =
                retry_after.map_or_else(String::new, |after| format!("; retry after {after}"));
            return Err(WebError::new(
                WebErrorKind::RateLimited,
                format!("{backend} rate limit reached{wait}: {text}"),
            ));
        }
        if !status.is_success() {
            return Err(WebError::new(
                WebErrorKind::Backend,
                format!("{backend} answered {status}: {text}"),
            ));
        }
        serde_json::from_str(&text).map_err(|error| {
            WebError::new(
                WebErrorKind::Backend,
                format!("{backend} answered with bad JSON: {error}"),
            )
        })
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| WebError::timeout(&format!("the {backend} search"), timeout))?
}

/// The first `count` hits of the array at `path` (keys from the answer's root) in `answer`,
/// each with `title`, `url` and the snippet at `snippet_field`; a missing array is a shape error.
pub(crate) fn hits_at(
    backend: &str,
    answer: &serde_json::Value,
    path: &[&str],
    snippet_field: &str,
    count: usize,
) -> Result<Vec<SearchHit>, WebError> {
    let results = path
        .iter()
        .try_fold(answer, |value, key| value.get(key))
        .and_then(|results| results.as_array())
        .ok_or_else(|| shape_error(backend, &path.join(".")))?;
    let text = |item: &serde_json::Value, field: &str| {
        item.get(field)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned()
    };
    Ok(results
        .iter()
        .take(count)
        .map(|item| SearchHit {
            title: text(item, "title"),
            url: text(item, "url"),
            snippet: text(item, snippet_field),
        })
        .collect())
}

/// An answer whose shape is not the API's.
pub(crate) fn shape_error(backend: &str, missing: &str) -> WebError {
    WebError::new(
        WebErrorKind::Backend,
        format!("{backend} answered without `{missing}`: not the API's answer shape"),
    )
}
