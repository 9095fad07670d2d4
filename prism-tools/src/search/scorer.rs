//! [`ToolScorer`]: how well each tool answers a query.
//!
//! The default is lexical ([`Bm25`](super::Bm25)) and needs no model. A host that has something
//! better (embeddings of its tools, say) implements this trait and hands it to
//! [`ToolSearch`](super::ToolSearch); [`BlendedScorer`] mixes several scorers, for instance BM25
//! with an embedding scorer, so lexical hits on exact names are not lost.
//!
//! A scorer only ranks. Which tools it may rank is decided before it runs (the snapshot, the
//! grant, the turn's narrowing) and is re-checked after it returns, so a scorer cannot widen what
//! a model sees. A scorer that fails, panics or returns a score that is not a finite number makes
//! the turn fall back to disclosing every tool of its input list: never zero tools, never more.

use std::fmt;
use std::sync::Arc;

use crate::definition::ToolDefinition;

use super::index::ToolIndex;
use super::query::Query;

/// Why a scorer could not score. Its message may reach an event, so keep secrets out of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreError {
    message: String,
}

impl ScoreError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ScoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScoreError {}

/// What a scorer is given: the tools of one snapshot, in order, and the query.
///
/// This is the whole view a scorer gets. The index's own term tables and postings stay inside
/// the crate, so the built-in scorers can change how they store words without breaking a host's
/// scorer.
#[derive(Clone, Copy, Debug)]
pub struct ScoreRequest<'a> {
    index: &'a ToolIndex,
    query: &'a Query,
}

impl<'a> ScoreRequest<'a> {
    pub(crate) fn new(index: &'a ToolIndex, query: &'a Query) -> Self {
        Self { index, query }
    }

    /// The tools to score, in snapshot order: `scores[i]` is the score of `tools()[i]`.
    pub fn tools(&self) -> &'a [ToolDefinition] {
        self.index.tools()
    }

    /// The query text, after the search's byte limit cut it.
    pub fn query(&self) -> &'a str {
        self.query.text()
    }

    /// The query's words as the index reads them: lowercased, stop words gone, unstemmed, in
    /// order, repeats kept.
    pub fn words(&self) -> impl ExactSizeIterator<Item = &'a str> + 'a {
        self.query.terms().iter().map(|term| term.word())
    }

    /// The lexical index, for the built-in scorers.
    pub(crate) fn index(&self) -> &'a ToolIndex {
        self.index
    }

    /// The query as the index analysed it, for the built-in scorers.
    pub(crate) fn analysed(&self) -> &'a Query {
        self.query
    }
}

/// Scores every tool of a snapshot against a query.
///
/// `scores` has one slot per tool of [`ScoreRequest::tools`], in snapshot order, all zero on
/// entry. Write a finite score for each tool: higher is better, and a tool left at zero or below
/// is not a match. Ties are broken by snapshot order by the caller, so a scorer need not be
/// stable.
///
/// ```
/// use prism::ToolDefinition;
/// use prism::search::{ScoreError, ScoreRequest, SearchConfig, ToolScorer};
/// use serde_json::Value;
///
/// /// Prefers tools whose name starts with the query's first word.
/// struct Prefix;
///
/// impl ToolScorer for Prefix {
///     fn score(&self, request: &ScoreRequest<'_>, scores: &mut [f32]) -> Result<(), ScoreError> {
///         let Some(first) = request.words().next() else { return Ok(()) };
///         for (tool, score) in request.tools().iter().zip(scores) {
///             if tool.name().starts_with(first) {
///                 *score = 1.0;
///             }
///         }
///         Ok(())
///     }
/// }
///
/// let tools: Vec<_> = ["weather_now", "stocks"]
///     .map(|name| ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null)))
///     .into();
/// let search = SearchConfig::default().with_scorer(Prefix).index(&tools);
/// let results = search.search("weather please", 4, &tools).unwrap();
/// let names: Vec<_> = results.hits().iter().map(|hit| hit.tool.name()).collect();
/// assert_eq!(names, ["weather_now"]);
/// ```
pub trait ToolScorer: Send + Sync + 'static {
    /// Fills `scores` (one per tool of the request) for the request's query.
    fn score(&self, request: &ScoreRequest<'_>, scores: &mut [f32]) -> Result<(), ScoreError>;
}

impl<S: ToolScorer + ?Sized> ToolScorer for Arc<S> {
    fn score(&self, request: &ScoreRequest<'_>, scores: &mut [f32]) -> Result<(), ScoreError> {
        (**self).score(request, scores)
    }
}

/// A weighted sum of several scorers, each first scaled so that its best tool scores 1.
///
/// Scaling keeps scorers with different ranges (BM25 sums, cosine similarities) comparable.
/// Any part failing fails the blend, so the caller falls back to full disclosure.
///
/// ```
/// use prism::ToolDefinition;
/// use prism::search::{BlendedScorer, Bm25, SearchConfig};
/// use serde_json::Value;
///
/// let tools: Vec<_> = ["send_email", "read_email", "weather"]
///     .map(|name| ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null)))
///     .into();
/// let blend = BlendedScorer::new().with(0.5, Bm25::default()).with(0.5, Bm25::default());
/// let search = SearchConfig::default().with_scorer(blend).index(&tools);
/// let hits = search.search("send an email", 4, &tools).unwrap();
/// let scores: Vec<_> = hits.hits().iter().map(|hit| (hit.tool.name(), hit.score)).collect();
/// assert_eq!(scores[0], ("send_email", 1.0));
/// assert_eq!(scores[1].0, "read_email");
/// assert!(scores[1].1 > 0.0 && scores[1].1 < 1.0 && scores.len() == 2);
/// ```
#[derive(Clone, Default)]
pub struct BlendedScorer {
    parts: Vec<(f32, Arc<dyn ToolScorer>)>,
}

impl BlendedScorer {
    /// An empty blend (it scores every tool 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `scorer` with `weight`. A weight that is not a positive finite number is ignored.
    pub fn with(mut self, weight: f32, scorer: impl ToolScorer) -> Self {
        if weight.is_finite() && weight > 0.0 {
            self.parts.push((weight, Arc::new(scorer)));
        }
        self
    }
}

impl ToolScorer for BlendedScorer {
    fn score(&self, request: &ScoreRequest<'_>, scores: &mut [f32]) -> Result<(), ScoreError> {
        let mut part_scores = vec![0.0f32; scores.len()];
        for (weight, scorer) in &self.parts {
            part_scores.fill(0.0);
            scorer.score(request, &mut part_scores)?;
            // Checked on every score, not on the best: `f32::max` skips NaN and the clamp
            // below would turn NaN and -inf into 0, hiding a broken part.
            if part_scores.iter().any(|score| !score.is_finite()) {
                return Err(ScoreError::new(
                    "a blended scorer returned a non-finite score",
                ));
            }
            let best = part_scores.iter().copied().fold(0.0f32, f32::max);
            if best > 0.0 {
                for (total, part) in scores.iter_mut().zip(&part_scores) {
                    *total += weight * part.max(0.0) / best;
                }
            }
        }
        Ok(())
    }
}

impl fmt::Debug for BlendedScorer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlendedScorer")
            .field(
                "weights",
                &self.parts.iter().map(|(w, _)| *w).collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::search::{Bm25, FullDisclosureReason, SearchConfig, SharedActivatedTools};

    /// Scores every tool with one fixed value.
    struct Constant(f32);

    impl ToolScorer for Constant {
        fn score(&self, _: &ScoreRequest<'_>, scores: &mut [f32]) -> Result<(), ScoreError> {
            scores.fill(self.0);
            Ok(())
        }
    }

    #[test]
    fn a_blended_part_with_a_score_that_is_not_finite_fails_the_blend() {
        let tools: Vec<_> = ["weather", "stocks"]
            .map(|name| ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null)))
            .into();
        for bad in [f32::NAN, f32::NEG_INFINITY, f32::INFINITY] {
            let blend = BlendedScorer::new()
                .with(1.0, Bm25::default())
                .with(1.0, Constant(bad));
            let search = SearchConfig::default().with_scorer(blend).index(&tools);
            let turn = search.disclose(&tools, "weather", &SharedActivatedTools::default());
            assert!(
                matches!(
                    turn.full_disclosure_reason(),
                    Some(FullDisclosureReason::ScorerFailed(_))
                ),
                "{bad}: {:?}",
                turn.full_disclosure_reason()
            );
            assert_eq!(turn.tools().len(), 2);
        }
    }
}
