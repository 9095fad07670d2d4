//! [`RetryPolicy`]: when a failed attempt is tried again and after how long, as the official
//! OpenAI and Anthropic SDKs decide it.
//!
//! - The server's `x-should-retry: true|false` header wins over everything else.
//! - Otherwise 408, 409, 429 and every 5xx are retried, and so is a connection that failed or
//!   timed out before the answer began; no other status is.
//! - The wait is the server's `retry-after-ms`, then `retry-after` (seconds or an HTTP date),
//!   when it is positive and at most a minute; otherwise an exponential backoff from
//!   [`initial_backoff`](RetryPolicy::initial_backoff) doubling up to
//!   [`max_backoff`](RetryPolicy::max_backoff), less up to a quarter of random jitter so that
//!   many clients do not come back at once.
//! - Nothing is retried once a byte of the answer's body arrived: the model may have started
//!   acting on it, and the caller already saw events.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// The longest server-given wait that is honoured; a longer one falls back to the backoff.
const MAX_SERVER_WAIT: Duration = Duration::from_secs(60);

/// How many times, and how patiently, a failed attempt is tried again.
///
/// ```
/// use std::time::Duration;
/// use prism::provider::http::RetryPolicy;
///
/// let policy = RetryPolicy::default();
/// assert_eq!(policy.max_retries, 2);
/// let never = RetryPolicy::none();
/// assert_eq!(never.max_retries, 0);
/// let patient = RetryPolicy::default().with_max_retries(5);
/// assert_eq!(patient.initial_backoff, Duration::from_millis(500));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Retries after the first attempt (the SDKs' default: 2).
    pub max_retries: u32,
    /// The first backoff, when the server did not say how long to wait.
    pub initial_backoff: Duration,
    /// The longest backoff.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
        }
    }
}

impl RetryPolicy {
    /// Never retries.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// Sets the number of retries.
    pub fn with_max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// Sets the first and the longest backoff.
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// The backoff before retry number `retry` (from 0), jittered down by up to a quarter.
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let doubled = self
            .initial_backoff
            .saturating_mul(1u32.checked_shl(retry).unwrap_or(u32::MAX));
        let capped = doubled.min(self.max_backoff);
        capped.mul_f64(1.0 - 0.25 * fastrand::f64())
    }

    /// How long to wait before retry number `retry` after an answer with these headers.
    pub(crate) fn wait(&self, retry: u32, headers: Option<&HeaderMap>) -> Duration {
        headers
            .and_then(server_wait)
            .unwrap_or_else(|| self.backoff(retry))
    }
}

/// Whether an answer with this status and headers is worth another attempt.
pub(crate) fn should_retry(status: u16, headers: &HeaderMap) -> bool {
    match header(headers, "x-should-retry") {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// The wait the server asked for, when it is positive and at most a minute.
pub(crate) fn server_wait(headers: &HeaderMap) -> Option<Duration> {
    let asked = header(headers, "retry-after-ms")
        .and_then(|ms| ms.trim().parse::<f64>().ok())
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
        .or_else(|| header(headers, "retry-after").and_then(retry_after))?;
    (!asked.is_zero() && asked <= MAX_SERVER_WAIT).then_some(asked)
}

/// `retry-after` as seconds, or as an HTTP date from now.
fn retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    at.duration_since(SystemTime::now()).ok()
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name)?.to_str().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn statuses_retried_are_the_sdks_ones_and_the_header_wins() {
        let none = HeaderMap::new();
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(should_retry(status, &none), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!should_retry(status, &none), "{status}");
        }
        assert!(should_retry(400, &headers(&[("x-should-retry", "true")])));
        assert!(!should_retry(503, &headers(&[("x-should-retry", "false")])));
    }

    #[test]
    fn retry_after_ms_comes_before_retry_after() {
        let both = headers(&[("retry-after-ms", "250"), ("retry-after", "3")]);
        assert_eq!(server_wait(&both), Some(Duration::from_millis(250)));
        let seconds = headers(&[("retry-after", "1.5")]);
        assert_eq!(server_wait(&seconds), Some(Duration::from_millis(1500)));
        let later = SystemTime::now() + Duration::from_secs(30);
        let date = headers(&[("retry-after", &httpdate::fmt_http_date(later))]);
        let wait = server_wait(&date).unwrap();
        assert!(wait <= Duration::from_secs(30) && wait >= Duration::from_secs(28));
    }

    #[test]
    fn waits_out_of_range_fall_back_to_the_backoff() {
        for value in ["0", "-1", "600", "soon"] {
            assert_eq!(
                server_wait(&headers(&[("retry-after", value)])),
                None,
                "{value}"
            );
        }
        let policy = RetryPolicy::default();
        let wait = policy.wait(0, Some(&headers(&[("retry-after", "600")])));
        assert!(wait <= Duration::from_millis(500) && wait >= Duration::from_millis(375));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_at_most_a_quarter_off() {
        let policy = RetryPolicy::default();
        for (retry, full) in [(0, 500), (1, 1000), (2, 2000), (4, 8000), (40, 8000)] {
            let wait = policy.backoff(retry);
            let full = Duration::from_millis(full);
            assert!(
                wait <= full && wait >= full.mul_f64(0.75),
                "{retry}: {wait:?}"
            );
        }
    }
}
