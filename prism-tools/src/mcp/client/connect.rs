//! Opening a session with a server: a child process over stdio, or streamable HTTP, then the
//! protocol handshake (rmcp negotiates the era: `server/discover` for 2026-07-28, falling back to
//! the `initialize` handshake of 2025-11-25 and earlier).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};

use super::bounded_lines::{BoundedLines, LineOverflow};
use super::error::McpClientError;
use super::notifications::BridgeHandler;
use super::server::{Endpoint, RemoteServer};
use super::url_free_http::UrlFreeClient;
use crate::redact::SecretRedactor;

/// Environment variables a child process keeps from the host's: what a program needs to find
/// itself and its files. Everything else (tokens, keys) must be given explicitly.
const INHERITED_ENV: [&str; 8] = [
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "SYSTEMROOT",
    "TZ",
];

/// What a child's standard error is scrubbed of: the endpoint's credentials and every secret
/// of the dispatchers that called the server so far (a server may log the arguments it gets),
/// shared by the connection's sessions and grown as calls come.
#[derive(Clone)]
pub(crate) struct StderrScrubber {
    endpoint: SecretRedactor,
    /// The dispatchers' secrets seen so far.
    hosts: Arc<Mutex<SecretRedactor>>,
    /// Both as one redactor, read for each line.
    current: Arc<ArcSwap<SecretRedactor>>,
}

impl StderrScrubber {
    /// A scrubber of `server`'s credentials, for now.
    pub(crate) fn new(server: &RemoteServer) -> Self {
        let endpoint = server.scrubber();
        Self {
            current: Arc::new(ArcSwap::from_pointee(endpoint.clone())),
            endpoint,
            hosts: Arc::default(),
        }
    }

    /// Adds the secrets of a calling dispatcher's redactor (`host`), when it has new ones.
    pub(crate) fn learn(&self, host: &SecretRedactor) {
        if host.is_empty() {
            return;
        }
        let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        if hosts.covers(host) {
            return;
        }
        *hosts = hosts.union(host);
        self.current.store(Arc::new(self.endpoint.union(&hosts)));
    }

    fn load(&self) -> Arc<SecretRedactor> {
        self.current.load_full()
    }
}

/// A running session and, for a child process, the process.
pub(crate) struct Session {
    pub(crate) service: RunningService<RoleClient, BridgeHandler>,
    pub(crate) child: Option<Child>,
    /// Set when a child's output passed the bound on one message, which ended the session.
    pub(crate) overflow: LineOverflow,
}

/// Which protocol era the client asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtocolEra {
    /// Ask for the 2026-07-28 revision with `server/discover`; fall back to the `initialize`
    /// handshake (2025-11-25) when the server does not know it. The default.
    #[default]
    Auto,
    /// Only the 2026-07-28 revision.
    Revision2026,
    /// Only the `initialize` handshake, asking for 2025-11-25.
    Handshake,
}

impl ProtocolEra {
    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Self::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Self::Revision2026 => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Self::Handshake => ClientLifecycleMode::Initialize,
        }
    }
}

/// Starts the transport and runs the handshake, within the connect timeout.
pub(crate) async fn open(
    server: &RemoteServer,
    era: ProtocolEra,
    handler: BridgeHandler,
    stderr: &StderrScrubber,
) -> Result<Session, McpClientError> {
    let waited = server.bounds.connect_timeout;
    let opening = async {
        match &server.endpoint {
            Endpoint::Command { .. } => open_child(server, era, handler, stderr).await,
            Endpoint::Http { url, headers, .. } => {
                let transport = http_transport(server, url, headers)?;
                let service = handler
                    .serve_with_lifecycle(transport, era.lifecycle())
                    .await
                    .map_err(|error| handshake_error(server, &error))?;
                Ok(Session {
                    service,
                    child: None,
                    overflow: LineOverflow::default(),
                })
            }
        }
    };
    tokio::time::timeout(waited, opening)
        .await
        .map_err(|_| McpClientError::Timeout {
            server: server.name.clone(),
            during: "the handshake",
            waited,
        })?
}

async fn open_child(
    server: &RemoteServer,
    era: ProtocolEra,
    handler: BridgeHandler,
    scrubber: &StderrScrubber,
) -> Result<Session, McpClientError> {
    let Endpoint::Command {
        program,
        args,
        env,
        current_dir,
        ..
    } = &server.endpoint
    else {
        unreachable!("open_child is only called for a command");
    };
    let mut command = Command::new(program);
    command.args(args).env_clear();
    for key in INHERITED_ENV {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    command.envs(env.iter().map(|(key, value)| (key, value)));
    if let Some(dir) = current_dir {
        command.current_dir(dir);
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|source| McpClientError::Spawn {
        server: server.name.clone(),
        source,
    })?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        unreachable!("both pipes were asked for");
    };
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(log_stderr(server.name.clone(), stderr, scrubber.clone()));
    }
    let bound = server.bounds.max_message_bytes();
    let overflow = LineOverflow::default();
    let stdout = BoundedLines::new(stdout, bound, overflow.clone());
    let transport = AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(bound);
    match handler
        .serve_with_lifecycle(transport, era.lifecycle())
        .await
    {
        Ok(service) => Ok(Session {
            service,
            child: Some(child),
            overflow,
        }),
        Err(error) => {
            let _ = child.start_kill();
            // The SDK only sees the stream end; the overflow says why it did.
            let why = overflow.cause().unwrap_or_else(|| error.to_string());
            Err(handshake_error(server, &why))
        }
    }
}

/// Runs the handshake over a transport made by the caller (an in-memory pipe, in tests).
#[cfg(test)]
pub(crate) async fn open_over<T, E, A>(
    server: &RemoteServer,
    handler: BridgeHandler,
    transport: T,
) -> Result<Session, McpClientError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let service = handler
        .serve_with_lifecycle(transport, ProtocolEra::Auto.lifecycle())
        .await
        .map_err(|error| handshake_error(server, &error))?;
    Ok(Session {
        service,
        child: None,
        overflow: LineOverflow::default(),
    })
}

fn http_transport(
    server: &RemoteServer,
    url: &str,
    headers: &[(String, String)],
) -> Result<StreamableHttpClientTransport<UrlFreeClient>, McpClientError> {
    let http_error = |message: String| McpClientError::Http {
        server: server.name.clone(),
        message,
    };
    // No redirects: a header given for this server never travels to another one.
    let client = crate::tls::client_builder()
        .map_err(|error| http_error(error.to_string()))?
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(server.bounds.connect_timeout)
        .build()
        .map_err(|error| http_error(error.to_string()))?;
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::try_from(name.as_str())
            .map_err(|error| http_error(format!("header `{name}`: {error}")))?;
        let value = reqwest::header::HeaderValue::try_from(value.as_str())
            .map_err(|error| http_error(format!("header `{name}`: {error}")))?;
        custom.insert(name, value);
    }
    let limit = server.bounds.max_message_bytes();
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(custom)
        .max_sse_event_size(limit)
        .max_json_response_size(limit)
        .control_request_timeout(Duration::from_secs(5));
    Ok(StreamableHttpClientTransport::with_client(
        UrlFreeClient::new(client, server.scrubber()),
        config,
    ))
}

/// The HTTP stack's errors carry no URL (see `url_free_http`): the message names the endpoint by
/// its origin, so it still says which server failed.
fn handshake_error(server: &RemoteServer, error: &dyn std::fmt::Display) -> McpClientError {
    // Scrubbed as the SDK wrote it, whose end may be a quote it cut (see `RemoteServer::scrub`).
    // A quote of the whole URL starts with its origin, and is cut to it by the scrub.
    let said = server.scrub(&error.to_string());
    let message = match server.origin() {
        Some(origin) if !said.contains(&origin) => server.scrub(&format!("{said} (at {origin})")),
        _ => said,
    };
    McpClientError::Handshake {
        server: server.name.clone(),
        message,
    }
}

/// The longest line of a server's standard error that reaches the log.
const MAX_STDERR_LINE: usize = 4096;

/// Forwards what the server writes on its standard error to the host's log (see
/// [`scrubbed_lines`]).
async fn log_stderr(server: String, stderr: ChildStderr, scrubber: StderrScrubber) {
    scrubbed_lines(
        stderr,
        || scrubber.load(),
        |line| {
            tracing::debug!(target: "prism::mcp", server = %server, stderr = ?line);
        },
    )
    .await;
}

/// Hands each line `reader` gives to `each`, the secrets of the redactor `scrubber` gives at
/// that line taken out, until the end or an error. A line is read whole or not at all: one over [`MAX_STDERR_LINE`] bytes is replaced
/// by a note, since a cut could split a secret where the scrubber would no longer find it; and
/// a chatty server can neither fill its pipe and stall nor flood the log with one line.
async fn scrubbed_lines(
    reader: impl AsyncRead + Unpin,
    scrubber: impl Fn() -> Arc<SecretRedactor>,
    mut each: impl FnMut(&str),
) {
    let mut reader = BufReader::new(reader);
    let mut line = Vec::with_capacity(256);
    let mut too_long = false;
    loop {
        line.clear();
        let limit = (MAX_STDERR_LINE + 1) as u64;
        match (&mut reader).take(limit).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Whole unless it filled the limit without ending (the last line may lack its `\n`).
        let ended = line.last() == Some(&b'\n');
        if !too_long && (ended || line.len() <= MAX_STDERR_LINE) {
            let text = String::from_utf8_lossy(&line);
            each(&scrubber().redact_str(text.trim_end()));
            continue;
        }
        // Part of an over-long line: dropped, up to its end.
        too_long = !ended;
        if ended {
            each(LEFT_OUT);
        }
    }
    if too_long {
        each(LEFT_OUT);
    }
}

/// What the log shows for a line of standard error over [`MAX_STDERR_LINE`].
const LEFT_OUT: &str = "(a line over 4096 bytes was left out)";

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(stderr: &[u8], secrets: &[&str]) -> Vec<String> {
        let mut lines = Vec::new();
        let scrubber = Arc::new(SecretRedactor::new(secrets.iter().copied()));
        scrubbed_lines(
            stderr,
            || Arc::clone(&scrubber),
            |line| lines.push(line.to_owned()),
        )
        .await;
        lines
    }

    #[tokio::test]
    async fn standard_error_is_logged_a_scrubbed_line_at_a_time() {
        let secret = "tok-5f0c8e1d2b3a49678";
        // Longer than one read of the pipe: the secret sits across the first 4 KiB.
        let long = format!("{}{secret} rejected\n", "x".repeat(4045));
        let stderr = format!("starting\nusing key {secret}\n{long}last words");
        let lines = lines_of(stderr.as_bytes(), &[secret]).await;
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(lines[0], "starting");
        assert_eq!(lines[1], "using key [REDACTED]");
        assert!(lines[2].ends_with("[REDACTED] rejected"), "{}", lines[2]);
        assert_eq!(lines[3], "last words");
        assert!(lines.iter().all(|line| !line.contains("tok-")), "{lines:?}");
    }

    #[tokio::test]
    async fn an_over_long_line_is_left_out_whole() {
        let secret = "tok-5f0c8e1d2b3a49678";
        let over = format!("{}{secret}{}\n", "y".repeat(4090), "z".repeat(9000));
        let stderr = format!("{over}after\n{over}");
        let lines = lines_of(stderr.as_bytes(), &[secret]).await;
        assert_eq!(lines, [LEFT_OUT, "after", LEFT_OUT]);
        assert!(LEFT_OUT.contains(&MAX_STDERR_LINE.to_string()));
    }

    /// An `initialize` answer of one line of 200,000 bytes, quoting the server's token.
    const OVER_LONG_HANDSHAKE: &str = r#"    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"%s ' "$id" "$API_TOKEN"; head -c 200000 /dev/zero | tr '\0' x; printf '","version":"1"}}}\n' ;;"#;

    /// A handshake answered over the bound fails at once, saying why, without quoting the
    /// server's secret.
    #[tokio::test]
    async fn a_handshake_answer_over_the_bound_fails_saying_why() {
        let token = "tok-7d2a9e4c1b8f3605";
        let server = super::super::scripted_server::scripted_server("wordy", OVER_LONG_HANDSHAKE)
            .secret_env("API_TOKEN", token)
            .max_result_bytes(1000)
            .max_schema_bytes(1000)
            .connect_timeout(Duration::from_secs(30));
        let bound = server.bounds.max_message_bytes();
        assert!(bound < 200_000, "{bound}");
        // Against a hang only.
        let connected = tokio::time::timeout(
            Duration::from_secs(20),
            super::super::mcp_client::McpClient::connect_with(server, ProtocolEra::Handshake),
        )
        .await
        .expect("the handshake ended before its timeout");
        let message = connected.expect_err("the handshake failed").to_string();
        assert!(message.contains("the handshake failed"), "{message}");
        assert!(
            message.contains(&format!("sent a message over {bound} bytes")),
            "{message}"
        );
        assert!(!message.contains(token), "{message}");
    }
}
