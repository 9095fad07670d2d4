//! The run's filtering proxy: every connection a run's browser context opens goes through it,
//! and reaches only an address the URL policy allows.
//!
//! The page's request checks (`guard.rs`) see the requests of one page. They never see a
//! WebSocket (the DevTools `Fetch` domain does not pause one), nor a window the page opens (a
//! `target=_blank` link, `window.open`), nor a worker's own connections. Chromium sends all of
//! those through the proxy of the browser context they belong to, so each run's context is
//! created with this one as its proxy, loopback included (which Chromium would otherwise reach
//! directly). A `CONNECT` tunnel (HTTPS, WebSockets) or a plain HTTP request is let through only
//! to an address the policy has checked, and the proxy connects to that very address: Chromium
//! hands it the name instead of resolving it, so a DNS answer that changes after the check
//! (rebinding) is not followed either.
//!
//! What it refuses is kept in memory ([`ProxyRefusals`], bounded) for the run's navigation: a
//! page navigation the page's checks let through but the proxy refused (a name that now
//! resolves to a refused address) is then reported as refused, not as an empty 403 page or a
//! failed tunnel.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;
use url::{Host, Url};

use super::error::{BrowserError, BrowserErrorKind};
use crate::redact::cut_marked_str;
use crate::tools::web::{UrlPolicy, WebErrorKind};

type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// How long one address may take to accept a connection before the next is tried: an address
/// that drops every packet would otherwise hold the connection for minutes.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Refusals kept: enough for the requests of one navigation, while a page that keeps asking
/// for refused hosts cannot grow the log.
const MAX_REFUSALS: usize = 32;

/// Bytes of a refused host, and of the policy's reason, kept.
const MAX_REFUSAL_BYTES: usize = 500;

/// A connection the proxy refused: to which host and port, and the policy's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProxyRefusal {
    /// The host as the URL parser writes it (lower case, IPv6 in brackets).
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) why: String,
}

/// The proxy's latest refusals, numbered in order, so a navigation can ask for those made
/// since it started.
#[derive(Debug, Default)]
pub(crate) struct ProxyRefusals {
    log: Mutex<RefusalLog>,
}

#[derive(Debug, Default)]
struct RefusalLog {
    /// The number the next refusal gets.
    next: u64,
    entries: VecDeque<(u64, ProxyRefusal)>,
}

impl ProxyRefusals {
    /// The point after every refusal so far: [`since`](Self::since) it finds only later ones.
    pub(crate) fn mark(&self) -> u64 {
        self.log.lock().map_or(0, |log| log.next)
    }

    /// The latest refusal of `host:port` made after `mark`.
    pub(crate) fn since(&self, mark: u64, host: &str, port: u16) -> Option<ProxyRefusal> {
        let log = self.log.lock().ok()?;
        log.entries
            .iter()
            .rev()
            .take_while(|(number, _)| *number >= mark)
            .find(|(_, refusal)| refusal.host == host && refusal.port == port)
            .map(|(_, refusal)| refusal.clone())
    }

    fn record(&self, host: &str, port: u16, why: &str) {
        let Ok(mut log) = self.log.lock() else { return };
        let number = log.next;
        log.next += 1;
        if log.entries.len() == MAX_REFUSALS {
            log.entries.pop_front();
        }
        let refusal = ProxyRefusal {
            host: cut_marked_str(host, MAX_REFUSAL_BYTES).into_owned(),
            port,
            why: cut_marked_str(why, MAX_REFUSAL_BYTES).into_owned(),
        };
        log.entries.push_back((number, refusal));
    }
}

/// A proxy on a loopback port, serving one run's context until dropped.
pub(crate) struct PolicyProxy {
    address: SocketAddr,
    /// Accepts connections and serves each on a task of its own inside it, so aborting it ends
    /// them all.
    task: JoinHandle<()>,
    /// Ends the tunnels, which outlive the request that opened them.
    stop: CancellationToken,
    refusals: Arc<ProxyRefusals>,
}

impl PolicyProxy {
    /// Starts a proxy that lets through only what `policy` allows.
    pub(crate) async fn start(policy: UrlPolicy) -> Result<PolicyProxy, BrowserError> {
        let opened = TcpListener::bind((IpAddr::from([127, 0, 0, 1]), 0))
            .await
            .and_then(|listener| Ok((listener.local_addr()?, listener)));
        let (address, listener) = opened.map_err(|error| {
            BrowserError::new(
                BrowserErrorKind::Launch,
                format!("could not open the run's proxy: {error}"),
            )
        })?;
        let stop = CancellationToken::new();
        let refusals = Arc::new(ProxyRefusals::default());
        let proxy = Proxy {
            policy,
            stop: stop.clone(),
            refusals: refusals.clone(),
        };
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => {
                            connections.spawn(proxy.clone().serve(stream));
                        }
                        // Out of descriptors, say: waits rather than spins.
                        Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                    },
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(PolicyProxy {
            address,
            task,
            stop,
            refusals,
        })
    }

    /// What the proxy has refused lately.
    pub(crate) fn refusals(&self) -> Arc<ProxyRefusals> {
        self.refusals.clone()
    }

    /// The proxy as Chromium names it (`Target.createBrowserContext`'s `proxyServer`).
    pub(crate) fn server(&self) -> String {
        format!("http://{}", self.address)
    }
}

impl Drop for PolicyProxy {
    fn drop(&mut self) {
        self.stop.cancel();
        self.task.abort();
    }
}

/// Why a connection was not made.
enum Failure {
    /// The policy refuses it.
    Refused,
    /// The policy allows it, but it could not be made.
    Unreachable,
}

/// What each connection from the browser is served with.
#[derive(Clone)]
struct Proxy {
    policy: UrlPolicy,
    stop: CancellationToken,
    refusals: Arc<ProxyRefusals>,
}

impl Proxy {
    /// Serves one connection from the browser: each request on it is judged on its own.
    async fn serve(self, stream: TcpStream) {
        let service = hyper::service::service_fn(move |request| {
            let proxy = self.clone();
            async move { proxy.answer(request).await }
        });
        let served = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades()
            .await;
        if let Err(error) = served {
            tracing::debug!(target: "prism_tools", "a browser proxy connection ended: {error}");
        }
    }

    /// A `CONNECT` opens a tunnel; any other request is a plain HTTP request, forwarded.
    async fn answer(self, request: Request<Incoming>) -> Result<Response<ProxyBody>, Infallible> {
        let answer = if request.method() == Method::CONNECT {
            self.tunnel(request).await
        } else {
            self.forward(request).await
        };
        // Neither the URL nor the policy's message is logged: a URL can carry a secret. (The
        // refusals kept for the navigation hold only the host and port, and reach the model
        // through the tool's answer, which the dispatcher redacts.)
        Ok(answer.unwrap_or_else(|failure| match failure {
            Failure::Refused => {
                tracing::debug!(target: "prism_tools", "the browser proxy refused a connection");
                status(StatusCode::FORBIDDEN)
            }
            Failure::Unreachable => status(StatusCode::BAD_GATEWAY),
        }))
    }

    async fn tunnel(self, request: Request<Incoming>) -> Result<Response<ProxyBody>, Failure> {
        let authority = request.uri().authority().ok_or(Failure::Refused)?;
        let port = authority.port_u16().ok_or(Failure::Refused)?;
        // The tunnel's scheme (https, wss) is not said; the policy judges the host.
        let upstream = self.connect(&format!("https://{authority}/"), port).await?;
        tokio::spawn(async move {
            let Ok(upgraded) = hyper::upgrade::on(request).await else {
                return;
            };
            self.relay(TokioIo::new(upgraded), upstream).await;
        });
        Ok(status(StatusCode::OK))
    }

    async fn forward(self, mut request: Request<Incoming>) -> Result<Response<ProxyBody>, Failure> {
        let uri = request.uri().clone();
        if uri.scheme_str() != Some("http") {
            return Err(Failure::Refused);
        }
        let port = uri.port_u16().unwrap_or(80);
        let upstream = self.connect(&uri.to_string(), port).await?;
        // The origin is asked for the path, as a client asks it, not for the whole URL.
        let path = uri.path_and_query().map_or("/", |path| path.as_str());
        *request.uri_mut() = path.parse().map_err(|_| Failure::Refused)?;
        request.headers_mut().remove("proxy-connection");
        request.headers_mut().remove("proxy-authorization");
        let browser_side = hyper::upgrade::on(&mut request);
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(upstream))
                .await
                .map_err(|_| Failure::Unreachable)?;
        let stop = self.stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = connection.with_upgrades() => {}
            }
        });
        let mut response = sender
            .send_request(request)
            .await
            .map_err(|_| Failure::Unreachable)?;
        if response.status() == StatusCode::SWITCHING_PROTOCOLS {
            // A protocol switch (a WebSocket over plain HTTP): both sides are joined once each
            // has let go of HTTP.
            let origin_side = hyper::upgrade::on(&mut response);
            tokio::spawn(async move {
                if let (Ok(browser), Ok(origin)) = (browser_side.await, origin_side.await) {
                    self.relay(TokioIo::new(browser), TokioIo::new(origin))
                        .await;
                }
            });
        }
        Ok(response.map(BodyExt::boxed))
    }

    /// Copies both ways until either side closes or the proxy stops.
    async fn relay<A, B>(&self, mut browser: A, mut origin: B)
    where
        A: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
        B: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        tokio::select! {
            _ = self.stop.cancelled() => {}
            _ = tokio::io::copy_bidirectional(&mut browser, &mut origin) => {}
        }
    }

    /// Connects to `port` at an address of `url`'s host that the policy allows; a refusal is
    /// recorded with the host, the port and the policy's reason.
    async fn connect(&self, url: &str, port: u16) -> Result<TcpStream, Failure> {
        let refuse = |why: &str| {
            if let Some(host) = Url::parse(url).ok().as_ref().and_then(Url::host_str) {
                self.refusals.record(host, port, why);
            }
            Failure::Refused
        };
        let parsed = self
            .policy
            .check_url(url)
            .map_err(|error| refuse(error.message()))?;
        let addresses = match parsed.host() {
            Some(Host::Domain(domain)) => {
                self.policy
                    .resolve(domain)
                    .await
                    .map_err(|error| match error.kind() {
                        // The name did not resolve: nothing was refused.
                        WebErrorKind::Network => Failure::Unreachable,
                        _ => refuse(error.message()),
                    })?
            }
            Some(Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
            Some(Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
            None => return Err(Failure::Refused),
        };
        for ip in addresses {
            let connecting = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect((ip, port)));
            if let Ok(Ok(stream)) = connecting.await {
                return Ok(stream);
            }
        }
        Err(Failure::Unreachable)
    }
}

fn status(code: StatusCode) -> Response<ProxyBody> {
    let mut response = Response::new(Empty::new().map_err(|never| match never {}).boxed());
    *response.status_mut() = code;
    response
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpSocket;

    use super::*;
    use crate::redact::CUT_MARKER;
    use crate::tools::web::AddressClass;

    /// The policy these tests' servers on loopback are reached under.
    fn local() -> UrlPolicy {
        UrlPolicy::new().allow_addresses(AddressClass::Loopback)
    }

    /// Sends `head` to the proxy and returns the connection and the answer's head.
    async fn ask(proxy: &PolicyProxy, head: &str) -> (TcpStream, String) {
        let mut stream = TcpStream::connect(proxy.address).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        let mut byte = [0u8; 1];
        while !answer.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte).await {
                Ok(1) => answer.push(byte[0]),
                _ => break,
            }
        }
        (stream, String::from_utf8_lossy(&answer).into_owned())
    }

    /// A listener on `ip:port` whose accept queue is full, so a connect to it never completes,
    /// as to an address that drops every packet.
    async fn silent(ip: IpAddr, port: u16) -> (tokio::net::TcpListener, Vec<TcpStream>) {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new(ip, port)).unwrap();
        let listener = socket.listen(0).unwrap();
        let mut queued = Vec::new();
        for _ in 0..4 {
            let connecting = TcpStream::connect((ip, port));
            match tokio::time::timeout(Duration::from_millis(500), connecting).await {
                Ok(Ok(stream)) => queued.push(stream),
                _ => break,
            }
        }
        (listener, queued)
    }

    /// A name pinned to an address the proxy's policy refuses (as a name rebound after the
    /// page's check): the tunnel and the plain request are refused, and each refusal is kept
    /// with its host, port and the policy's reason, and none from before a mark is found.
    #[tokio::test]
    async fn a_refusal_is_kept_with_its_host_port_and_reason() {
        let policy = UrlPolicy::new().pin_host("rebound.test", [IpAddr::from([127, 0, 0, 1])]);
        let proxy = PolicyProxy::start(policy).await.unwrap();
        let refusals = proxy.refusals();
        let before = refusals.mark();
        let head = "CONNECT rebound.test:8443 HTTP/1.1\r\nHost: rebound.test:8443\r\n\r\n";
        let (_, answer) = ask(&proxy, head).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        let tunnel = refusals.since(before, "rebound.test", 8443).unwrap();
        assert!(tunnel.why.contains("127.0.0.1"), "{}", tunnel.why);
        let after_tunnel = refusals.mark();
        let head = "GET http://Rebound.test:8080/secret?token=x HTTP/1.1\r\n\
                    Host: rebound.test:8080\r\n\r\n";
        let (_, answer) = ask(&proxy, head).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        let plain = refusals.since(after_tunnel, "rebound.test", 8080).unwrap();
        assert!(plain.why.contains("127.0.0.1"), "{}", plain.why);
        assert!(!plain.why.contains("secret"), "{}", plain.why);
        assert_eq!(refusals.since(after_tunnel, "rebound.test", 8443), None);
        assert_eq!(refusals.since(before, "other.test", 8080), None);
    }

    #[test]
    fn the_refusals_kept_are_bounded_in_count_and_size() {
        let refusals = ProxyRefusals::default();
        let long = "x".repeat(10 * MAX_REFUSAL_BYTES);
        for port in 0..(4 * MAX_REFUSALS as u16) {
            refusals.record(&long, port, &long);
        }
        let log = refusals.log.lock().unwrap();
        assert_eq!(log.entries.len(), MAX_REFUSALS);
        let (_, last) = log.entries.back().unwrap();
        assert_eq!(last.port, 4 * MAX_REFUSALS as u16 - 1);
        assert!(last.host.len() <= MAX_REFUSAL_BYTES + CUT_MARKER.len());
        assert!(last.why.len() <= MAX_REFUSAL_BYTES + CUT_MARKER.len());
        drop(log);
        assert_eq!(refusals.since(0, &long, 0), None);
    }

    #[tokio::test]
    async fn an_address_that_never_answers_does_not_hold_up_the_next() {
        let server = TcpListener::bind("127.0.0.4:0").await.unwrap();
        let port = server.local_addr().unwrap().port();
        let silent_ip = IpAddr::from([127, 0, 0, 3]);
        let _silent = silent(silent_ip, port).await;
        let policy = local().pin_host("slow.test", [silent_ip, IpAddr::from([127, 0, 0, 4])]);
        let proxy = PolicyProxy::start(policy).await.unwrap();
        let started = Instant::now();
        let head = format!("CONNECT slow.test:{port} HTTP/1.1\r\nHost: slow.test:{port}\r\n\r\n");
        let answer = tokio::time::timeout(Duration::from_secs(30), ask(&proxy, &head)).await;
        let (_, answer) = answer.expect("the proxy answers within 30 seconds");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}
