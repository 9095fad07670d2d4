//! Telling libpq's keyword/value connection strings (`host=localhost dbname=prism user=me`) from
//! file paths, without reading their values: they may hold a password.

/// The keywords libpq knows (PostgreSQL 17's list). A string must use at least one of them to be
/// taken as a connection string, so a file name such as `a=b.db` stays a file name.
const KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "requiressl",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
];

/// What a location string is, as far as the keyword/value form goes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Conninfo {
    /// Whole `key=value` pairs, one key at least a libpq keyword.
    Yes,
    /// Starts as one (a libpq keyword and `=`) but cannot be read, such as a quote left open.
    Unreadable,
    /// Something else: a file path.
    No,
}

/// Reads `text` as libpq does: `key = value` pairs apart by white space, a value either quoted
/// in `'…'` or running to the next white space, `\` escaping the next character in both.
pub(crate) fn classify(text: &str) -> Conninfo {
    match pairs(text) {
        Some(pairs) if pairs.iter().any(|(key, _)| KEYWORDS.contains(key)) => Conninfo::Yes,
        Some(_) => Conninfo::No,
        None => verdict_on_failure(text),
    }
}

/// The value of `key` as written (quotes and escapes kept), if `text` reads as pairs.
pub(crate) fn raw_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    pairs(text)?
        .into_iter()
        .find_map(|(name, value)| (name == key).then_some(value))
}

/// The `(key, value)` pairs of `text`, or `None` where it is not made of them.
fn pairs(text: &str) -> Option<Vec<(&str, &str)>> {
    let mut rest = text.trim_start();
    let mut pairs = Vec::new();
    while !rest.is_empty() {
        let (key, after) = pair_key(rest)?;
        let end = value_end(after)?;
        pairs.push((key, &after[..end]));
        rest = after[end..].trim_start();
    }
    Some(pairs)
}

/// A key and what follows its `=` (white space skipped), if `text` starts with one.
fn pair_key(text: &str) -> Option<(&str, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (key, after) = text.split_at(end);
    let after = after.trim_start().strip_prefix('=')?;
    (!key.is_empty()).then(|| (key, after.trim_start()))
}

/// Where the value at the start of `text` ends; `None` for a quote left open.
fn value_end(text: &str) -> Option<usize> {
    let quoted = text.starts_with('\'');
    let mut escaped = false;
    for (index, c) in text.char_indices().skip(usize::from(quoted)) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if quoted && c == '\'' {
            return Some(index + 1);
        } else if !quoted && c.is_whitespace() {
            return Some(index);
        }
    }
    (!quoted).then_some(text.len())
}

/// A string that failed to read is a connection string gone wrong when it began as one, with
/// a libpq keyword: taking it as a file name would create a file named after its password.
fn verdict_on_failure(text: &str) -> Conninfo {
    match pair_key(text.trim_start()) {
        Some((key, _)) if KEYWORDS.contains(&key) => Conninfo::Unreadable,
        _ => Conninfo::No,
    }
}
