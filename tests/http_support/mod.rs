//! A local HTTP server for the HTTP provider tests, on 127.0.0.1 and a port the system picks.
//!
//! Each request is recorded (path, headers, body, when it arrived) and answered by the test's
//! handler with a [`Reply`]: a status, headers, and a body script of byte pieces, pauses, a
//! dropped connection or a stall. The server counts the answer bodies still open, so a test can
//! see that the client closed its connection.

#![allow(dead_code)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::stream;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use prism::run::{ToolsMetadata, TurnMetadata};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// One step of an answer's body.
#[derive(Clone, Debug)]
pub enum Step {
    /// Sends these bytes as one chunk.
    Send(Vec<u8>),
    /// Waits this long.
    Sleep(Duration),
    /// Drops the connection without ending the body.
    Drop,
    /// Sends an SSE comment every `interval`, forever: the connection stays busy but no event
    /// comes (and a closed connection is noticed at the next write).
    Idle(Duration),
    /// As the first step: waits this long before sending the answer's head.
    HeadAfter(Duration),
}

/// An answer.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub steps: Vec<Step>,
}

impl Reply {
    /// A server-sent event stream of these bytes, in one piece.
    pub fn sse(bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            steps: vec![Step::Send(bytes.into())],
        }
    }

    /// A JSON answer with this status.
    pub fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            steps: vec![Step::Send(body.to_string().into_bytes())],
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The body's bytes, sent in pieces cut at `cuts` random places (seeded), each piece after
    /// `pause`.
    pub fn cut(mut self, seed: u64, cuts: usize, pause: Duration) -> Self {
        let bytes: Vec<u8> = self
            .steps
            .iter()
            .flat_map(|step| match step {
                Step::Send(bytes) => bytes.clone(),
                _ => Vec::new(),
            })
            .collect();
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut positions: Vec<usize> = (0..cuts).map(|_| rng.usize(0..=bytes.len())).collect();
        positions.sort_unstable();
        let mut steps = Vec::new();
        let mut start = 0;
        for end in positions.into_iter().chain([bytes.len()]) {
            if end > start {
                if !pause.is_zero() {
                    steps.push(Step::Sleep(pause));
                }
                steps.push(Step::Send(bytes[start..end].to_vec()));
                start = end;
            }
        }
        self.steps = steps;
        self
    }

    /// Adds steps after the body.
    pub fn then(mut self, steps: impl IntoIterator<Item = Step>) -> Self {
        self.steps.extend(steps);
        self
    }
}

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Recorded {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

type Handler = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;

struct State {
    requests: Mutex<Vec<Recorded>>,
    handler: Box<Handler>,
    open: AtomicUsize,
    closed: Notify,
}

/// The running server; it stops with the test's runtime.
pub struct Server {
    /// `http://127.0.0.1:{port}`.
    pub base: String,
    state: Arc<State>,
}

impl Server {
    /// Starts a server whose handler answers request number `n` (from 0).
    pub async fn start(
        handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a local port");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State {
            requests: Mutex::new(Vec::new()),
            handler: Box::new(handler),
            open: AtomicUsize::new(0),
            closed: Notify::new(),
        });
        let accepting = Arc::clone(&state);
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let state = Arc::clone(&accepting);
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(Arc::clone(&state), request));
                    // A connection the client dropped ends with an error: that is the point of
                    // several tests, not a failure.
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        Self { base, state }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Answer bodies not yet finished or dropped.
    pub fn open_bodies(&self) -> usize {
        self.state.open.load(Ordering::SeqCst)
    }

    /// Waits until every answer body is finished or dropped (bounded, so a failure cannot hang
    /// the suite).
    pub async fn wait_closed(&self) -> bool {
        let wait = async {
            loop {
                let notified = self.state.closed.notified();
                if self.open_bodies() == 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(20), wait)
            .await
            .is_ok()
    }
}

/// Decrements the open count when an answer body is dropped, however it ends.
struct OpenBody(Arc<State>);

impl Drop for OpenBody {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.closed.notify_waiters();
    }
}

type Body = UnsyncBoxBody<Bytes, std::io::Error>;

async fn answer(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let path = request
        .uri()
        .path_and_query()
        .map(|path| path.to_string())
        .unwrap_or_default();
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap_or("").to_owned()))
        .collect();
    let body = request
        .into_body()
        .collect()
        .await
        .map(|body| body.to_bytes().to_vec())
        .unwrap_or_default();
    let recorded = Recorded {
        path,
        headers,
        body,
        at: Instant::now(),
    };
    let index = {
        let mut requests = state.requests.lock().unwrap();
        requests.push(recorded.clone());
        requests.len() - 1
    };
    let mut reply = (state.handler)(&recorded, index);
    if let Some(&Step::HeadAfter(wait)) = reply.steps.first() {
        reply.steps.remove(0);
        tokio::time::sleep(wait).await;
    }
    state.open.fetch_add(1, Ordering::SeqCst);
    let guard = OpenBody(Arc::clone(&state));
    let frames = stream::unfold(
        (reply.steps.into_iter(), guard, None::<Duration>),
        |(mut steps, guard, idle)| async move {
            if let Some(interval) = idle {
                tokio::time::sleep(interval).await;
                let ping = Frame::data(Bytes::from_static(b": idle\n\n"));
                return Some((Ok(ping), (steps, guard, idle)));
            }
            loop {
                match steps.next()? {
                    Step::Send(bytes) => {
                        let frame = Frame::data(Bytes::from(bytes));
                        return Some((Ok(frame), (steps, guard, None)));
                    }
                    Step::Sleep(pause) | Step::HeadAfter(pause) => tokio::time::sleep(pause).await,
                    Step::Drop => {
                        let error = std::io::Error::other("dropped on purpose");
                        return Some((Err(error), (steps, guard, None)));
                    }
                    Step::Idle(interval) => {
                        let ping = Frame::data(Bytes::from_static(b": idle\n\n"));
                        return Some((Ok(ping), (steps, guard, Some(interval))));
                    }
                }
            }
        },
    );
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(name, value);
    }
    Ok(response
        .body(StreamBody::new(frames).boxed_unsync())
        .expect("a valid response"))
}

/// The metadata of a first turn with no tools, for asking a provider directly.
pub fn turn_metadata() -> TurnMetadata {
    TurnMetadata {
        session_id: "s".into(),
        run_id: "r".into(),
        turn: 1,
        tools: ToolsMetadata::of_names::<_, &str>([]),
    }
}
