//! One bounded GET under the URL policy: [`WebFetcher`] and what it returns, [`FetchedPage`].

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, ACCEPT_ENCODING, CONTENT_TYPE, LOCATION};
use url::Url;

use super::body::read_bounded;
use super::charset::decode;
use super::client::client;
use super::error::{WebError, WebErrorKind};
use super::url_policy::UrlPolicy;

/// The User-Agent of every web tool request.
pub(crate) const USER_AGENT: &str = concat!("prism-tools/", env!("CARGO_PKG_VERSION"));

/// The bounds of one fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchLimits {
    /// Bytes kept from the body, counted both on the wire and after decompression; the body is
    /// cut there and the page says `truncated`. Default 5 MiB.
    pub max_bytes: usize,
    /// Time to open a connection. Default 10 s.
    pub connect_timeout: Duration,
    /// Time for the whole fetch, redirects included. Default 30 s.
    pub total_timeout: Duration,
    /// Time to wait for each chunk of the body. Default 10 s.
    pub idle_timeout: Duration,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            max_bytes: 5 * 1024 * 1024,
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(10),
        }
    }
}

/// Media types fetched unless the host sets its own list: pages, plain text and data formats.
pub const DEFAULT_MEDIA_TYPES: &[&str] = &[
    "text/html",
    "application/xhtml+xml",
    "text/plain",
    "text/markdown",
    "text/csv",
    "text/xml",
    "application/xml",
    "application/json",
    "application/rss+xml",
    "application/atom+xml",
];

/// A fetched body, decoded to text and cut at the byte limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchedPage {
    /// The URL asked for.
    pub url: String,
    /// The URL of the answer, after redirects.
    pub final_url: String,
    /// The HTTP status of the answer.
    pub status: u16,
    /// The media type, lower case, without parameters (`text/html`).
    pub media_type: String,
    /// The charset the body was decoded with (an encoding_rs name, `UTF-8`).
    pub charset: String,
    /// Where the charset came from: `byte_order_mark`, `header`, `meta` or `detected`.
    pub charset_source: String,
    /// Set when the declared charset was unknown or did not fit the bytes.
    pub charset_note: Option<String>,
    /// The decoded body.
    pub body: String,
    /// The body went on past [`FetchLimits::max_bytes`].
    pub truncated: bool,
    /// Redirects followed.
    pub redirects: usize,
}

impl FetchedPage {
    /// The body is HTML.
    pub fn is_html(&self) -> bool {
        matches!(
            self.media_type.as_str(),
            "text/html" | "application/xhtml+xml"
        )
    }
}

/// Fetches URLs under a [`UrlPolicy`] and [`FetchLimits`]. Cheap to clone (one connection pool).
#[derive(Clone, Debug)]
pub struct WebFetcher {
    client: reqwest::Client,
    policy: UrlPolicy,
    limits: FetchLimits,
    media_types: Arc<[String]>,
}

impl WebFetcher {
    /// A fetcher with default limits and media types.
    pub fn new(policy: UrlPolicy) -> Result<Self, WebError> {
        WebFetcher::with_limits(policy, FetchLimits::default())
    }

    /// A fetcher with `limits`.
    pub fn with_limits(policy: UrlPolicy, limits: FetchLimits) -> Result<Self, WebError> {
        Ok(WebFetcher {
            client: client(Some(&policy), limits.connect_timeout, USER_AGENT)?,
            policy,
            limits,
            media_types: DEFAULT_MEDIA_TYPES.iter().map(|t| t.to_string()).collect(),
        })
    }

    /// Replaces the media types fetched (exact, lower-case `type/subtype`).
    pub fn media_types(mut self, types: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.media_types = types
            .into_iter()
            .map(|t| t.into().to_ascii_lowercase())
            .collect();
        self
    }

    /// The policy every fetch obeys.
    pub fn policy(&self) -> &UrlPolicy {
        &self.policy
    }

    /// The limits of every fetch.
    pub fn limits(&self) -> &FetchLimits {
        &self.limits
    }

    /// GETs `url`, following redirects under the policy, and decodes the body.
    pub async fn fetch(&self, url: &str) -> Result<FetchedPage, WebError> {
        let total = self.limits.total_timeout;
        tokio::time::timeout(total, self.fetch_unbounded(url))
            .await
            .map_err(|_| WebError::timeout(&format!("fetching `{url}`"), total))?
    }

    async fn fetch_unbounded(&self, url: &str) -> Result<FetchedPage, WebError> {
        let mut current = self.policy.check_url(url)?;
        let mut redirects = 0;
        let response = loop {
            let response = self.send(&current).await?;
            let Some(next) = redirect_target(&current, &response)? else {
                break response;
            };
            if redirects == self.policy.redirect_limit() {
                return Err(WebError::new(
                    WebErrorKind::TooManyRedirects,
                    format!("`{url}` redirected more than {redirects} times"),
                ));
            }
            self.policy.check_parsed(&next).map_err(|refusal| {
                WebError::new(
                    refusal.kind(),
                    format!(
                        "redirect from `{current}` to `{next}` refused: {}",
                        refusal.message()
                    ),
                )
            })?;
            redirects += 1;
            current = next;
        };
        let status = response.status().as_u16();
        let (media_type, declared_charset) = content_type(&response);
        if let Some(media_type) = &media_type
            && !self.media_types.iter().any(|allowed| allowed == media_type)
        {
            return Err(WebError::new(
                WebErrorKind::UnsupportedContent,
                format!("`{current}` is {media_type}, which is not a fetched media type"),
            ));
        }
        let body = read_bounded(response, self.limits.max_bytes, self.limits.idle_timeout).await?;
        let media_type = match media_type {
            Some(declared) => declared,
            None => {
                // Sniffed, it is held to the same list as a declared type.
                let sniffed = sniff(&body.bytes).to_owned();
                if !self.media_types.contains(&sniffed) {
                    return Err(WebError::new(
                        WebErrorKind::UnsupportedContent,
                        format!(
                            "`{current}` has no declared type and reads as {sniffed}, which is not a fetched media type"
                        ),
                    ));
                }
                sniffed
            }
        };
        // UTF-16 text is half NUL bytes: declared, it is decoded rather than taken for binary.
        let wide = declared_charset
            .as_deref()
            .and_then(|label| encoding_rs::Encoding::for_label(label.trim().as_bytes()))
            .is_some_and(|encoding| {
                encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE
            });
        if !wide && looks_binary(&body.bytes) {
            return Err(WebError::new(
                WebErrorKind::UnsupportedContent,
                format!("`{current}` is served as {media_type} but its bytes are binary"),
            ));
        }
        let html = matches!(media_type.as_str(), "text/html" | "application/xhtml+xml");
        let decoded = decode(
            body.bytes,
            declared_charset.as_deref(),
            html,
            body.truncated,
        );
        Ok(FetchedPage {
            url: url.to_owned(),
            final_url: current.to_string(),
            status,
            media_type,
            charset: decoded.charset.to_owned(),
            charset_source: decoded.source.as_str().to_owned(),
            charset_note: decoded.note,
            body: decoded.text,
            truncated: body.truncated,
            redirects,
        })
    }

    async fn send(&self, url: &Url) -> Result<reqwest::Response, WebError> {
        self.client
            .get(url.clone())
            .header(ACCEPT_ENCODING, "gzip, deflate")
            .header(
                ACCEPT,
                "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            )
            .send()
            .await
            .map_err(|error| request_error(url, &error))
    }
}

/// A refusal from the policy resolver keeps its kind; anything else is a network failure.
pub(crate) fn request_error(url: &Url, error: &reqwest::Error) -> WebError {
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(cause) = source {
        if let Some(web) = cause.downcast_ref::<WebError>() {
            return web.clone();
        }
        source = cause.source();
    }
    if error.is_timeout() {
        return WebError::new(WebErrorKind::Timeout, format!("`{url}`: {error}"));
    }
    let mut message = format!("`{url}`: {error}");
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        message.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    WebError::new(WebErrorKind::Network, message)
}

/// Where a 3xx answer points, resolved against the URL it came from.
fn redirect_target(current: &Url, response: &reqwest::Response) -> Result<Option<Url>, WebError> {
    if !response.status().is_redirection() {
        return Ok(None);
    }
    let Some(location) = response.headers().get(LOCATION) else {
        return Ok(None);
    };
    // Header text is ASCII, but servers write non-ASCII paths in raw UTF-8, which browsers
    // follow; the URL parser percent-encodes them.
    let location = std::str::from_utf8(location.as_bytes()).map_err(|_| {
        WebError::new(
            WebErrorKind::InvalidUrl,
            format!("`{current}` redirects to a Location that is not UTF-8 text"),
        )
    })?;
    current.join(location).map(Some).map_err(|error| {
        WebError::new(
            WebErrorKind::InvalidUrl,
            format!("`{current}` redirects to `{location}`, which is not a URL: {error}"),
        )
    })
}

/// The media type and charset parameter of the Content-Type header.
fn content_type(response: &reqwest::Response) -> (Option<String>, Option<String>) {
    let Some(header) = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return (None, None);
    };
    let mut parts = header.split(';');
    let media_type = parts
        .next()
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty());
    let charset = parts.find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_owned())
    });
    (media_type, charset)
}

/// The media type of a body served without one: HTML when it starts like a page, else text.
fn sniff(bytes: &[u8]) -> &'static str {
    let head = &bytes[..bytes.len().min(512)];
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let lower = head[start..].to_ascii_lowercase();
    if lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html") {
        "text/html"
    } else {
        "text/plain"
    }
}

/// Bytes no text format contains: NUL, in the first kilobyte (UTF-16 pages carry a byte order
/// mark, and the decoder handles them before this matters).
fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1024)];
    encoding_rs::Encoding::for_bom(head).is_none() && head.contains(&0)
}
