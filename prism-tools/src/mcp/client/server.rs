//! [`RemoteServer`]: which MCP server to connect to, and the bounds the bridge keeps with it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use crate::definition::ToolAnnotations;
use crate::filter::ToolFilter;
use crate::redact::{SecretRedactor, shown_url};

/// How to reach the server.
#[derive(Clone)]
pub(crate) enum Endpoint {
    /// A child process speaking MCP over its stdin and stdout.
    Command {
        program: OsString,
        args: Vec<OsString>,
        env: Vec<(OsString, OsString)>,
        /// The values given with [`RemoteServer::secret_env`], as the server would quote them,
        /// and with [`RemoteServer::secret`].
        secrets: Vec<String>,
        current_dir: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// The values given with [`RemoteServer::secret`].
        secrets: Vec<String>,
    },
}

/// An MCP server to connect to, and how far the bridge trusts it: which of its tools the host
/// takes, under which names, with which hints, and the bounds on everything it sends back.
///
/// The defaults are conservative: every remote tool is taken under its own name, calls time out
/// after 60 seconds without progress and after 10 minutes in any case, a result is at most
/// 1 MiB of JSON, a schema at most 64 KiB, a description at most 4 KiB, and a server at most
/// 1,000 tools.
///
/// ```
/// use std::time::Duration;
/// use prism::mcp::RemoteServer;
/// use prism::registry::ToolFilter;
///
/// let time = RemoteServer::command("time", "python3")
///     .args(["-m", "mcp_server_time", "--local-timezone", "UTC"])
///     .prefixed(true) // tools become `time__get_current_time`, …
///     .filter(ToolFilter::deny(["convert_time"]))
///     .call_timeout(Duration::from_secs(20));
/// assert_eq!(time.name(), "time");
/// ```
#[derive(Clone, Debug)]
pub struct RemoteServer {
    pub(crate) name: String,
    pub(crate) endpoint: Endpoint,
    pub(crate) prefixed: bool,
    pub(crate) filters: Vec<ToolFilter>,
    pub(crate) host_hints: BTreeMap<String, ToolAnnotations>,
    pub(crate) approval: Vec<String>,
    pub(crate) bounds: Bounds,
}

impl fmt::Debug for Endpoint {
    /// Without the credentials a host gives for the server (the URL's user, password and query,
    /// header values, environment values, the secrets it names): hosts print their
    /// configuration in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Command {
                program,
                args,
                env,
                secrets,
                current_dir,
            } => {
                let names: Vec<&OsString> = env.iter().map(|(name, _)| name).collect();
                // A named secret may be passed as an argument (`--token …`).
                let scrubber = SecretRedactor::new(secrets);
                let args: Vec<String> = args
                    .iter()
                    .map(|arg| scrubber.redact_str(&arg.to_string_lossy()).into_owned())
                    .collect();
                f.debug_struct("Command")
                    .field("program", program)
                    .field("args", &args)
                    .field("env", &names)
                    .field("current_dir", current_dir)
                    .finish()
            }
            Self::Http {
                url,
                headers,
                secrets,
            } => {
                let names: Vec<&str> = headers.iter().map(|(name, _)| name.as_str()).collect();
                // Also without the user, any header value the URL repeats, and a named secret
                // in its path.
                let url = endpoint_redactor(credentials(url, headers, secrets))
                    .redact_str(&shown_url(url))
                    .into_owned();
                f.debug_struct("Http")
                    .field("url", &url)
                    .field("headers", &names)
                    .finish()
            }
        }
    }
}

/// A redactor of the credentials of an HTTP endpoint at `url` sent `headers`: the URL's user
/// and password (also decoded, and as the basic authorization header made of them), its query and each value in it (as written and decoded), and each header's
/// value, with an `Authorization` value's credentials also on their own (a server that refuses
/// `Bearer sk-…` quotes `sk-…` as often as the whole value), and the secrets the host `named`.
fn credentials(url: &str, headers: &[(String, String)], named: &[String]) -> Vec<String> {
    let mut secrets: Vec<String> = named.to_vec();
    for (name, value) in headers {
        secrets.push(value.clone());
        let authorization = name.eq_ignore_ascii_case("authorization")
            || name.eq_ignore_ascii_case("proxy-authorization");
        if authorization {
            secrets.extend(authorization_credentials(value));
        }
    }
    if let Ok(parsed) = url::Url::parse(url) {
        secrets.push(parsed.username().to_owned());
        secrets.extend(parsed.password().map(str::to_owned));
        // The HTTP stack sends the user and password decoded, as a basic authorization header,
        // and a server quotes them back as it received them.
        if !parsed.username().is_empty() || parsed.password().is_some() {
            let user = percent_decoded(parsed.username());
            let password = parsed.password().map(percent_decoded);
            let pair = format!("{user}:{}", password.as_deref().unwrap_or_default());
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            secrets.extend(authorization_credentials(&format!("Basic {basic}")));
            secrets.push(user);
            secrets.extend(password);
        }
        if let Some(query) = parsed.query() {
            secrets.push(query.to_owned());
            let written = query.split('&').filter_map(|pair| pair.split_once('='));
            secrets.extend(written.map(|(_, value)| value.to_owned()));
            secrets.extend(parsed.query_pairs().map(|(_, value)| value.into_owned()));
        }
    }
    secrets
}

/// A redactor of an endpoint's `credentials` as given and as a server writes them into a URL
/// it builds: percent-encoded, the way common encoders do it (see [`percent_encoded_forms`]).
fn endpoint_redactor(credentials: Vec<String>) -> SecretRedactor {
    let encoded: Vec<String> = credentials
        .iter()
        .flat_map(|credential| percent_encoded_forms(credential))
        .collect();
    SecretRedactor::new(credentials.into_iter().chain(encoded))
}

/// Every byte but RFC 3986's unreserved characters escaped.
const UNRESERVED_KEPT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// As [`UNRESERVED_KEPT`], `/` kept too: a path's encoders.
const PATH_KEPT: &AsciiSet = &UNRESERVED_KEPT.remove(b'/');

/// As [`UNRESERVED_KEPT`], `!*'()` kept too: JavaScript's `encodeURIComponent`.
const COMPONENT_KEPT: &AsciiSet = &UNRESERVED_KEPT
    .remove(b'!')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// The percent-encoded forms of `secret` that differ from it, as the common encoders write it:
/// every byte outside RFC 3986's unreserved characters escaped (in upper and lower case hex),
/// `/` kept (a path's encoders), `!*'()` kept (JavaScript's `encodeURIComponent`), and the
/// form encodings, with a space as `+` (`~` kept, or `*` kept and `~` escaped).
fn percent_encoded_forms(secret: &str) -> Vec<String> {
    let escaped = |kept| utf8_percent_encode(secret, kept).to_string();
    let strict = escaped(UNRESERVED_KEPT);
    let mut forms = vec![
        lower_case_escapes(&strict),
        escaped(PATH_KEPT),
        escaped(COMPONENT_KEPT),
        // A literal `%20` was escaped as `%2520`: only a space reads `%20` here.
        strict.replace("%20", "+"),
        url::form_urlencoded::byte_serialize(secret.as_bytes()).collect(),
        strict,
    ];
    forms.retain(|form| form != secret);
    forms.sort_unstable();
    forms.dedup();
    forms
}

/// `escaped` with the two hex digits of each `%XX` escape in lower case.
fn lower_case_escapes(escaped: &str) -> String {
    let mut parts = escaped.split('%');
    let mut lowered = parts.next().unwrap_or_default().to_owned();
    for part in parts {
        let digits = part.len().min(2);
        lowered.push('%');
        lowered.push_str(&part[..digits].to_ascii_lowercase());
        lowered.push_str(&part[digits..]);
    }
    lowered
}

/// `text` with its `%XX` escapes decoded, as the HTTP stack decodes a URL's user and password
/// (a malformed escape stays as it is).
fn percent_decoded(text: &str) -> String {
    percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// The shortest credential a remote tool is refused for holding in its name or where its schema
/// checks values.
const REFUSED_CREDENTIAL_BYTES: usize = 8;

/// The longest any wait of the bridge may be: a longer one would mean never, and a hung server
/// must end in an error.
const LONGEST_WAIT: Duration = Duration::from_secs(24 * 60 * 60);

/// The numbers [`RemoteServer`] keeps; see its setters.
#[derive(Clone, Debug)]
pub(crate) struct Bounds {
    pub(crate) connect_timeout: Duration,
    pub(crate) list_timeout: Duration,
    pub(crate) call_timeout: Duration,
    pub(crate) max_call_timeout: Duration,
    pub(crate) max_result_bytes: usize,
    pub(crate) max_schema_bytes: usize,
    pub(crate) max_description_bytes: usize,
    pub(crate) max_tools: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(30),
            list_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            max_call_timeout: Duration::from_secs(600),
            max_result_bytes: 1024 * 1024,
            max_schema_bytes: 64 * 1024,
            max_description_bytes: 4 * 1024,
            max_tools: 1000,
        }
    }
}

impl Bounds {
    /// The most the transport accepts in one message: a result at its bound, with room for the
    /// envelope and JSON escaping.
    pub(crate) fn max_message_bytes(&self) -> usize {
        self.max_result_bytes
            .saturating_mul(2)
            .max(self.max_schema_bytes.saturating_mul(4))
            .saturating_add(64 * 1024)
    }
}

impl RemoteServer {
    /// A server started as a child process, `program` with no arguments yet, speaking MCP over
    /// its standard input and output. `name` names the server in errors and, with
    /// [`prefixed`](Self::prefixed), in its tools' names. The child gets only the environment
    /// given with [`env`](Self::env) beside `PATH`, `HOME` and the locale (a server should not
    /// see the host's secrets by accident), and is killed when the client is closed or dropped.
    pub fn command(name: impl Into<String>, program: impl Into<OsString>) -> Self {
        Self::new(
            name,
            Endpoint::Command {
                program: program.into(),
                args: Vec::new(),
                env: Vec::new(),
                secrets: Vec::new(),
                current_dir: None,
            },
        )
    }

    /// A server at a streamable HTTP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    ///
    /// The bridge takes the credentials it can tell apart out of everything the server sends
    /// back: the URL's user, password and query values, and the values of the
    /// [`header`](Self::header)s. A credential in the URL's path (`…/s/<token>/mcp`, as hosted
    /// servers often authenticate) looks like any other segment: name it with
    /// [`secret`](Self::secret). The bridge's own errors quote the URL as its scheme, host and
    /// port only.
    ///
    /// ```
    /// use prism::mcp::RemoteServer;
    ///
    /// let hosted = RemoteServer::http("hosted", "https://mcp.example.com/s/tok-81f2c9/mcp")
    ///     .secret("tok-81f2c9");
    /// assert!(!format!("{hosted:?}").contains("tok-81f2c9"));
    /// ```
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(
            name,
            Endpoint::Http {
                url: url.into(),
                headers: Vec::new(),
                secrets: Vec::new(),
            },
        )
    }

    fn new(name: impl Into<String>, endpoint: Endpoint) -> Self {
        Self {
            name: name.into(),
            endpoint,
            prefixed: false,
            filters: Vec::new(),
            host_hints: BTreeMap::new(),
            approval: Vec::new(),
            bounds: Bounds::default(),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Adds an argument to the command (no effect on an HTTP server).
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        if let Endpoint::Command { args, .. } = &mut self.endpoint {
            args.push(arg.into());
        }
        self
    }

    /// Adds arguments to the command (no effect on an HTTP server).
    pub fn args<I, S>(mut self, new: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        if let Endpoint::Command { args, .. } = &mut self.endpoint {
            args.extend(new.into_iter().map(Into::into));
        }
        self
    }

    /// Sets an environment variable of the child process (no effect on an HTTP server). For a
    /// credential, use [`secret_env`](Self::secret_env).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let Endpoint::Command { env, .. } = &mut self.endpoint {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// Sets an environment variable of the child process whose value is a credential (an API
    /// key, a token), and takes that value out of everything the server sends back (results,
    /// errors, progress) and of its standard error in the host's log, as the bridge does with an
    /// HTTP endpoint's header values. No effect on an HTTP server.
    ///
    /// ```
    /// use prism::mcp::RemoteServer;
    ///
    /// let github = RemoteServer::command("github", "github-mcp-server")
    ///     .arg("stdio")
    ///     .secret_env("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_example")
    ///     .env("GITHUB_TOOLSETS", "repos,issues");
    /// assert!(!format!("{github:?}").contains("ghp_example"));
    /// ```
    pub fn secret_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let Endpoint::Command { env, secrets, .. } = &mut self.endpoint {
            let value = value.into();
            secrets.push(value.to_string_lossy().into_owned());
            env.push((key.into(), value));
        }
        self
    }

    /// Names a credential of the server the bridge cannot tell apart by itself, such as a token
    /// in the URL's path or one passed as an argument of the command. Like the credentials it
    /// finds, it is taken out of everything the server sends back (results, errors, progress,
    /// tool descriptions, its standard error in the host's log), of the bridge's errors and of
    /// the server as `{:?}` prints it, also in the escaped forms the
    /// [`SecretRedactor`](crate::redact::SecretRedactor) finds. Each call names one more; an
    /// empty value names none.
    ///
    /// ```
    /// use prism::mcp::RemoteServer;
    ///
    /// let search = RemoteServer::command("search", "search-mcp")
    ///     .args(["--api-key", "sk-live-4e1f"])
    ///     .secret("sk-live-4e1f");
    /// assert!(!format!("{search:?}").contains("sk-live-4e1f"));
    /// ```
    pub fn secret(mut self, value: impl Into<String>) -> Self {
        let value = value.into();
        match &mut self.endpoint {
            Endpoint::Command { secrets, .. } | Endpoint::Http { secrets, .. } => {
                secrets.push(value);
            }
        }
        self
    }

    /// Sets the child process's working directory (no effect on an HTTP server).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Endpoint::Command { current_dir, .. } = &mut self.endpoint {
            *current_dir = Some(dir.into());
        }
        self
    }

    /// Adds an HTTP header sent with every request, e.g. `Authorization` (no effect on a child
    /// process).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Endpoint::Http { headers, .. } = &mut self.endpoint {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Names the tools `{server}__{tool}`, so that two servers' tools (or a server's and the
    /// host's own) cannot collide. Connecting then refuses a server name that could make two
    /// servers' names meet ([`McpClientError::Name`](super::McpClientError::Name)).
    pub fn prefixed(mut self, prefixed: bool) -> Self {
        self.prefixed = prefixed;
        self
    }

    /// `text` (an error of the HTTP stack or the SDK, which quote the endpoint's URL whole) with
    /// the URL cut to its origin (see [`origin_quoted`](Self::origin_quoted)) and the endpoint's
    /// credentials taken out (see [`scrubber`](Self::scrubber)).
    pub(crate) fn scrub(&self, text: &str) -> String {
        self.scrub_with(&self.scrubber(), text)
    }

    /// [`scrub`](Self::scrub) with `scrubber` (the endpoint's credentials, maybe with more).
    /// The HTTP stack and the SDK quote only the first bytes of an answer they cannot use: a
    /// credential split where they cut is taken out too (the beginning of one that ends the
    /// text).
    pub(crate) fn scrub_with(&self, scrubber: &SecretRedactor, text: &str) -> String {
        scrubber
            .redact_cut_str(&self.origin_quoted(text))
            .into_owned()
    }

    /// An HTTP endpoint's scheme, host and port (`http://127.0.0.1:8080`): what the bridge's
    /// messages quote of its URL, enough to say which server failed.
    pub(crate) fn origin(&self) -> Option<String> {
        let Endpoint::Http { url, .. } = &self.endpoint else {
            return None;
        };
        origin_of(&url::Url::parse(url).ok()?)
    }

    /// `text` with every quote of the endpoint's URL (as given, as the HTTP stack writes it,
    /// with or without its user and password) cut to its scheme, host and port: enough to say
    /// which server failed, and nothing of a path or query that may hold a credential no one
    /// named.
    fn origin_quoted<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Endpoint::Http { url, .. } = &self.endpoint else {
            return Cow::Borrowed(text);
        };
        let Ok(parsed) = url::Url::parse(url) else {
            return Cow::Borrowed(text);
        };
        let Some(origin) = origin_of(&parsed) else {
            return Cow::Borrowed(text);
        };
        let mut bare = parsed.clone();
        let _ = bare.set_username("");
        let _ = bare.set_password(None);
        let mut quotes = vec![url.clone(), parsed.to_string(), bare.to_string()];
        // The longest first, so no quote is cut only in part by a shorter one it starts with.
        quotes.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        quotes.dedup();
        let mut quoted = Cow::Borrowed(text);
        for quote in quotes.iter().filter(|quote| **quote != origin) {
            if quoted.contains(quote.as_str()) {
                quoted = Cow::Owned(quoted.replace(quote.as_str(), &origin));
            }
        }
        quoted
    }

    /// A redactor of the endpoint's credentials, which the host's redactor may not know: the
    /// URL's user and password (as written, decoded, and as the basic authorization header the
    /// HTTP stack sends for them), its query and each value in it (as written and decoded), and the
    /// values of the headers given for it, and an authorization header's credentials without
    /// their scheme (a basic one's also decoded, and its password alone); for a child process,
    /// the values given with [`secret_env`](Self::secret_env); for both, those named with
    /// [`secret`](Self::secret). A server may quote any of them back, also percent-encoded
    /// (in a URL it built of them).
    pub(crate) fn scrubber(&self) -> SecretRedactor {
        endpoint_redactor(self.credentials())
    }

    /// A redactor of the endpoint's credentials of [`REFUSED_CREDENTIAL_BYTES`] or more, which
    /// a remote tool may not hold in its name or where its schema checks values, since they
    /// cannot be taken out of those (see [`scrubber`](Self::scrubber)): a shorter one, such as
    /// a query value `format=json` or a user `me`, is as likely an ordinary part of a name or
    /// an `enum`.
    pub(crate) fn refusal_scrubber(&self) -> SecretRedactor {
        let mut credentials = self.credentials();
        credentials.retain(|credential| credential.len() >= REFUSED_CREDENTIAL_BYTES);
        endpoint_redactor(credentials)
    }

    /// The endpoint's credentials, as given (see [`scrubber`](Self::scrubber)).
    fn credentials(&self) -> Vec<String> {
        match &self.endpoint {
            Endpoint::Http {
                url,
                headers,
                secrets,
            } => credentials(url, headers, secrets),
            Endpoint::Command { secrets, .. } => secrets.clone(),
        }
    }

    /// Refuses a name that cannot prefix tools unambiguously: a tool name itself, with no `__`
    /// in it and no `_` at its end, so the first `__` of `{server}__{tool}` is always the one
    /// after the server's name.
    pub(crate) fn check_prefix(&self) -> Result<(), super::McpClientError> {
        let name = &self.name;
        let valid = !self.prefixed
            || (crate::mcp::tool_name::check_name(name).is_ok()
                && !name.contains("__")
                && !name.ends_with('_'));
        if valid {
            Ok(())
        } else {
            Err(super::McpClientError::Name {
                server: name.clone(),
            })
        }
    }

    /// Takes only the remote tools this filter allows, by their remote names (before any
    /// prefix). Several filters all apply. A tool left out is never listed as a definition, and
    /// a direct [`McpClient::call`](super::McpClient::call) or
    /// [`resume`](super::McpClient::resume) of it fails with code `tool_denied`: no call can
    /// reach it through the bridge.
    pub fn filter(mut self, filter: ToolFilter) -> Self {
        self.filters.push(filter);
        self
    }

    /// The hints the host vouches for on the remote tool `tool` (its remote name). Remote
    /// annotations are never taken as they are: without this, a remote tool is described as MCP
    /// says a tool is by default (possibly destructive, open world, not read-only, not
    /// idempotent), whatever the server claims.
    pub fn hints(mut self, tool: impl Into<String>, hints: ToolAnnotations) -> Self {
        self.host_hints.insert(tool.into(), hints);
        self
    }

    /// Requires an approval before every call of the remote tool `tool` (its remote name) in a
    /// run (see [`ToolDefinition::requires_approval`](crate::ToolDefinition::requires_approval)).
    pub fn requires_approval(mut self, tool: impl Into<String>) -> Self {
        self.approval.push(tool.into());
        self
    }

    /// How long connecting and the protocol handshake may take (at most a day, as every wait
    /// of the bridge: a dead server always ends in an error).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.bounds.connect_timeout = timeout.min(LONGEST_WAIT);
        self
    }

    /// How long listing the tools (every page) may take (at most a day).
    pub fn list_timeout(mut self, timeout: Duration) -> Self {
        self.bounds.list_timeout = timeout.min(LONGEST_WAIT);
        self
    }

    /// How long a call may go without a result or a progress notification; each progress
    /// notification starts the wait again, up to [`max_call_timeout`](Self::max_call_timeout).
    /// On a timeout the bridge sends the server a cancellation and the call fails with code
    /// `mcp_timeout`. Clamped to the maximum.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.bounds.call_timeout = timeout.min(LONGEST_WAIT);
        self
    }

    /// The hard maximum of a call, progress or not (at most a day).
    pub fn max_call_timeout(mut self, timeout: Duration) -> Self {
        self.bounds.max_call_timeout = timeout.min(LONGEST_WAIT);
        self
    }

    /// The most a call's result may weigh, as compact JSON of its content blocks and structured
    /// value; a larger one fails with code `output_too_large`. The transport refuses messages
    /// much larger than this before decoding them, never holding more than its bound of one:
    /// over HTTP, the call such a message answers fails with `output_too_large`; a child
    /// process's such message ends the session (which request it answers cannot be told before
    /// the end of it), so the calls waiting on it and the later ones fail at once with
    /// `mcp_connection_lost`, saying that the server sent a message over the bound (an answer
    /// to the handshake over it fails the connect, saying the same). Connect again to go on.
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.bounds.max_result_bytes = bytes;
        self
    }

    /// The most a remote tool's input or output schema may weigh, as compact JSON; a tool with
    /// a larger one is skipped (so is one whose output schema is over 4 MiB, the most the
    /// validator that checks results compiles).
    pub fn max_schema_bytes(mut self, bytes: usize) -> Self {
        self.bounds.max_schema_bytes = bytes;
        self
    }

    /// The most a remote tool's description may weigh; a longer one is cut at a character
    /// boundary and, when the bound leaves room for it, ends with a note of its whole length
    /// (the note counts toward the bound).
    pub fn max_description_bytes(mut self, bytes: usize) -> Self {
        self.bounds.max_description_bytes = bytes;
        self
    }

    /// The most tools the bridge takes from the server (pages are followed until then).
    pub fn max_tools(mut self, tools: usize) -> Self {
        self.bounds.max_tools = tools;
        self
    }

    /// The call timeout in force: the configured one, at most the hard maximum.
    pub(crate) fn effective_call_timeout(&self) -> Duration {
        self.bounds.call_timeout.min(self.bounds.max_call_timeout)
    }
}

/// `url`'s scheme, host and port, when it has a host.
fn origin_of(url: &url::Url) -> Option<String> {
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    })
}

/// The credentials of an authorization header's `value` as a server may quote them on their
/// own: the part after the scheme (`Bearer`, `Basic`…) and, for a basic one, the decoded
/// `user:password` and the password.
fn authorization_credentials(value: &str) -> Vec<String> {
    let Some((scheme, credentials)) = value.trim().split_once(char::is_whitespace) else {
        return Vec::new();
    };
    let credentials = credentials.trim();
    let mut found = vec![credentials.to_owned()];
    if scheme.eq_ignore_ascii_case("basic")
        && let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(credentials)
        && let Ok(pair) = String::from_utf8(decoded)
    {
        found.extend(
            pair.split_once(':')
                .map(|(_, password)| password.to_owned()),
        );
        found.push(pair);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::scripted_server::{completed, connected};
    use serde_json::json;

    use super::super::outcome::RemoteOutcome;
    use super::super::scripted_server::scripted_server;
    use crate::context::ToolExecutionContext;

    /// A server that quotes its token back: in a result when the tool is `show`, in an error
    /// otherwise.
    const QUOTING_CALLS: &str = r#"    *'"method":"tools/call"'*'"show"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"using %s"}]}}\n' "$id" "$API_TOKEN" ;;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"token %s refused"}],"isError":true}}\n' "$id" "$API_TOKEN" ;;"#;

    #[tokio::test]
    async fn a_secret_env_value_is_scrubbed_from_what_the_server_sends_back() {
        let token = "tok-9c1e7a4b2d6f80351";
        let server = scripted_server("quoting", QUOTING_CALLS)
            .secret_env("API_TOKEN", token)
            .env("REGION", "eu");
        assert!(!format!("{server:?}").contains(token));
        let client = connected(server).await;
        let ctx = ToolExecutionContext::new();
        let output = completed(&client, "show").await;
        let text = output.content()[0].as_text().unwrap();
        assert_eq!(text, "using [REDACTED]");
        let failed = client.call("fail", json!({}), &ctx).await.unwrap();
        let RemoteOutcome::Failed(message) = failed else {
            panic!("a failure: {failed:?}");
        };
        assert!(message.contains("token [REDACTED] refused"), "{message}");
        client.close().await;
    }

    /// A server that builds a URL of its token, percent-encoded as a query value, and quotes it:
    /// in a result when the tool is `show`, in an error otherwise.
    const ENCODING_CALLS: &str = r#"    *'"method":"tools/call"'*'"show"'*) key=$(printf '%s' "$API_TOKEN" | sed 's|/|%2F|g; s|+|%2B|g; s|=|%3D|g'); printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"fetched https://api.example.com/v1?key=%s"}]}}\n' "$id" "$key" ;;
    *'"method":"tools/call"'*) key=$(printf '%s' "$API_TOKEN" | sed 's|/|%2F|g; s|+|%2B|g; s|=|%3D|g'); printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"GET https://api.example.com/v1?key=%s: 401"}],"isError":true}}\n' "$id" "$key" ;;"#;

    /// A credential quoted percent-encoded, as a server writes it into a URL it built, is
    /// taken out like the credential as given.
    #[tokio::test]
    async fn a_percent_encoded_credential_is_scrubbed_from_what_the_server_sends_back() {
        let token = "tok/9c1e+7a4b2d6f8035=";
        let server = scripted_server("encoding", ENCODING_CALLS).secret_env("API_TOKEN", token);
        let client = connected(server).await;
        let output = completed(&client, "show").await;
        let text = output.content()[0].as_text().unwrap();
        assert_eq!(text, "fetched https://api.example.com/v1?key=[REDACTED]");
        let ctx = ToolExecutionContext::new();
        let failed = client.call("fail", json!({}), &ctx).await.unwrap();
        let RemoteOutcome::Failed(message) = failed else {
            panic!("a failure: {failed:?}");
        };
        assert!(message.contains("key=[REDACTED]: 401"), "{message}");
        assert!(!message.contains("9c1e"), "{message}");
        client.close().await;
    }

    /// A server that answers every call, whatever the tool.
    const ANSWERING_CALLS: &str = r#"    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}\n' "$id" ;;"#;

    /// A tool the host's filter leaves out is never called through the bridge, not even by a
    /// direct call or a resumed one (a host may pass on a name a model chose): the call is
    /// refused before anything is sent.
    #[tokio::test]
    async fn a_tool_the_filter_leaves_out_cannot_be_called_directly() {
        use crate::filter::ToolFilter;

        let server =
            scripted_server("filtered", ANSWERING_CALLS).filter(ToolFilter::deny(["delete_repo"]));
        let client = connected(server).await;
        let ctx = ToolExecutionContext::new();
        let refused = client.call("delete_repo", json!({}), &ctx).await;
        let Err(error) = refused else {
            panic!("a refusal: {refused:?}");
        };
        assert_eq!(error.code().as_str(), "tool_denied", "{error:?}");
        let asked = super::super::outcome::InputRequired {
            server: "filtered".to_owned(),
            tool: "delete_repo".to_owned(),
            requests: Vec::new(),
            request_state: None,
        };
        let resumed = client
            .resume(&asked, json!({}), Default::default(), &ctx)
            .await;
        assert!(resumed.is_err(), "{resumed:?}");
        // An allowed tool is called as before.
        let output = completed(&client, "list_repos").await;
        assert_eq!(output.content()[0].as_text(), Some("done"));
        client.close().await;
    }

    /// A server that names itself after the token it was started with.
    const SELF_NAMING: &str = r#"    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"acme %s","version":"1.0-%s"}}}\n' "$id" "$API_TOKEN" "$API_TOKEN" ;;"#;

    /// The name and version a server reports are its text, and the host may show them: they
    /// never carry the endpoint's credentials.
    #[tokio::test]
    async fn the_servers_name_and_version_never_carry_a_credential() {
        let token = "tok-3b9e1d7c5a2f8046";
        let server = scripted_server("naming", SELF_NAMING).secret_env("API_TOKEN", token);
        let client = connected(server).await;
        let (name, version) = client.server_info().expect("the server said who it is");
        assert_eq!(name, "acme [REDACTED]");
        assert_eq!(version, "1.0-[REDACTED]");
        client.close().await;
    }
}
