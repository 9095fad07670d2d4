//! A URL as configuration is shown (`Debug` output, log lines): hosts print their configuration,
//! and a URL may hold a password (basic authentication) or a token in its query.

use super::REDACTED;

/// `url` without its password and query, each replaced by the redaction marker; the whole URL
/// is the marker when it does not parse, since it cannot then be taken apart.
pub(crate) fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some(REDACTED));
            }
            if parsed.query().is_some() {
                parsed.set_query(Some(REDACTED));
            }
            parsed.to_string()
        }
        Err(_) => REDACTED.to_owned(),
    }
}
