//! [`Bm25`]: the default scorer, Okapi BM25 over the weighted fields of a [`ToolIndex`].
//!
//! BM25 rewards a tool for containing the query's words, more for rare words (inverse document
//! frequency, computed over the indexed snapshot, not over some outside corpus) and with
//! diminishing returns for repeats, and it evens out long and short descriptions. It is cheap,
//! needs no model, and is deterministic.
//!
//! The IDF is the always-positive form `ln(1 + (N - n + 0.5) / (n + 0.5))`, so a word found in
//! most tools still counts a little instead of counting against a tool. A word repeated in the
//! query counts once: queries are conversational, and "find a tool to find…" should not rank by
//! how often the user said "find".

use super::scorer::{ScoreError, ScoreRequest, ToolScorer};

/// Okapi BM25 with tunable saturation (`k1`) and length normalisation (`b`).
///
/// Values out of range are read within it, never refused, as [`FieldWeights`] and
/// [`SearchLimits`] are: a `k1` that is negative or not a number counts as 0, one above 1000
/// (infinity included) as 1000; a `b` that is negative or not a number counts as 0, one above 1
/// as 1. No setting can then make a score negative or undefined, which would hide tools or make
/// every turn disclose the whole input list.
///
/// [`FieldWeights`]: super::FieldWeights
/// [`SearchLimits`]: super::SearchLimits
///
/// ```
/// use prism::ToolDefinition;
/// use prism::search::{Bm25, SearchConfig};
/// use serde_json::Value;
///
/// let tool = |name: &str, description: &str| {
///     ToolDefinition::builder(name).description(description).run_sync(|_, _| Ok(Value::Null))
/// };
/// let tools = [
///     tool("forecast", "Weather forecasts for the next ten days."),
///     tool("stocks", "Share prices and market news."),
/// ];
/// let search = SearchConfig::default().with_scorer(Bm25::CLASSIC).index(&tools);
/// let results = search.search("Will it rain? Check the forecast", 4, &tools).unwrap();
/// assert_eq!(results.hits().len(), 1);
/// assert_eq!(results.hits()[0].tool.name(), "forecast");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bm25 {
    /// Term-frequency saturation, read within 0 to 1000. Default 2.0.
    pub k1: f32,
    /// Length normalisation, 0 (none) to 1 (full), read within that range. Default 0.2.
    pub b: f32,
}

impl Bm25 {
    /// The textbook parameters (`k1` 1.2, `b` 0.75), for comparison.
    pub const CLASSIC: Self = Self { k1: 1.2, b: 0.75 };
}

/// The defaults were tuned on half of the MetaTool queries. Tool documents are short, and a
/// repeated word (a name word that also appears in the description) is strong evidence, hence a
/// late saturation (`k1` 2). Length normalisation is mild (`b` 0.2): MetaTool scores best with
/// none, but real tools carry parameter text of very uneven length, and without it a tool with a
/// long schema would win on volume alone.
impl Default for Bm25 {
    fn default() -> Self {
        Self { k1: 2.0, b: 0.2 }
    }
}

/// The largest `k1` used. Past a few units term frequency already counts almost linearly, and
/// a bound keeps `k1 + 1` times a frequency finite.
const MAX_K1: f32 = 1000.0;

impl Bm25 {
    /// The parameters as scoring reads them (see the type's documentation).
    fn in_range(self) -> Self {
        let k1 = if self.k1 > 0.0 {
            self.k1.min(MAX_K1)
        } else {
            0.0
        };
        let b = if self.b > 0.0 { self.b.min(1.0) } else { 0.0 };
        Self { k1, b }
    }

    /// The inverse document frequency of a term found in `containing` of `total` tools.
    pub fn idf(total: usize, containing: usize) -> f32 {
        let (total, containing) = (total as f32, containing as f32);
        (1.0 + (total - containing + 0.5) / (containing + 0.5)).ln()
    }
}

impl ToolScorer for Bm25 {
    fn score(&self, request: &ScoreRequest<'_>, scores: &mut [f32]) -> Result<(), ScoreError> {
        let (index, query) = (request.index(), request.analysed());
        if scores.len() != index.len() {
            return Err(ScoreError::new(format!(
                "expected {} score slots, got {}",
                index.len(),
                scores.len()
            )));
        }
        let Self { k1, b } = self.in_range();
        let average = index.average_length().max(f32::MIN_POSITIVE);
        let mut seen = Vec::with_capacity(query.terms().len());
        for found in query.terms().iter().flat_map(|term| term.matches()) {
            if seen.contains(&found.term) {
                continue;
            }
            seen.push(found.term);
            let postings = index.postings(found.term);
            let idf = found.weight * Self::idf(index.len(), postings.len());
            for posting in postings {
                let length = index.document_length(posting.tool) / average;
                let norm = k1 * (1.0 - b + b * length);
                let tf = posting.frequency;
                scores[posting.tool as usize] += idf * tf * (k1 + 1.0) / (tf + norm);
            }
        }
        Ok(())
    }
}
