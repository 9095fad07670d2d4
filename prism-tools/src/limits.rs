//! [`Limits`]: bounds on what a call may carry in and out.
//!
//! Arguments over a bound are refused (`invalid_arguments`) before any guard inspects them, so a
//! hostile model cannot make validators or guardrails walk a gigabyte of JSON. Outputs over a
//! bound become a `output_too_large` error instead of reaching the transcript.

use serde_json::Value;

/// Byte and depth bounds, checked by the dispatcher on every call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted arguments, in bytes of compact JSON. Default 1 MiB.
    pub max_argument_bytes: usize,
    /// Deepest accepted nesting of arrays and objects in the arguments. Default 64.
    pub max_argument_depth: usize,
    /// Largest accepted output, in bytes of compact JSON. Default 4 MiB.
    pub max_output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_argument_bytes: 1024 * 1024,
            max_argument_depth: 64,
            max_output_bytes: 4 * 1024 * 1024,
        }
    }
}

/// Which bound a value broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exceeded {
    Bytes,
    Depth,
}

/// Walks `value` once, stopping as soon as it is over `max_bytes` or `max_depth`. The byte count
/// is the length of compact JSON, with strings counted by their UTF-8 length plus quotes (escapes
/// are not expanded, so the count never exceeds the real length by much and never undercounts
/// content).
pub(crate) fn check_value(
    value: &Value,
    max_bytes: usize,
    max_depth: usize,
) -> Result<(), Exceeded> {
    let mut bytes = 0usize;
    walk(value, 0, max_depth, max_bytes, &mut bytes)
}

fn walk(
    value: &Value,
    depth: usize,
    max_depth: usize,
    max_bytes: usize,
    bytes: &mut usize,
) -> Result<(), Exceeded> {
    *bytes = bytes.saturating_add(match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        // Numbers are at most 24 bytes in compact JSON; counting a fixed small cost keeps the
        // walk cheap without formatting.
        Value::Number(_) => 8,
        Value::String(text) => text.len() + 2,
        Value::Array(items) => 2 + items.len(),
        Value::Object(map) => 2 + map.len(),
    });
    if *bytes > max_bytes {
        return Err(Exceeded::Bytes);
    }
    match value {
        Value::Array(items) => {
            if depth + 1 > max_depth {
                return Err(Exceeded::Depth);
            }
            for item in items {
                walk(item, depth + 1, max_depth, max_bytes, bytes)?;
            }
        }
        Value::Object(map) => {
            if depth + 1 > max_depth {
                return Err(Exceeded::Depth);
            }
            for (key, item) in map {
                *bytes = bytes.saturating_add(key.len() + 3);
                walk(item, depth + 1, max_depth, max_bytes, bytes)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn depth_counts_containers() {
        assert_eq!(check_value(&json!({"a": {"b": 1}}), 1000, 2), Ok(()));
        assert_eq!(
            check_value(&json!({"a": {"b": []}}), 1000, 2),
            Err(Exceeded::Depth)
        );
    }

    #[test]
    fn bytes_track_string_content() {
        let value = json!({"text": "x".repeat(100)});
        assert_eq!(check_value(&value, 200, 8), Ok(()));
        assert_eq!(check_value(&value, 100, 8), Err(Exceeded::Bytes));
    }
}
