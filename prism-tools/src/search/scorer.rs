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

/// Scores every tool of an index against a query.
///
/// `scores` has one slot per tool of `index`, in snapshot order, all zero on entry. Write a
/// finite score for each tool: higher is better, and a tool left at zero or below is not a
/// match. Ties are broken by snapshot order by the caller, so a scorer need not be stable.
///
/// ```
/// use prism_tools::ToolDefinition;
/// use prism_tools::search::{Query, ScoreError, ToolIndex, ToolScorer};
/// use serde_json::Value;
///
/// /// Prefers tools whose name starts with the query's first word.
/// struct Prefix;
///
/// impl ToolScorer for Prefix {
///     fn score(&self, index: &ToolIndex, query: &Query, scores: &mut [f32]) -> Result<(), ScoreError> {
///         let Some(first) = query.terms().first() else { return Ok(()) };
///         for (tool, score) in index.tools().iter().zip(scores) {
///             if tool.name().starts_with(first.word()) {
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
/// let index = ToolIndex::build(&tools).unwrap();
/// let mut scores = vec![0.0; index.len()];
/// Prefix.score(&index, &index.query("weather please"), &mut scores).unwrap();
/// assert_eq!(scores, [1.0, 0.0]);
/// ```
pub trait ToolScorer: Send + Sync + 'static {
    /// Fills `scores` (one per tool of `index`) for `query`.
    fn score(&self, index: &ToolIndex, query: &Query, scores: &mut [f32])
    -> Result<(), ScoreError>;
}

impl<S: ToolScorer + ?Sized> ToolScorer for Arc<S> {
    fn score(
        &self,
        index: &ToolIndex,
        query: &Query,
        scores: &mut [f32],
    ) -> Result<(), ScoreError> {
        (**self).score(index, query, scores)
    }
}

/// A weighted sum of several scorers, each first scaled so that its best tool scores 1.
///
/// Scaling keeps scorers with different ranges (BM25 sums, cosine similarities) comparable.
/// Any part failing fails the blend, so the caller falls back to full disclosure.
///
/// ```
/// use prism_tools::ToolDefinition;
/// use prism_tools::search::{BlendedScorer, Bm25, ToolIndex, ToolScorer};
/// use serde_json::Value;
///
/// let tools: Vec<_> = ["send_email", "read_email", "weather"]
///     .map(|name| ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null)))
///     .into();
/// let index = ToolIndex::build(&tools).unwrap();
/// let blend = BlendedScorer::new().with(0.5, Bm25::default()).with(0.5, Bm25::default());
/// let mut scores = vec![0.0; 3];
/// blend.score(&index, &index.query("send an email"), &mut scores).unwrap();
/// assert_eq!(scores[0], 1.0);
/// assert!(scores[1] > 0.0 && scores[1] < 1.0 && scores[2] == 0.0);
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
    fn score(
        &self,
        index: &ToolIndex,
        query: &Query,
        scores: &mut [f32],
    ) -> Result<(), ScoreError> {
        let mut part_scores = vec![0.0f32; scores.len()];
        for (weight, scorer) in &self.parts {
            part_scores.fill(0.0);
            scorer.score(index, query, &mut part_scores)?;
            let best = part_scores.iter().copied().fold(0.0f32, f32::max);
            if !best.is_finite() {
                return Err(ScoreError::new(
                    "a blended scorer returned a non-finite score",
                ));
            }
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
