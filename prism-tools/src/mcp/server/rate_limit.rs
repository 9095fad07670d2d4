//! [`RateLimitLayer`]: a per-client request rate limit, as a tower layer.
//!
//! Each client address gets its own bucket (GCRA, from governor): a steady rate with a burst on
//! top. An IPv6 client is known by its /64, which one host usually holds whole: stepping through
//! its addresses neither escapes the limit nor fills the table. A request over the limit gets
//! `429 Too Many Requests` with `Retry-After`, and never reaches the MCP service. The client is the connection's peer address, which
//! [`serve_http`](super::serve_http) puts on every request as a [`ClientAddress`]; behind a
//! reverse proxy, set it from the proxy's header in a layer of your own instead.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use http::{Request, Response, StatusCode, header};

/// The peer address of the connection a request came on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddress(pub SocketAddr);

/// Forgets idle clients' buckets once every this many requests.
const SWEEP_EVERY: usize = 4096;

/// Limits each client (by IP address; by /64 for IPv6) to a rate of requests, with a burst.
///
/// ```
/// use std::num::NonZeroU32;
/// use prism::mcp::RateLimitLayer;
///
/// // 20 requests a second per client, up to 40 at once.
/// let layer = RateLimitLayer::per_second(NonZeroU32::new(20).unwrap(), NonZeroU32::new(40).unwrap());
/// # let _ = layer;
/// ```
#[derive(Clone)]
pub struct RateLimitLayer {
    limiter: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    checks: Arc<AtomicUsize>,
}

impl std::fmt::Debug for RateLimitLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimitLayer")
            .field("clients", &self.limiter.len())
            .finish()
    }
}

impl RateLimitLayer {
    /// `per_second` requests a second per client, and up to `burst` at once.
    pub fn per_second(per_second: NonZeroU32, burst: NonZeroU32) -> Self {
        let quota = Quota::per_second(per_second).allow_burst(burst);
        Self {
            limiter: Arc::new(RateLimiter::keyed(quota)),
            checks: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Up to `burst` requests at once per client, and one more every `period`; `None` when
    /// `period` is zero. A period longer than the limiter can count (some three centuries
    /// divided by `burst + 1`; `Duration::MAX` for "never") is taken as that longest one.
    pub fn per_period(period: Duration, burst: NonZeroU32) -> Option<Self> {
        let quota = Quota::with_period(period.min(longest_period(burst)))?.allow_burst(burst);
        Some(Self {
            limiter: Arc::new(RateLimiter::keyed(quota)),
            checks: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// `Ok` when `client` may make a request now, else how many seconds to wait.
    fn admit(&self, client: IpAddr) -> Result<(), u64> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
        }
        self.limiter
            .check_key(&bucket(client))
            .map_err(|not_until| {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
            })
    }
}

/// The longest period the limiter counts without overflowing: its clock is a `u64` of
/// nanoseconds since it started, to which it adds up to `burst + 1` periods; half the range is
/// left for the time since the start.
fn longest_period(burst: NonZeroU32) -> Duration {
    Duration::from_nanos(u64::MAX / 2 / (u64::from(burst.get()) + 1))
}

/// The bucket `client` counts against: its IPv4 address (an IPv4-mapped IPv6 one included), or
/// its IPv6 /64.
fn bucket(client: IpAddr) -> IpAddr {
    match client {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from_bits(v6.to_bits() & !((1 << 64) - 1))),
        },
        v4 => v4,
    }
}

impl<S> tower_layer::Layer<S> for RateLimitLayer {
    type Service = RateLimitService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RateLimitService {
            inner,
            limit: self.clone(),
        }
    }
}

/// The service [`RateLimitLayer`] wraps around another.
#[derive(Clone, Debug)]
pub struct RateLimitService<S> {
    inner: S,
    limit: RateLimitLayer,
}

impl<S, B, R> tower_service::Service<Request<B>> for RateLimitService<S>
where
    S: tower_service::Service<Request<B>, Response = Response<R>, Error = Infallible>,
    S::Future: Send + 'static,
    R: Default + Send + 'static,
{
    type Response = Response<R>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<R>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let client = request
            .extensions()
            .get::<ClientAddress>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |address| address.0.ip());
        match self.limit.admit(client) {
            Ok(()) => Box::pin(self.inner.call(request)),
            Err(wait) => {
                let mut response = Response::new(R::default());
                *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from(wait.max(1)));
                Box::pin(std::future::ready(Ok(response)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_client_is_one_bucket_for_its_whole_64() {
        let one: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let other_in_same_64: IpAddr = "2001:db8:1:2:ffff:ffff:ffff:ffff".parse().unwrap();
        let next_64: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(bucket(one), bucket(other_in_same_64));
        assert_ne!(bucket(one), bucket(next_64));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(bucket(mapped), "192.0.2.7".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn a_period_of_centuries_or_forever_limits_without_panicking() {
        // "A burst, then never again": longer than the limiter's clock can count in nanoseconds.
        let forever = RateLimitLayer::per_period(Duration::MAX, NonZeroU32::MIN).unwrap();
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        assert!(forever.admit(client).is_ok());
        assert!(forever.admit(client).is_err());
        // Within the clock's range, but the limiter's own sums of periods are not.
        let centuries = Duration::from_secs(300 * 365 * 24 * 3600);
        let two = NonZeroU32::new(2).unwrap();
        let layer = RateLimitLayer::per_period(centuries, two).unwrap();
        assert!(layer.admit(client).is_ok());
        assert!(layer.admit(client).is_ok());
        let wait = layer.admit(client).unwrap_err();
        assert!(wait > 3600, "{wait}");
    }

    #[test]
    fn a_client_stepping_through_its_64_is_still_limited() {
        let layer = RateLimitLayer::per_period(Duration::from_secs(3600), NonZeroU32::MIN).unwrap();
        assert!(layer.admit("2001:db8::1".parse().unwrap()).is_ok());
        assert!(layer.admit("2001:db8::2".parse().unwrap()).is_err());
        assert!(
            layer.admit("2001:db9::1".parse().unwrap()).is_ok(),
            "another network"
        );
    }
}
