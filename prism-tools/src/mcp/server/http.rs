//! Serving over streamable HTTP, hardened for a server that listens on a machine with a browser.
//!
//! - Binds `127.0.0.1` unless told otherwise.
//! - `Host` must name the server (loopback names by default): a DNS-rebinding page cannot reach
//!   it under another name. `Origin`, when present, must be a listed origin (loopback origins by
//!   default): another web page cannot call it from a visitor's browser. Both are checked
//!   before the rate limit (see `request_head.rs`), so refused requests use none of it.
//! - Request bodies are bounded while they stream in (`413` past the bound); a request's head
//!   must arrive within [`HttpOptions::header_timeout`], and its body within
//!   [`HttpOptions::body_timeout`].
//! - Each client address is rate-limited ([`RateLimitLayer`]; `429` past the limit), and the
//!   sessions open at once are bounded ([`HttpOptions::max_sessions`]; `503` past the bound).
//! - The connections open at once are bounded ([`HttpOptions::max_connections`]): past the
//!   bound, new ones wait in the listener's queue until one closes, so idle connections cannot
//!   take every file descriptor of the host's process.
//! - A page from a listed origin can call the server from a browser: a request carrying a
//!   listed `Origin` is answered with CORS headers (the origin itself, and `Mcp-Session-Id`
//!   readable), and its pre-flight `OPTIONS` is answered here, before the rate limit.
//! - A client that closes the stream its answer was to come on (drops the connection) cancels
//!   that call, in a session as in a stateless request (rmcp keeps a session's call running
//!   once its stream is gone); a call of a tool with an effect still runs to its end (see
//!   `calling.rs`).
//! - [`McpHttpServer::shutdown`] refuses new requests (`503`), gives the open connections a
//!   moment to finish, and returns once every one is closed and (for [`McpServer::serve_http`])
//!   every call of a tool with an effect that started has recorded its outcome.
//!
//! rmcp's streamable HTTP service does the protocol (sessions for the handshake era, stateless
//! requests for 2026-07-28, SSE streams, the body bound); hyper serves it. Its own `Host` and
//! `Origin` checks are off: `request_head.rs` is the one place they are made.

use std::convert::Infallible;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::Either;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::ServerHandler;
use rmcp::model::ProtocolVersion;
use rmcp::transport::common::http_header::{HEADER_MCP_PROTOCOL_VERSION, HEADER_SESSION_ID};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};
use tower_layer::Layer;
use tower_service::Service;

use super::body_deadline::DeadlineBody;
use super::detached::Detached;
use super::rate_limit::{ClientAddress, RateLimitLayer};
use super::request_head::HeadRules;
use super::{McpServer, McpServerError};

type Body = BoxBody<Bytes, Infallible>;
type Answer = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

/// How [`serve_http`] listens and what it lets through.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Where to listen. Default `127.0.0.1:8000`; port 0 picks a free port.
    pub bind: SocketAddr,
    /// The endpoint's path. Default `/mcp`; other paths get `404`.
    pub path: String,
    /// `Host` values accepted, as host names or `host:port`. Default: `localhost`, `127.0.0.1`
    /// and `::1`. Add the server's public name when it listens on another address. An empty
    /// list accepts any host (which gives up the DNS-rebinding defence).
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted when a request carries one (scheme, host and port, the scheme's
    /// default port when none is written; `:*` for any port; `null` to let sandboxed pages and
    /// files in). Default: the loopback origins on any port. A request without `Origin` (not
    /// from a browser) is not refused for it. A listed origin's pages get CORS answers, so a
    /// browser lets them use the server.
    pub allowed_origins: Vec<String>,
    /// The largest request body accepted, in bytes. Default 4 MiB.
    pub max_body_bytes: usize,
    /// The rate limit per client address; `None` for none. Default 50 requests a second, in
    /// bursts of up to 100.
    pub rate_limit: Option<RateLimitLayer>,
    /// How long a request's head may take to arrive; a slower connection is closed. Default
    /// 30 seconds; `Duration::MAX` for no bound.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive once its head has; a slower request is
    /// answered with an error and its connection freed. Default 30 seconds.
    pub body_timeout: Duration,
    /// The most handshake-era sessions open at once (each holds its state until the client
    /// ends it or it idles out); a request that would open one more gets `503`, and so does a
    /// stateless request meanwhile. Default 1 000.
    pub max_sessions: usize,
    /// The most connections served at once; more wait to be accepted until one closes. Each
    /// holds a file descriptor, and an idle one stays until its header timeout. Default 512;
    /// at least one is always served.
    pub max_connections: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 8000)),
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: vec![
                "http://localhost:*".into(),
                "http://127.0.0.1:*".into(),
                "http://[::1]:*".into(),
            ],
            max_body_bytes: 4 * 1024 * 1024,
            rate_limit: NonZeroU32::new(50)
                .zip(NonZeroU32::new(100))
                .map(|(rate, burst)| RateLimitLayer::per_second(rate, burst)),
            header_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
            max_sessions: 1000,
            max_connections: 512,
        }
    }
}

impl HttpOptions {
    /// The defaults, listening on `bind`.
    pub fn bind(bind: SocketAddr) -> Self {
        Self {
            bind,
            ..Self::default()
        }
    }
}

/// A running HTTP server: its address, and the way to stop it. It serves until shut down, also
/// once this handle is dropped; a program whose work is serving awaits [`wait`](Self::wait).
#[derive(Debug)]
#[must_use = "the server stops with the program: await `wait()` to serve until it is shut down"]
pub struct McpHttpServer {
    local_addr: SocketAddr,
    stop: CancellationToken,
    accepting: JoinHandle<()>,
    /// The served `McpServer`'s calls running on their own tasks, which shutdown waits for.
    detached: Option<Arc<Detached>>,
}

impl McpHttpServer {
    /// The address it listens on (with the port picked, when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL, `http://<address><path>`, for `path` as configured.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.local_addr)
    }

    /// Stops accepting connections and requests, ends every session, and returns once every
    /// connection is closed (open ones get a few seconds to finish what they were answering).
    /// A call of a tool with an effect that already started still runs to its end on its own
    /// task, so its outcome is recorded; a server started with [`McpServer::serve_http`] also
    /// waits for those calls, so the program may end once this returns.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.accepting.await;
        if let Some(detached) = &self.detached {
            detached.finished().await;
        }
    }

    /// Waits until the server stops (it only stops through [`shutdown`](Self::shutdown), or when
    /// the listener fails).
    pub async fn wait(&mut self) {
        let _ = (&mut self.accepting).await;
    }
}

impl McpServer {
    /// Serves this server over streamable HTTP (see [`serve_http`]), a session per client.
    ///
    /// # Errors
    ///
    /// [`McpServerError::Transport`] when the address cannot be bound.
    pub async fn serve_http(self, options: HttpOptions) -> Result<McpHttpServer, McpServerError> {
        let detached = Arc::clone(&self.shared.detached);
        let mut served = serve_http(move || self.for_session(), options).await?;
        served.detached = Some(detached);
        Ok(served)
    }
}

/// Serves any rmcp [`ServerHandler`] over streamable HTTP with the hardening of [`HttpOptions`]:
/// `new_session` makes the handler of each new session (or stateless request). Use it for a
/// handler that wraps an [`McpServer`] to add resources or prompts; an `McpServer` alone has
/// [`McpServer::serve_http`].
///
/// Must be called within a Tokio runtime: it spawns the accepting task.
///
/// # Errors
///
/// [`McpServerError::Transport`] when the address cannot be bound.
pub async fn serve_http<S, F>(
    new_session: F,
    options: HttpOptions,
) -> Result<McpHttpServer, McpServerError>
where
    S: ServerHandler + Send + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    let listener = TcpListener::bind(options.bind)
        .await
        .map_err(McpServerError::Transport)?;
    let local_addr = listener.local_addr().map_err(McpServerError::Transport)?;
    let stop = CancellationToken::new();
    // Host and Origin are checked once, before the rate limit (`Endpoint::answer`).
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(stop.child_token());
    let sessions = Arc::new(LocalSessionManager::default());
    let mcp = StreamableHttpService::new(move || Ok(new_session()), Arc::clone(&sessions), config);
    let limit = options.rate_limit;
    let endpoint = Endpoint {
        path: options.path.into(),
        head: Arc::new(HeadRules::new(
            &options.allowed_hosts,
            &options.allowed_origins,
        )),
        stopping: stop.clone(),
        sessions,
        max_sessions: options.max_sessions,
        body_timeout: options.body_timeout,
        cors: cors(),
        limited: limit.map(|limit| limit.layer(mcp.clone())),
        mcp,
    };
    let accepting = tokio::spawn(accept(
        listener,
        endpoint,
        options.header_timeout,
        options.max_connections.max(1),
    ));
    Ok(McpHttpServer {
        local_addr,
        stop,
        accepting,
        detached: None,
    })
}

/// What answers each request: the path and head checks, then the rate limit, then rmcp.
struct Endpoint<S> {
    path: Arc<str>,
    head: Arc<HeadRules>,
    /// Fired by shutdown: no request starts after it.
    stopping: CancellationToken,
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    body_timeout: Duration,
    /// Answers pre-flights and marks answers for the browser pages `head` lets in.
    cors: CorsLayer,
    mcp: StreamableHttpService<S, LocalSessionManager>,
    limited:
        Option<super::rate_limit::RateLimitService<StreamableHttpService<S, LocalSessionManager>>>,
}

impl<S> Clone for Endpoint<S> {
    fn clone(&self) -> Self {
        Self {
            path: Arc::clone(&self.path),
            head: Arc::clone(&self.head),
            stopping: self.stopping.clone(),
            sessions: Arc::clone(&self.sessions),
            max_sessions: self.max_sessions,
            body_timeout: self.body_timeout,
            cors: self.cors.clone(),
            mcp: self.mcp.clone(),
            limited: self.limited.clone(),
        }
    }
}

impl<S: ServerHandler + Send + 'static> Endpoint<S> {
    fn answer(&self, mut request: Request<Incoming>, client: SocketAddr) -> Answer {
        let refused = if self.stopping.is_cancelled() {
            Some(StatusCode::SERVICE_UNAVAILABLE)
        } else if request.uri().path() != &*self.path {
            Some(StatusCode::NOT_FOUND)
        } else {
            self.head.refusal(&request).or_else(|| {
                self.would_open_one_session_too_many(&request)
                    .then_some(StatusCode::SERVICE_UNAVAILABLE)
            })
        };
        if let Some(status) = refused {
            return Box::pin(std::future::ready(Ok(status_only(status))));
        }
        request.extensions_mut().insert(ClientAddress(client));
        // Fired once the answer is dropped: sent whole, or its connection closed first.
        let closed = CancellationToken::new();
        request
            .extensions_mut()
            .insert(StreamClosed(closed.clone()));
        // Only a browser sends `Origin`, and `head` let this one in: its page gets CORS.
        let from_page = request.headers().contains_key(http::header::ORIGIN);
        let request = request.map(|body| DeadlineBody::new(body, self.body_timeout));
        let answering = match (&self.limited, from_page) {
            (Some(limited), true) => Either::Left(self.cors.layer(limited.clone()).call(request)),
            (None, true) => Either::Left(self.cors.layer(self.mcp.clone()).call(request)),
            (Some(limited), false) => Either::Right(limited.clone().call(request)),
            (None, false) => Either::Right(self.mcp.clone().call(request)),
        };
        let closes = closed.drop_guard();
        Box::pin(async move {
            let response = answering.await?;
            Ok(response.map(|body| {
                body.map_frame(move |frame| {
                    let _open = &closes;
                    frame
                })
                .boxed()
            }))
        })
    }

    /// Whether `request`, outside any session (only such a request may open one), comes when the
    /// sessions are at their bound. A table being written to is not waited for: the bound is a
    /// ceiling on growth, not an exact count.
    fn would_open_one_session_too_many<B>(&self, request: &Request<B>) -> bool {
        // Read as rmcp reads it: a session id that is not text is none, and rmcp opens a new
        // session for an `initialize` carrying one. A request of the sessionless revision
        // (its version header names 2026-07-28 or later, as rmcp requires of every such
        // request; revisions are dates, so they compare as text) has none either: rmcp serves
        // it without looking at the id.
        let headers = request.headers();
        let sessionless = headers
            .get(HEADER_MCP_PROTOCOL_VERSION)
            .is_some_and(|version| {
                version.as_bytes() >= ProtocolVersion::V_2026_07_28.as_str().as_bytes()
            });
        let in_session = !sessionless
            && headers
                .get(HEADER_SESSION_ID)
                .is_some_and(|id| id.to_str().is_ok());
        // A pre-flight opens nothing, and never carries the session id of the request it asks
        // about.
        let pre_flight = request.method() == http::Method::OPTIONS;
        !in_session
            && !pre_flight
            && (self.sessions.sessions.try_read())
                .is_ok_and(|sessions| sessions.len() >= self.max_sessions)
    }
}

/// Fires when the answer to the HTTP request carrying it is dropped: sent to its end, or its
/// connection closed before (the client stopped reading its stream). Every request
/// [`serve_http`] passes on carries one, which rmcp hands to the handler with the request's
/// [`Parts`](http::request::Parts).
#[derive(Clone, Debug)]
pub(super) struct StreamClosed(pub(super) CancellationToken);

/// CORS for a page whose origin `head` let in (so its origin is echoed): it may use the
/// endpoint's methods with any header it asks for, and read the session id a session's
/// `initialize` answers with. No credentials (cookies): clients authorise with headers.
fn cors() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::mirror_request())
        .allow_methods([http::Method::GET, http::Method::POST, http::Method::DELETE])
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([http::HeaderName::from_static("mcp-session-id")])
        .max_age(Duration::from_secs(3600))
}

fn status_only(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::default());
    *response.status_mut() = status;
    response
}

/// How long open connections get to finish once the server shuts down.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The longest header timeout hyper is given: it adds the timeout to the current instant, and
/// a sum past what an instant holds panics, failing every connection. A longer one
/// (`Duration::MAX` for "never") is taken as this century.
const LONGEST_HEADER_TIMEOUT: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// How long the accept loop pauses after a failed accept (out of file descriptors, say), which
/// would otherwise fail again at once and spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

async fn accept<S: ServerHandler + Send + 'static>(
    listener: TcpListener,
    endpoint: Endpoint<S>,
    header_timeout: Duration,
    max_connections: usize,
) {
    let stop = endpoint.stopping.clone();
    let mut connections = JoinSet::new();
    loop {
        let (stream, client) = tokio::select! {
            // At the bound, a new connection waits in the listener's queue for one to close.
            accepted = listener.accept(), if connections.len() < max_connections => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // The connection's problem, not the server's: log it, pause, keep listening.
                    tracing::warn!(target: "prism_tools", %error, "could not accept an MCP connection");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            () = stop.cancelled() => break,
        };
        let endpoint = endpoint.clone();
        let stop = stop.clone();
        connections.spawn(async move {
            let service =
                hyper::service::service_fn(move |request| endpoint.answer(request, client));
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout.min(LONGEST_HEADER_TIMEOUT))
                .serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                served = connection.as_mut() => {
                    if let Err(error) = served {
                        tracing::debug!(target: "prism_tools", %error, "an MCP connection ended with an error");
                    }
                }
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    // Past the grace, the connection is dropped, whatever it was doing.
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
                }
            }
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}
