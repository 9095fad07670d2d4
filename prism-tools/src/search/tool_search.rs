//! [`ToolSearch`]: one snapshot's index and scorer, ranking tools among a turn's input list.
//!
//! A run builds one `ToolSearch` per snapshot from its [`SearchConfig`] and keeps it (it is
//! cheap to clone). Every ranking is restricted to the tools it is given as the turn's input
//! list: a tool outside that list is never returned, whatever the scorer says. Any failure is
//! returned as a [`FullDisclosureReason`] so that the caller can fall back to the whole input
//! list and report why.

use std::fmt;
use std::sync::Arc;

use crate::definition::ToolDefinition;
use crate::panic::guarded;

use super::bm25::Bm25;
use super::full_disclosure::FullDisclosureReason;
use super::index::ToolIndex;
use super::index_builder::FieldWeights;
use super::limits::SearchLimits;
use super::query::Query;
use super::scorer::{ScoreRequest, ToolScorer};
use super::tokenizer::Tokenizer;

/// How a snapshot is indexed and scored. Cheap to clone; one per agent is typical.
///
/// ```
/// use prism::ToolDefinition;
/// use prism::search::{SearchConfig, SearchLimits};
/// use serde_json::Value;
///
/// let tool = |name: &str, description: &str| {
///     ToolDefinition::builder(name).description(description).run_sync(|_, _| Ok(Value::Null))
/// };
/// let tools = vec![
///     tool("send_email", "Sends an email message."),
///     tool("weather", "Weather forecasts."),
/// ];
/// let search = SearchConfig::default()
///     .with_limits(SearchLimits::default().with_top_k(4))
///     .index(&tools);
/// let results = search.search("email my boss", 4, &tools).unwrap();
/// assert_eq!(results.hits().len(), 1);
/// assert_eq!(results.hits()[0].tool.name(), "send_email");
/// ```
#[derive(Clone)]
pub struct SearchConfig {
    tokenizer: Tokenizer,
    weights: FieldWeights,
    scorer: Arc<dyn ToolScorer>,
    limits: SearchLimits,
}

impl SearchConfig {
    /// Uses `tokenizer` for tools and queries.
    pub fn with_tokenizer(mut self, tokenizer: Tokenizer) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// Uses `weights` for the fields of each tool.
    pub fn with_field_weights(mut self, weights: FieldWeights) -> Self {
        self.weights = weights;
        self
    }

    /// Ranks with `scorer` instead of [`Bm25`].
    pub fn with_scorer(mut self, scorer: impl ToolScorer) -> Self {
        self.scorer = Arc::new(scorer);
        self
    }

    /// Uses `limits`.
    pub fn with_limits(mut self, limits: SearchLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits.
    pub fn limits(&self) -> SearchLimits {
        self.limits
    }

    /// Indexes a snapshot. Never fails: a snapshot that cannot be indexed (too many tools) gives
    /// a search that always discloses in full, with that reason.
    pub fn index(&self, tools: &[ToolDefinition]) -> ToolSearch {
        let index = ToolIndex::build_with(tools, self.tokenizer.clone(), self.weights)
            .map_err(FullDisclosureReason::from);
        ToolSearch {
            inner: Arc::new(Inner {
                index,
                scorer: Arc::clone(&self.scorer),
                limits: self.limits,
            }),
        }
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            tokenizer: Tokenizer::default(),
            weights: FieldWeights::default(),
            scorer: Arc::new(Bm25::default()),
            limits: SearchLimits::default(),
        }
    }
}

impl fmt::Debug for SearchConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SearchConfig")
            .field("tokenizer", &self.tokenizer)
            .field("weights", &self.weights)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

struct Inner {
    index: Result<ToolIndex, FullDisclosureReason>,
    scorer: Arc<dyn ToolScorer>,
    limits: SearchLimits,
}

/// The search over one snapshot. Cheap to clone.
#[derive(Clone)]
pub struct ToolSearch {
    inner: Arc<Inner>,
}

/// One ranked tool.
#[derive(Clone, Debug)]
pub struct SearchHit {
    /// The tool.
    pub tool: ToolDefinition,
    /// Its position in the snapshot.
    pub position: u32,
    /// Its score (higher is better, always above zero).
    pub score: f32,
    /// The query's words that occur in the tool, in query order, without repeats.
    pub matched: Vec<Box<str>>,
}

/// The ranked tools for one query, best first, ties in snapshot order.
#[derive(Clone, Debug)]
pub struct SearchResults {
    hits: Vec<SearchHit>,
    truncated: bool,
}

impl SearchResults {
    /// The hits, best first.
    pub fn hits(&self) -> &[SearchHit] {
        &self.hits
    }

    /// True when the query was cut to the byte limit before searching.
    pub fn query_truncated(&self) -> bool {
        self.truncated
    }
}

impl ToolSearch {
    /// The index, or why there is none.
    pub(crate) fn index(&self) -> Result<&ToolIndex, &FullDisclosureReason> {
        self.inner.index.as_ref()
    }

    /// The limits this search applies.
    pub fn limits(&self) -> SearchLimits {
        self.inner.limits
    }

    /// True when both are the same search (one index, built once).
    #[cfg(test)]
    pub(crate) fn same_as(&self, other: &ToolSearch) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Ranks the tools of `among` (a subset of the snapshot, such as a turn's input list)
    /// against `query`, returning at most `k` (clamped to the top-k cap) with a score above
    /// zero. The query is cut to the byte limit first.
    pub fn search(
        &self,
        query: &str,
        k: usize,
        among: &[ToolDefinition],
    ) -> Result<SearchResults, FullDisclosureReason> {
        let eligible = self.eligible(among)?;
        self.search_eligible(query, k, &eligible)
    }

    /// The snapshot positions of `among`. Fails when a tool is not in the indexed snapshot.
    pub(crate) fn eligible(
        &self,
        among: &[ToolDefinition],
    ) -> Result<Eligible, FullDisclosureReason> {
        let index = self.index().map_err(Clone::clone)?;
        let tools = index.tools();
        let mut eligible = Eligible::with_capacity(tools.len());
        // The input list is normally a subsequence of the snapshot, so walking both in step finds
        // each tool without hashing; the name lookup covers any other order.
        let mut cursor = 0;
        for tool in among {
            let position = match tools.get(cursor) {
                Some(candidate) if candidate.ptr_eq(tool) => cursor,
                _ => match index.position(tool.name()) {
                    Some(position) if tools[position as usize].ptr_eq(tool) => position as usize,
                    _ => {
                        return Err(FullDisclosureReason::NotIndexed(Arc::clone(
                            tool.name_arc(),
                        )));
                    }
                },
            };
            eligible.insert(position);
            cursor = position + 1;
        }
        Ok(eligible)
    }

    pub(crate) fn search_eligible(
        &self,
        query: &str,
        k: usize,
        eligible: &Eligible,
    ) -> Result<SearchResults, FullDisclosureReason> {
        let index = self.index().map_err(Clone::clone)?;
        let limits = self.inner.limits;
        let cut = limits.cut_query(query);
        let k = k.clamp(1, super::limits::MAX_TOP_K);
        let query = index.query(cut.text);
        let scores = self.scores(index, &query)?;
        let mut ranked: Vec<(u32, f32)> = scores
            .iter()
            .enumerate()
            .filter(|&(position, &score)| score > 0.0 && eligible.contains(position))
            .map(|(position, &score)| (position as u32, score))
            .collect();
        let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if ranked.len() > k {
            ranked.select_nth_unstable_by(k - 1, order);
            ranked.truncate(k);
        }
        ranked.sort_unstable_by(order);
        let hits = ranked
            .into_iter()
            .map(|(position, score)| SearchHit {
                tool: index.tools()[position as usize].clone(),
                position,
                score,
                matched: matched_words(index, &query, position),
            })
            .collect();
        Ok(SearchResults {
            hits,
            truncated: cut.truncated,
        })
    }

    /// Runs the scorer with its panics caught and its output checked.
    fn scores(&self, index: &ToolIndex, query: &Query) -> Result<Vec<f32>, FullDisclosureReason> {
        let mut scores = vec![0.0f32; index.len()];
        let scorer = &self.inner.scorer;
        let request = ScoreRequest::new(index, query);
        guarded(|| scorer.score(&request, &mut scores))
            .map_err(|_| FullDisclosureReason::ScorerPanicked)?
            .map_err(|error| FullDisclosureReason::ScorerFailed(error.message().into()))?;
        if scores.iter().any(|score| !score.is_finite()) {
            return Err(FullDisclosureReason::InvalidScore);
        }
        Ok(scores)
    }
}

impl fmt::Debug for ToolSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSearch")
            .field("tools", &self.inner.index.as_ref().map(ToolIndex::len))
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

/// The query's words found in the tool at `position`, in query order, once each.
fn matched_words(index: &ToolIndex, query: &Query, position: u32) -> Vec<Box<str>> {
    let mut matched: Vec<Box<str>> = Vec::new();
    for term in query.terms() {
        let found = term
            .matches()
            .iter()
            .any(|found| index.contains(position, found.term));
        if found && !matched.iter().any(|word| **word == *term.word()) {
            matched.push(Box::from(term.word()));
        }
    }
    matched
}

/// The snapshot positions of a turn's input list: a bit set to test membership, and the
/// positions in input order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Eligible {
    words: Vec<u64>,
    positions: Vec<u32>,
}

impl Eligible {
    pub(crate) fn with_capacity(snapshot_len: usize) -> Self {
        Self {
            words: vec![0; snapshot_len.div_ceil(64)],
            positions: Vec::new(),
        }
    }

    /// Adds `position`; one already there keeps its first place, so that a tool given twice
    /// is listed once.
    pub(crate) fn insert(&mut self, position: usize) {
        if let Some(word) = self.words.get_mut(position / 64) {
            let bit = 1 << (position % 64);
            if *word & bit == 0 {
                *word |= bit;
                self.positions.push(position as u32);
            }
        }
    }

    pub(crate) fn contains(&self, position: usize) -> bool {
        self.words
            .get(position / 64)
            .is_some_and(|word| word & (1 << (position % 64)) != 0)
    }

    /// The positions, in the order they were first inserted.
    pub(crate) fn positions(&self) -> &[u32] {
        &self.positions
    }
}
