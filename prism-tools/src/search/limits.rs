//! [`SearchLimits`]: the bounds of tool disclosure, each with a default and a hard cap.
//!
//! | limit | default | hard cap |
//! | --- | --- | --- |
//! | tools disclosed per turn (`top_k`) | [`DEFAULT_TOP_K`] (16) | [`MAX_TOP_K`] (64) |
//! | tools in one index | | [`MAX_INDEXED_TOOLS`] (1024); more discloses every tool |
//! | query bytes | [`DEFAULT_QUERY_BYTES`] (4096) | [`MAX_QUERY_BYTES`] (65536) |
//! | activated tools kept per session | | [`MAX_ACTIVATED_TOOLS`] (128), oldest evicted |
//!
//! Values over a hard cap are clamped, never refused: a host asking for 500 tools per turn gets
//! 64. Every bound keeps the cost of one turn's search and the size of one request predictable
//! whatever the host registered or the user typed.

/// Tools disclosed per turn unless configured otherwise.
pub const DEFAULT_TOP_K: usize = 16;
/// The most tools a turn (or one `search_tools` call) can disclose by score.
pub const MAX_TOP_K: usize = 64;
/// The most tools one index holds. A larger snapshot is disclosed in full, with a reason.
pub const MAX_INDEXED_TOOLS: usize = 1024;
/// Query bytes read unless configured otherwise.
pub const DEFAULT_QUERY_BYTES: usize = 4096;
/// The most query bytes that can ever be read.
pub const MAX_QUERY_BYTES: usize = 65536;
/// The most activated tool names a session keeps.
pub const MAX_ACTIVATED_TOOLS: usize = 128;
/// The most bytes of one field (a name, a description, one parameter's text) that are indexed,
/// so that one enormous description cannot make building the index slow.
pub const MAX_FIELD_BYTES: usize = 8192;

/// Per-turn bounds of search disclosure.
///
/// ```
/// use prism::search::{MAX_QUERY_BYTES, MAX_TOP_K, SearchLimits};
///
/// let limits = SearchLimits::default().with_top_k(500).with_max_query_bytes(1 << 20);
/// assert_eq!(limits.top_k(), MAX_TOP_K);
/// assert_eq!(limits.max_query_bytes(), MAX_QUERY_BYTES);
/// assert_eq!(SearchLimits::default().with_top_k(0).top_k(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchLimits {
    top_k: usize,
    max_query_bytes: usize,
}

impl SearchLimits {
    /// Sets how many tools a turn discloses by score, clamped to `1..=`[`MAX_TOP_K`]. At least
    /// one, so search mode always offers the model a ranked tool when one matches.
    pub fn with_top_k(mut self, top_k: usize) -> Self {
        self.top_k = top_k.clamp(1, MAX_TOP_K);
        self
    }

    /// Sets how many bytes of a query are read, clamped to `1..=`[`MAX_QUERY_BYTES`].
    pub fn with_max_query_bytes(mut self, bytes: usize) -> Self {
        self.max_query_bytes = bytes.clamp(1, MAX_QUERY_BYTES);
        self
    }

    /// Tools disclosed per turn by score.
    pub fn top_k(&self) -> usize {
        self.top_k
    }

    /// Query bytes read.
    pub fn max_query_bytes(&self) -> usize {
        self.max_query_bytes
    }

    /// Cuts `query` to [`max_query_bytes`](Self::max_query_bytes).
    pub fn cut_query<'q>(&self, query: &'q str) -> CutQuery<'q> {
        let (text, truncated) = cut_at_char_boundary(query, self.max_query_bytes);
        CutQuery { text, truncated }
    }
}

impl Default for SearchLimits {
    fn default() -> Self {
        Self {
            top_k: DEFAULT_TOP_K,
            max_query_bytes: DEFAULT_QUERY_BYTES,
        }
    }
}

/// A query after the byte limit, and whether anything was cut.
///
/// ```
/// use prism::search::SearchLimits;
///
/// let limits = SearchLimits::default().with_max_query_bytes(5);
/// let cut = limits.cut_query("météo");
/// assert_eq!((cut.text, cut.truncated), ("mét", true));
/// let whole = limits.cut_query("rain");
/// assert_eq!((whole.text, whole.truncated), ("rain", false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutQuery<'q> {
    /// The text that is searched: a prefix of the query, ending on a character boundary.
    pub text: &'q str,
    /// True when the query was longer than the limit.
    pub truncated: bool,
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut_at_char_boundary(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let end = (0..=max)
        .rev()
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(0);
    (&text[..end], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_never_split_a_character() {
        let text = "a€b"; // '€' is three bytes: 1..4
        assert_eq!(cut_at_char_boundary(text, 1), ("a", true));
        assert_eq!(cut_at_char_boundary(text, 2), ("a", true));
        assert_eq!(cut_at_char_boundary(text, 3), ("a", true));
        assert_eq!(cut_at_char_boundary(text, 4), ("a€", true));
        assert_eq!(cut_at_char_boundary(text, 5), ("a€b", false));
        assert_eq!(cut_at_char_boundary("€", 0), ("", true));
    }

    #[test]
    fn limits_clamp_to_their_caps() {
        let limits = SearchLimits::default();
        assert_eq!((limits.top_k(), limits.max_query_bytes()), (16, 4096));
        assert_eq!(limits.with_top_k(64).top_k(), 64);
        assert_eq!(limits.with_top_k(65).top_k(), 64);
        assert_eq!(limits.with_max_query_bytes(0).max_query_bytes(), 1);
        assert_eq!(
            limits.with_max_query_bytes(65_537).max_query_bytes(),
            65_536
        );
    }
}
