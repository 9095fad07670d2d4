//! A self-hosted SearXNG instance's JSON API (`/search?format=json`).

use std::fmt;
use std::time::Duration;

use url::Url;

use super::client::client;
use super::error::{WebError, WebErrorKind};
use super::fetch::USER_AGENT;
use super::search::{SearchBackend, SearchFuture, SearchHit, SearchQuery, hits_at, json_answer};
use crate::redact::{SecretRedactor, shown_url};

/// Searches through a SearXNG instance. The instance must list `json` among its
/// `search.formats` (otherwise it answers 403, which this backend reports as such).
///
/// ```
/// use prism::tools::web::{SearchBackend, SearxngBackend};
///
/// let searx = SearxngBackend::new("https://searx.example.org/").unwrap();
/// assert_eq!(searx.name(), "searxng");
/// assert!(SearxngBackend::new("not a url").is_err());
/// ```
#[derive(Clone)]
pub struct SearxngBackend {
    endpoint: Url,
    client: reqwest::Client,
    timeout: Duration,
}

impl SearxngBackend {
    /// The instance at `base_url` (its `search` under that path is queried:
    /// `https://host/searx` as `https://host/searx/search`), with a 15 s timeout.
    pub fn new(base_url: &str) -> Result<Self, WebError> {
        let mut base = Url::parse(base_url).map_err(|error| {
            WebError::new(
                WebErrorKind::InvalidUrl,
                // Not quoted: a URL that does not parse cannot be cleared of its password.
                format!("the SearXNG base URL is not a URL: {error}"),
            )
        })?;
        // An instance served under a path (`https://host/searx`) keeps it: joined as written,
        // the last segment would be replaced.
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let endpoint = base.join("search").map_err(|error| {
            WebError::new(
                WebErrorKind::InvalidUrl,
                format!("`{}`: {error}", shown_url(base_url)),
            )
        })?;
        let timeout = Duration::from_secs(15);
        Ok(SearxngBackend {
            endpoint,
            client: client(None, timeout, USER_AGENT)?,
            timeout,
        })
    }

    /// Sets the time one search may take.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn run(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, WebError> {
        let mut url = self.endpoint.clone();
        url.query_pairs_mut()
            .append_pair("q", &query.query)
            .append_pair("format", "json");
        if let Some(language) = &query.language {
            url.query_pairs_mut().append_pair("language", language);
        }
        let request = self
            .client
            .get(url.clone())
            .header("Accept", "application/json");
        let answer = json_answer(
            "searxng",
            &url,
            request,
            self.timeout,
            &SecretRedactor::default(),
        )
        .await?;
        hits_at("searxng", &answer, &["results"], "content", query.count)
    }
}

impl fmt::Debug for SearxngBackend {
    /// The instance without the password of its basic authentication: hosts print their
    /// configuration in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SearxngBackend")
            .field("endpoint", &shown_url(self.endpoint.as_str()))
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl SearchBackend for SearxngBackend {
    fn name(&self) -> &str {
        "searxng"
    }

    fn search<'a>(&'a self, query: &'a SearchQuery) -> SearchFuture<'a> {
        Box::pin(self.run(query))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_under_a_path_is_searched_under_that_path() {
        for (base, endpoint) in [
            ("https://example.org", "https://example.org/search"),
            ("https://example.org/", "https://example.org/search"),
            (
                "https://example.org/searx",
                "https://example.org/searx/search",
            ),
            (
                "https://example.org/searx/",
                "https://example.org/searx/search",
            ),
        ] {
            let backend = SearxngBackend::new(base).unwrap();
            assert_eq!(backend.endpoint.as_str(), endpoint, "{base}");
        }
    }

    #[test]
    fn a_base_url_that_does_not_parse_is_not_quoted_with_its_password() {
        let error = SearxngBackend::new("https://admin:hunter2@searx.example:99999/").unwrap_err();
        assert_eq!(error.kind(), WebErrorKind::InvalidUrl);
        assert!(!error.message().contains("hunter2"), "{error}");
    }
}
