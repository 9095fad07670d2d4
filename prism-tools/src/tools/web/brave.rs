//! The Brave Search API's web search (`/res/v1/web/search`), a commercial API with a key.

use std::fmt;
use std::time::Duration;

use url::Url;

use super::client::client;
use super::error::{WebError, WebErrorKind};
use super::fetch::USER_AGENT;
use super::search::{
    SearchBackend, SearchFuture, SearchHit, SearchQuery, hits_at, json_answer, shape_error,
};
use crate::redact::{SecretRedactor, shown_url};

/// Brave's public endpoint.
pub const BRAVE_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";

/// The API allows at most 20 results a request.
const BRAVE_MAX_COUNT: usize = 20;

/// Searches with the Brave Search API. The key travels in `X-Subscription-Token` and never
/// shows in `Debug`.
///
/// ```
/// use prism::tools::web::{BraveBackend, SearchBackend};
///
/// let brave = BraveBackend::new("secret-key");
/// assert_eq!(brave.name(), "brave");
/// assert!(!format!("{brave:?}").contains("secret-key"));
/// ```
#[derive(Clone)]
pub struct BraveBackend {
    endpoint: Url,
    key: String,
    client: Result<reqwest::Client, WebError>,
    timeout: Duration,
}

impl fmt::Debug for BraveBackend {
    /// The endpoint without the password or query of a gateway that takes its credentials there:
    /// hosts print their configuration in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BraveBackend")
            .field("endpoint", &shown_url(self.endpoint.as_str()))
            .field("key", &"<redacted>")
            .finish()
    }
}

impl BraveBackend {
    /// The public API with `api_key`, with a 15 s timeout.
    pub fn new(api_key: impl Into<String>) -> Self {
        let timeout = Duration::from_secs(15);
        BraveBackend {
            endpoint: Url::parse(BRAVE_ENDPOINT).expect("the endpoint constant is a URL"),
            key: api_key.into(),
            client: client(None, timeout, USER_AGENT),
            timeout,
        }
    }

    /// Sends requests to `endpoint` instead (a gateway, or a test server).
    pub fn endpoint(mut self, endpoint: &str) -> Result<Self, WebError> {
        self.endpoint = Url::parse(endpoint).map_err(|error| {
            WebError::new(
                WebErrorKind::InvalidUrl,
                // Not quoted: a URL that does not parse cannot be cleared of its password.
                format!("the Brave endpoint is not a URL: {error}"),
            )
        })?;
        Ok(self)
    }

    /// Sets the time one search may take.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn run(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, WebError> {
        let client = self.client.as_ref().map_err(Clone::clone)?;
        let mut url = self.endpoint.clone();
        url.query_pairs_mut()
            .append_pair("q", &query.query)
            .append_pair("count", &query.count.clamp(1, BRAVE_MAX_COUNT).to_string())
            // Plain snippets: no highlighting markup for the model to read past.
            .append_pair("text_decorations", "false");
        if let Some(language) = &query.language {
            url.query_pairs_mut().append_pair("search_lang", language);
        }
        let request = client
            .get(url.clone())
            .header("Accept", "application/json")
            .header("X-Subscription-Token", &self.key);
        // The key is the library's to keep out of what it quotes; the host's redactor may not
        // know it.
        let own = SecretRedactor::new([&self.key]);
        let answer = json_answer("brave", &url, request, self.timeout, &own).await?;
        // No `web` section means no web results (the query matched only other kinds).
        if answer.get("web").is_none() {
            return match answer.get("type").and_then(|t| t.as_str()) {
                Some("search") => Ok(Vec::new()),
                _ => Err(shape_error("brave", "type: search")),
            };
        }
        hits_at(
            "brave",
            &answer,
            &["web", "results"],
            "description",
            query.count,
        )
    }
}

impl SearchBackend for BraveBackend {
    fn name(&self) -> &str {
        "brave"
    }

    fn search<'a>(&'a self, query: &'a SearchQuery) -> SearchFuture<'a> {
        Box::pin(self.run(query))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_a_gateways_password_and_query() {
        let brave = BraveBackend::new("key")
            .endpoint("https://user:gw-pass@gateway.example/search?token=gw-token")
            .unwrap();
        let shown = format!("{brave:?}");
        assert!(
            !shown.contains("gw-pass") && !shown.contains("gw-token"),
            "{shown}"
        );
        assert!(shown.contains("gateway.example"), "{shown}");
    }

    #[test]
    fn an_endpoint_that_does_not_parse_is_not_quoted_with_its_password() {
        let error = BraveBackend::new("key")
            .endpoint("https://user:gw-pass@gateway.example:99999/")
            .unwrap_err();
        assert_eq!(error.kind(), WebErrorKind::InvalidUrl);
        assert!(!error.message().contains("gw-pass"), "{error}");
    }
}
