//! [`Limits`]: bounds on what a call may carry in and out.
//!
//! Arguments over a bound are refused (`invalid_arguments`) before any guard inspects them, so a
//! hostile model cannot make validators or guardrails walk a gigabyte of JSON. Outputs over a
//! bound become a `output_too_large` error instead of reaching the transcript (content blocks
//! count toward the output's bytes with their JSON, base64 data included), and progress values
//! over the depth bound are refused ([`ToolExecutionContext::progress`] returns `false`).
//!
//! An output is held to its bounds as the tool returned it, and again once secrets are redacted
//! from it when redaction replaced any: a secret shorter than the marker replacing it lengthens
//! the output, and results, events, rows and effect stores only ever carry outputs within the
//! bounds.
//!
//! Every depth bound is at most [`Limits::MAX_DEPTH`]: whatever the dispatcher lets through is
//! written to ledgers and effect stores as JSON, and must read back (serde_json reads at most 128
//! levels) and be walked on a small stack.
//!
//! [`ToolExecutionContext::progress`]: crate::ToolExecutionContext::progress

use serde_json::Value;

use crate::call::ContentBlock;

/// Byte and depth bounds, checked by the dispatcher on every call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted arguments, in bytes of compact JSON. Default 1 MiB.
    pub max_argument_bytes: usize,
    /// Deepest accepted nesting of arrays and objects in the arguments. Default 64; at most
    /// [`MAX_DEPTH`](Self::MAX_DEPTH).
    pub max_argument_depth: usize,
    /// Largest accepted output, in bytes of compact JSON: the value and the content blocks
    /// together, each block as the JSON it is sent as (an image's base64 data included).
    /// Default 4 MiB.
    pub max_output_bytes: usize,
    /// Deepest accepted nesting of arrays and objects in an output, a progress value or its
    /// metadata. Default, and at most, [`MAX_DEPTH`](Self::MAX_DEPTH).
    pub max_output_depth: usize,
    /// How many progress updates may wait between a running tool and the observers. Past it,
    /// [`progress`](crate::ToolExecutionContext::progress) returns `false` and the update is
    /// dropped (a tool is never slowed down by a slow observer); the call's terminal event and
    /// row count what was dropped (`progress_dropped`). Default 64.
    pub progress_capacity: usize,
}

impl Limits {
    /// The deepest nesting any depth bound allows: a value this deep, inside a ledger row or a
    /// recorded effect outcome, still reads back through serde_json's recursion limit (128).
    /// Deeper settings are lowered to it when given to the dispatcher.
    pub const MAX_DEPTH: usize = 100;

    /// These limits with every depth bound lowered to at most [`MAX_DEPTH`](Self::MAX_DEPTH).
    pub(crate) fn capped(self) -> Self {
        Self {
            max_argument_depth: self.max_argument_depth.min(Self::MAX_DEPTH),
            max_output_depth: self.max_output_depth.min(Self::MAX_DEPTH),
            ..self
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_argument_bytes: 1024 * 1024,
            max_argument_depth: 64,
            max_output_bytes: 4 * 1024 * 1024,
            max_output_depth: Self::MAX_DEPTH,
            progress_capacity: 64,
        }
    }
}

/// Which bound a value broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exceeded {
    Bytes,
    Depth,
}

/// Checks `value` against `max_bytes` and `max_depth`. The byte count is exactly the length of
/// the compact JSON serde_json writes for `value` (escapes, separators and number digits
/// included), so a bound means the same thing as the text a model sent. Both walks recurse once
/// per level, never past `max_depth`, which is therefore a capped bound ([`Limits::MAX_DEPTH`]).
///
/// Almost every value is far under its byte bound, so a first walk only adds up what each node
/// could take at most (every string byte escaped, every number at its widest) and checks depth;
/// it never reads string contents. Only a value whose estimate is over the bound is measured
/// exactly, by a second walk that stops as soon as it is over. Both walks are linear in the size
/// of a value that is already in memory.
#[inline]
pub(crate) fn check_value(
    value: &Value,
    max_bytes: usize,
    max_depth: usize,
) -> Result<(), Exceeded> {
    let mut widest = Widest::default();
    match value {
        Value::Array(_) | Value::Object(_) => {
            if widest.add(value, max_depth).is_none() {
                return Err(Exceeded::Depth);
            }
        }
        // A scalar (a tool's typical output) is settled here, without a walk.
        scalar => widest.add_scalar(scalar),
    }
    widest.settle(value, max_bytes, max_depth)
}

/// Checks a tool's output: its content blocks take the length of their compact JSON (an array of
/// blocks) out of `max_bytes`, and the value must fit what is left. Blocks nest no deeper than
/// their fixed shape, so only the value's depth is checked.
#[inline]
pub(crate) fn check_output(
    value: &Value,
    content: &[ContentBlock],
    max_bytes: usize,
    max_depth: usize,
) -> Result<(), Exceeded> {
    if content.is_empty() {
        return check_value(value, max_bytes, max_depth);
    }
    check_output_with_content(value, content, max_bytes, max_depth)
}

/// [`check_output`] for an output with content blocks, kept out of line: most outputs have none.
#[cold]
#[inline(never)]
fn check_output_with_content(
    value: &Value,
    content: &[ContentBlock],
    max_bytes: usize,
    max_depth: usize,
) -> Result<(), Exceeded> {
    let mut counted = Counted {
        bytes: 0,
        max_bytes,
    };
    // The only error a counting writer returns is "over the bound".
    if serde_json::to_writer(&mut counted, content).is_err() {
        return Err(Exceeded::Bytes);
    }
    check_value(value, max_bytes - counted.bytes, max_depth)
}

/// A writer that only counts, and fails as soon as the count passes `max_bytes`.
struct Counted {
    bytes: usize,
    max_bytes: usize,
}

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes = self.bytes.saturating_add(buf.len());
        if self.bytes > self.max_bytes {
            return Err(std::io::Error::other("over the bound"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Drops `value` one container at a time. serde_json's own destructor recurses once per level,
/// which a value refused for its depth could have enough of to overflow the stack.
#[cold]
pub(crate) fn drop_deep(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, item)| item)),
            _ => {}
        }
    }
}

/// The exact count alone, for a value whose upper bound was over `max_bytes`; stops as soon as
/// it is over.
fn check_exactly(value: &Value, max_bytes: usize, max_depth: usize) -> Result<(), Exceeded> {
    let mut bytes = 0usize;
    walk(value, 0, max_depth, max_bytes, &mut bytes)
}

/// The widest number serde_json writes: `-9223372036854775808` is 20 bytes, the longest `f64`
/// (`-2.2250738585072014e-308`) 24.
const MAX_NUMBER_LEN: usize = 24;

/// The most bytes a value can take as compact JSON, as two sums: string bytes, which escaping
/// can grow sixfold (`\u001f`), and every other byte. Both are bounded by the size of a value
/// already in memory, so the walk only adds.
#[derive(Default)]
pub(crate) struct Widest {
    text: usize,
    other: usize,
}

impl Widest {
    /// Whether `value`, the value this bound was added up over, fits `max_bytes`: the bound
    /// settles most values at once, and only one whose bound is over is counted exactly.
    #[inline]
    pub(crate) fn settle(
        &self,
        value: &Value,
        max_bytes: usize,
        max_depth: usize,
    ) -> Result<(), Exceeded> {
        if self.total() <= max_bytes {
            Ok(())
        } else {
            check_exactly(value, max_bytes, max_depth)
        }
    }

    /// The bound: every text byte as its widest escape (six bytes), plus everything else.
    fn total(&self) -> usize {
        self.text.saturating_mul(6).saturating_add(self.other)
    }

    /// Adds `value`; `None` when it nests more than `depth_left` containers deep.
    fn add(&mut self, value: &Value, depth_left: usize) -> Option<()> {
        match value {
            Value::Array(items) => {
                let depth_left = depth_left.checked_sub(1)?;
                self.add_container(value);
                for item in items {
                    self.add_item(item, depth_left)?;
                }
            }
            Value::Object(map) => {
                let depth_left = depth_left.checked_sub(1)?;
                self.add_container(value);
                for (key, item) in map {
                    self.add_key(key);
                    self.add_item(item, depth_left)?;
                }
            }
            scalar => self.add_scalar(scalar),
        }
        Some(())
    }

    /// Scalars are added in the loops rather than by a call each: arguments are mostly flat.
    #[inline(always)]
    fn add_item(&mut self, item: &Value, depth_left: usize) -> Option<()> {
        match item {
            Value::Array(_) | Value::Object(_) => self.add(item, depth_left),
            scalar => {
                self.add_scalar(scalar);
                Some(())
            }
        }
    }

    /// Adds a container's own brackets or braces and a comma per item; per object entry also the
    /// key's quotes and colon (not the items themselves).
    pub(crate) fn add_container(&mut self, value: &Value) {
        match value {
            Value::Array(items) => self.other += 2 + items.len(),
            Value::Object(map) => self.other += 2 + 4 * map.len(),
            _ => {}
        }
    }

    /// Adds an object key (its quotes and colon are the object's).
    pub(crate) fn add_key(&mut self, key: &str) {
        self.text += key.len();
    }

    #[inline(always)]
    pub(crate) fn add_scalar(&mut self, scalar: &Value) {
        match scalar {
            Value::Null | Value::Bool(_) => self.other += 5,
            Value::Number(_) => self.other += MAX_NUMBER_LEN,
            Value::String(text) => {
                self.text += text.len();
                self.other += 2;
            }
            Value::Array(_) | Value::Object(_) => {}
        }
    }
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
        Value::Number(number) => number_len(number),
        Value::String(text) => string_len(text),
        // Brackets, plus a comma between items.
        Value::Array(items) => 2 + items.len().saturating_sub(1),
        Value::Object(map) => 2 + map.len().saturating_sub(1),
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
                // The quoted key and its colon.
                *bytes = bytes.saturating_add(string_len(key) + 1);
                walk(item, depth + 1, max_depth, max_bytes, bytes)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The length of `text` as a JSON string: its quotes, two bytes for a quote, a backslash or a
/// control character with a short escape (`\n`, …), and six for any other control character
/// (`\u001f`).
fn string_len(text: &str) -> usize {
    let needs_escape = |byte: &u8| *byte < 0x20 || *byte == b'"' || *byte == b'\\';
    let escaped = text.bytes().filter(needs_escape).count();
    let mut len = text.len() + 2 + escaped;
    if escaped > 0 {
        let long_form =
            |byte: &u8| *byte < 0x20 && !matches!(byte, b'\n' | b'\r' | b'\t' | 0x08 | 0x0c);
        len += 4 * text.bytes().filter(long_form).count();
    }
    len
}

/// The length of `number` as serde_json writes it; integers without formatting them.
fn number_len(number: &serde_json::Number) -> usize {
    let digits = |n: u64| n.checked_ilog10().map_or(1, |log| log as usize + 1);
    if let Some(n) = number.as_u64() {
        digits(n)
    } else if let Some(n) = number.as_i64() {
        1 + digits(n.unsigned_abs())
    } else {
        struct Count(usize);
        impl std::fmt::Write for Count {
            fn write_str(&mut self, text: &str) -> std::fmt::Result {
                self.0 += text.len();
                Ok(())
            }
        }
        let mut count = Count(0);
        // Writing to a counter cannot fail.
        let _ = std::fmt::write(&mut count, format_args!("{number}"));
        count.0
    }
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
    fn bytes_match_compact_json_exactly() {
        for value in [
            json!({"a": [1, -20, 3.5e-7, u64::MAX, i64::MIN, null, true, false]}),
            json!({"quote\"d": "tab\t\u{1}\\ é😀", "empty": {}, "list": []}),
        ] {
            let len = serde_json::to_string(&value).unwrap().len();
            assert_eq!(check_value(&value, len, 8), Ok(()));
            assert_eq!(check_value(&value, len - 1, 8), Err(Exceeded::Bytes));
        }
    }

    #[test]
    fn the_estimate_settles_small_values_and_defers_to_the_exact_count() {
        // Far under the bound: settled by the estimate, depth still enforced.
        let value = json!({"text": "\u{1}".repeat(10), "n": [i64::MIN]});
        assert_eq!(check_value(&value, 1 << 20, 2), Ok(()));
        assert_eq!(check_value(&value, 1 << 20, 1), Err(Exceeded::Depth));
        // The estimate (every byte escaped) is over this bound, the exact length is not.
        let plain = json!({"text": "x".repeat(100)});
        let exact = serde_json::to_string(&plain).unwrap().len();
        assert_eq!(check_value(&plain, exact, 8), Ok(()));
        assert_eq!(check_value(&plain, exact - 1, 8), Err(Exceeded::Bytes));
    }

    #[test]
    fn bytes_track_string_content() {
        let value = json!({"text": "x".repeat(100)});
        assert_eq!(check_value(&value, 200, 8), Ok(()));
        assert_eq!(check_value(&value, 100, 8), Err(Exceeded::Bytes));
    }
}
