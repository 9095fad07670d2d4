//! Tool disclosure by search: show a model the few tools a turn needs, and let it ask for more.
//!
//! A host with hundreds of tools cannot send every schema on every turn: the request grows, the
//! model's choice gets worse, and the cost is paid again each turn. In search mode a turn
//! discloses only the tools that best match the turn's input, the tools the session activated
//! earlier, and a generated `search_tools` tool the model calls to find the rest.
//!
//! ```text
//! snapshot ─► SearchConfig::index ─► ToolSearch (built once per snapshot, shared)
//!
//! each turn:  input list (granted, narrowed) + turn query + SharedActivatedTools
//!               ─► ToolSearch::disclose ─► Disclosure { tools, search_tool, full reason }
//!
//! search_tools({query, k?}) ─► inert lines ─► names written to SharedActivatedTools
//! ```
//!
//! Disclosure describes; it never authorises. The dispatcher re-checks registry membership, the
//! filters and the run's grant on every call, whatever was disclosed, and a search can only
//! return tools of the input list it was bound to.
//!
//! ## Ranking
//!
//! | piece | file | what it does |
//! | --- | --- | --- |
//! | [`Tokenizer`] | `tokenizer.rs` | Unicode words, identifier splitting, lowercasing, stop words, Snowball stems |
//! | (word finding) | `words.rs` | Unicode word boundaries (with an ASCII fast path), identifier seams |
//! | (unspaced scripts) | `unspaced.rs` | Chinese, Japanese, Korean, Thai…: characters and overlapping pairs |
//! | (stem memory) | `stem_memo.rs` | stems remembered across index builds, bounded by [`MAX_MEMO_WORDS`] |
//! | (interning) | `interner.rs` | distinct words and stems numbered once, stored end to end in one buffer |
//! | [`ToolIndex`] | `index.rs` | one snapshot's weighted fields as flat postings; query analysis |
//! | (long terms) | `long_terms.rs` | terms too long to look up prefix by prefix, found as a word's prefixes in one pass |
//! | [`Posting`], [`TermId`] | `posting.rs` | the entries of the inverted lists, shared by the index and its builder |
//! | [`FieldWeights`] | `index_builder.rs` | reading a snapshot: name x3, description, parameter names and descriptions |
//! | [`Query`] | `query.rs` | a query analysed by the index, surface words kept for `[matched: …]` |
//! | [`ToolScorer`], [`ScoreRequest`], [`BlendedScorer`] | `scorer.rs` | the pluggable scorer and what it sees (the tools and the query, not the index), and a blend of several |
//! | [`Bm25`] | `bm25.rs` | the default scorer; IDF from the indexed snapshot |
//! | [`SearchConfig`], [`ToolSearch`] | `tool_search.rs` | index + scorer + limits; ranking restricted to an input list, ties in snapshot order |
//!
//! ## Turns and sessions
//!
//! | piece | file | what it does |
//! | --- | --- | --- |
//! | [`SearchLimits`] | `limits.rs` | top-k 16 (cap 64), 1024 indexed tools, query 4096 bytes (cap 65536), 128 activated |
//! | [`Disclosure`] | `disclosure.rs` | one turn's decision; fails closed to the whole input list |
//! | [`FullDisclosureReason`] | `full_disclosure.rs` | why a turn showed its whole input list |
//! | [`ActivatedTools`], [`SharedActivatedTools`] | `activated.rs` | names only, bounded, serialisable session state |
//! | `search_tools` | `search_tool.rs` | the generated tool |
//! | [`SEARCH_TOOLS_NAME`], [`check_reserved_name`] | `reserved_name.rs` | the reserved name, refused in a host's tool list |
//!
//! ## For the run layer
//!
//! 1. At run start, in search mode: [`check_reserved_name`] on the snapshot (fail the run on
//!    error), then `SearchConfig::index(&snapshot)` once; keep the [`ToolSearch`] for the run.
//! 2. Per session, one [`SharedActivatedTools`]: restore it from the stored state with
//!    [`SharedActivatedTools::replace`], persist [`SharedActivatedTools::snapshot`] (it
//!    serialises as a JSON array of names), and expose `clear` as the session's reset.
//! 3. Per turn: `let turn = search.disclose(&input, &query, &activated)`. Send
//!    [`Disclosure::request_tools`]. When [`Disclosure::full_disclosure_reason`] is set, emit an
//!    event with its [`code`](FullDisclosureReason::code) and message. Make
//!    [`Disclosure::search_tool`] dispatchable for that turn only.
//! 4. `search_tools` writes the names it returns into the shared handle when its body runs; the
//!    next `disclose` picks them up. Nothing else needs to read its result.
//!
//! ## Measured
//!
//! Recall on MetaTool (199 tools), odd-numbered queries, default configuration: see the
//! project README and `tests/search_recall.rs` for the figures and how they are computed.

mod activated;
mod bm25;
mod disclosure;
mod full_disclosure;
mod index;
mod index_builder;
mod interner;
mod limits;
mod long_terms;
mod posting;
mod query;
mod reserved_name;
mod scorer;
mod search_tool;
mod stem_memo;
mod tokenizer;
mod tool_search;
mod unspaced;
mod words;

pub use activated::{ActivatedTools, SharedActivatedTools};
pub use bm25::Bm25;
pub use disclosure::Disclosure;
pub use full_disclosure::{FullDisclosureReason, MAX_SCORER_MESSAGE_BYTES};
pub use index::{
    IndexError, MAX_RELATED_TERMS, MIN_RELATED_PREFIX, RELATED_TERM_WEIGHT, ToolIndex,
};
pub use index_builder::FieldWeights;
pub use limits::{
    CutQuery, DEFAULT_QUERY_BYTES, DEFAULT_TOP_K, MAX_ACTIVATED_TOOLS, MAX_FIELD_BYTES,
    MAX_INDEXED_TOOLS, MAX_QUERY_BYTES, MAX_TOP_K, SearchLimits,
};
pub use posting::{Posting, TermId};
pub use query::{Query, QueryTerm, TermMatch};
pub use reserved_name::{ReservedToolName, SEARCH_TOOLS_NAME, check_reserved_name};
pub use scorer::{BlendedScorer, ScoreError, ScoreRequest, ToolScorer};
pub use search_tool::SHORT_DESCRIPTION_BYTES;
pub use stem_memo::MAX_MEMO_WORDS;
pub use tokenizer::Tokenizer;
pub use tool_search::{SearchConfig, SearchHit, SearchResults, ToolSearch};
