//! Disclosing a large catalogue by search: a turn describes only the tools that match.
//!
//! A run in [`DisclosureMode::Search`](crate::run::DisclosureMode::Search) indexes its snapshot
//! once with a [`SearchConfig`] into a [`ToolSearch`], and each turn's [`Disclosure`] describes
//! the best matches, the session's [`ActivatedTools`] and a `search_tools` tool
//! ([`SEARCH_TOOLS_NAME`]) for the rest. Ranking is [`Bm25`] unless the config names another
//! [`ToolScorer`]; a scorer sees a [`ScoreRequest`] (the tools and the query), never the index's
//! internals. When ranking cannot be trusted, a turn discloses its whole list and says why
//! ([`FullDisclosureReason`]).

pub use prism_tools::search::{
    ActivatedTools, BlendedScorer, Bm25, CutQuery, DEFAULT_QUERY_BYTES, DEFAULT_TOP_K, Disclosure,
    FieldWeights, FullDisclosureReason, MAX_ACTIVATED_TOOLS, MAX_FIELD_BYTES, MAX_INDEXED_TOOLS,
    MAX_QUERY_BYTES, MAX_TOP_K, ReservedToolName, SEARCH_TOOLS_NAME, ScoreError, ScoreRequest,
    SearchConfig, SearchHit, SearchLimits, SearchResults, SharedActivatedTools, Tokenizer,
    ToolScorer, ToolSearch, check_reserved_name,
};
