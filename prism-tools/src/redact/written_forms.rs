//! The forms a secret takes once a message has escaped it, so each can be searched for.

use serde_json::Value;

/// Every form in which a message may write `secret`, so that each is redacted: as is, as a JSON
/// pointer segment (`~` as `~0`, `/` as `~1`), inside a JSON string, and through Rust's `{:?}`
/// (which escapes quotes, backslashes, invisible and combining characters), the last two also
/// applied to the pointer form. Each escape works character by character, so a secret escaped
/// inside a longer text reads the same as escaped alone.
pub(super) fn written_forms(secret: &str) -> [String; 6] {
    let pointer = secret.replace('~', "~0").replace('/', "~1");
    let json = |text: &str| {
        let quoted = Value::from(text).to_string();
        quoted[1..quoted.len() - 1].to_owned()
    };
    let debug = |text: &str| {
        let quoted = format!("{text:?}");
        quoted[1..quoted.len() - 1].to_owned()
    };
    [
        secret.to_owned(),
        json(secret),
        debug(secret),
        json(&pointer),
        debug(&pointer),
        pointer,
    ]
}
