//! [`ToolIndex`]: the words of one snapshot of tools, ready to be scored against a query.
//!
//! Built once per run snapshot and then only read, from any thread. Each tool is one document
//! made of weighted fields ([`FieldWeights`]): its name (split as an identifier, weighing the
//! most, because a name is a dense summary), its description, and the names and descriptions of
//! the parameters declared under the JSON Schema `properties` (nested objects and array items
//! included, a few levels deep).
//!
//! The postings are stored flat (one array, one offset per term) rather than one vector per
//! term: fewer allocations, better locality, and a footprint that the benchmark can report.
//!
//! Stemming is memoised: while building (see `index_builder.rs`), each distinct surface word is
//! stemmed once and remembered. A query looks its words up in that memory first and only stems a
//! word the tools never used, without writing anything back, so a search takes no lock.

use std::collections::HashMap;
use std::sync::Arc;

use foldhash::fast::RandomState;

use crate::definition::ToolDefinition;

use super::index_builder::{FieldWeights, SnapshotWords, read_snapshot};
#[cfg(test)]
use super::limits::MAX_FIELD_BYTES;
use super::limits::MAX_INDEXED_TOOLS;
use super::long_terms::LongTerms;
use super::posting::{Posting, TermId};
use super::query::{Query, QueryTerm, TermMatch};
use super::tokenizer::Tokenizer;

/// The index could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexError {
    /// More tools than [`MAX_INDEXED_TOOLS`].
    TooManyTools {
        /// How many tools the snapshot has.
        count: usize,
    },
    /// Two tools of the snapshot share a name.
    DuplicateName(Arc<str>),
}

impl std::fmt::Display for IndexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooManyTools { count } => write!(
                f,
                "{count} tools exceed the search index limit of {MAX_INDEXED_TOOLS}"
            ),
            Self::DuplicateName(name) => write!(f, "two tools share the name `{name}`"),
        }
    }
}

impl std::error::Error for IndexError {}

/// The lexical index over one snapshot of tools.
///
/// Users reach it only through [`SearchConfig::index`](super::SearchConfig::index) and a
/// [`ToolScorer`](super::ToolScorer)'s [`ScoreRequest`](super::ScoreRequest); its term tables and
/// postings are this crate's business.
#[derive(Clone, Debug)]
pub struct ToolIndex {
    tools: Vec<ToolDefinition>,
    positions: HashMap<Arc<str>, u32, RandomState>,
    words: SnapshotWords,
    average_length: f32,
    /// The length in bytes of the longest term: no longer prefix of a query word can be one.
    longest_term: usize,
    /// The terms longer than [`MAX_PREFIX_LOOKUP_BYTES`], found as prefixes in one pass.
    long_terms: LongTerms,
    tokenizer: Tokenizer,
}

impl ToolIndex {
    /// Indexes `tools` with the default [`Tokenizer`] and [`FieldWeights`].
    pub fn build(tools: &[ToolDefinition]) -> Result<Self, IndexError> {
        Self::build_with(tools, Tokenizer::default(), FieldWeights::default())
    }

    /// Indexes `tools` with the given tokenizer and weights.
    pub fn build_with(
        tools: &[ToolDefinition],
        tokenizer: Tokenizer,
        weights: FieldWeights,
    ) -> Result<Self, IndexError> {
        if tools.len() > MAX_INDEXED_TOOLS {
            return Err(IndexError::TooManyTools { count: tools.len() });
        }
        let mut positions = HashMap::with_capacity_and_hasher(tools.len(), RandomState::default());
        for (position, tool) in tools.iter().enumerate() {
            let previous = positions.insert(Arc::clone(tool.name_arc()), position as u32);
            if previous.is_some() {
                return Err(IndexError::DuplicateName(Arc::clone(tool.name_arc())));
            }
        }
        let words = read_snapshot(tools, &tokenizer, &weights);
        let lengths = &words.lengths;
        let average_length = if lengths.is_empty() {
            0.0
        } else {
            lengths.iter().sum::<f32>() / lengths.len() as f32
        };
        let longest_term = (0..words.terms.len() as TermId)
            .map(|term| words.terms.resolve(term).len())
            .max()
            .unwrap_or(0);
        let long_terms = LongTerms::new(&words.terms, MAX_PREFIX_LOOKUP_BYTES);
        Ok(Self {
            tools: tools.to_vec(),
            positions,
            words,
            average_length,
            longest_term,
            long_terms,
            tokenizer,
        })
    }

    /// Analyses a query with this index's tokenizer.
    ///
    /// A word matches its own stem with weight 1. A word whose stem the tools never use also
    /// matches, with weight [`RELATED_TERM_WEIGHT`], the indexed terms its stem is a prefix of
    /// ("crypto" → "cryptocurr") and those that are a prefix of its stem ("rental" → "rent"),
    /// when the shared part is at least [`MIN_RELATED_PREFIX`] characters long: people and tool
    /// authors shorten and derive words differently more often than a stemmer can undo. Terms
    /// of any length are found as a prefix of the stem, and the cost of a word grows only with
    /// its length: one very long word cannot make a query slow.
    pub fn query(&self, text: &str) -> Query {
        let mut terms = Vec::new();
        self.tokenizer.for_each_word(text, |word| {
            // A word the tools used is answered from the snapshot's words, without stemming.
            let (exact, matches) = match self.surface_term(word) {
                Some(term) => (Some(term), vec![TermMatch { term, weight: 1.0 }]),
                None => {
                    let stem = self.tokenizer.stem(word);
                    match self.term_id(&stem) {
                        Some(term) => (Some(term), vec![TermMatch { term, weight: 1.0 }]),
                        None => (None, self.related_terms(&stem)),
                    }
                }
            };
            terms.push(QueryTerm::new(word, exact, matches));
        });
        Query::new(text, terms)
    }

    /// The term of a word the tools used (lowercase, before stemming).
    fn surface_term(&self, word: &str) -> Option<TermId> {
        let surface = self.words.surfaces.get(word)?;
        self.words.surface_terms[surface as usize]
    }

    /// The term whose text is `stem`.
    fn term_id(&self, stem: &str) -> Option<TermId> {
        self.words.terms.get(stem)
    }

    /// The text of a term of this index.
    fn text_of(&self, term: TermId) -> &str {
        self.words.terms.resolve(term)
    }

    /// Terms sharing a long prefix with `stem`, at most [`MAX_RELATED_TERMS`].
    fn related_terms(&self, stem: &str) -> Vec<TermMatch> {
        let mut related = Vec::new();
        if !self.tokenizer.matches_prefixes() || stem.chars().count() < MIN_RELATED_PREFIX {
            return related;
        }
        let weight = RELATED_TERM_WEIGHT;
        // Terms that the stem is a prefix of, in sorted order.
        let sorted = &self.words.sorted_terms;
        let start = sorted.partition_point(|&term| self.text_of(term) < stem);
        for &term in sorted[start..].iter().take(MAX_RELATED_TERMS) {
            if !self.text_of(term).starts_with(stem) {
                break;
            }
            related.push(TermMatch { term, weight });
        }
        // Terms that are a prefix of the stem: short ones looked up, long ones in one pass.
        for end in prefix_lookups(stem, self.longest_term) {
            if related.len() == MAX_RELATED_TERMS {
                return related;
            }
            if let Some(term) = self.term_id(&stem[..end]) {
                related.push(TermMatch { term, weight });
            }
        }
        if related.len() < MAX_RELATED_TERMS {
            self.long_terms
                .for_each_prefix_of(stem, &self.words.terms, |term| {
                    related.push(TermMatch { term, weight });
                    related.len() < MAX_RELATED_TERMS
                });
        }
        related
    }

    /// The indexed tools, in snapshot order.
    pub fn tools(&self) -> &[ToolDefinition] {
        &self.tools
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The snapshot position of the tool called `name`.
    pub fn position(&self, name: &str) -> Option<u32> {
        self.positions.get(name).copied()
    }

    /// How many distinct terms.
    pub fn term_count(&self) -> usize {
        self.words.terms.len()
    }

    /// The text (a stem) of `term`.
    pub fn term_text(&self, term: TermId) -> Option<&str> {
        self.words.terms.try_resolve(term)
    }

    /// The tools containing `term`, in snapshot order.
    pub fn postings(&self, term: TermId) -> &[Posting] {
        let term = term as usize;
        match (
            self.words.offsets.get(term),
            self.words.offsets.get(term + 1),
        ) {
            (Some(&start), Some(&end)) => &self.words.postings[start as usize..end as usize],
            _ => &[],
        }
    }

    /// How many tools contain `term`.
    pub fn document_frequency(&self, term: TermId) -> usize {
        self.postings(term).len()
    }

    /// True when the tool at `tool` contains `term`.
    pub fn contains(&self, tool: u32, term: TermId) -> bool {
        self.postings(term)
            .binary_search_by_key(&tool, |posting| posting.tool)
            .is_ok()
    }

    /// The weighted length of the tool at `tool` (0 when out of range).
    pub fn document_length(&self, tool: u32) -> f32 {
        self.words
            .lengths
            .get(tool as usize)
            .copied()
            .unwrap_or(0.0)
    }

    /// The mean weighted length over all tools.
    pub fn average_length(&self) -> f32 {
        self.average_length
    }
}

/// The ends of the prefixes of `stem` looked up as terms: from [`MIN_RELATED_PREFIX`]
/// characters on, no longer than some term (`longest_term` bytes) and than
/// [`MAX_PREFIX_LOOKUP_BYTES`]. Each lookup hashes its prefix, so the cost grows with the square
/// of the longest prefix tried; longer terms are left to [`LongTerms`].
fn prefix_lookups(stem: &str, longest_term: usize) -> impl Iterator<Item = usize> {
    let longest = longest_term.min(MAX_PREFIX_LOOKUP_BYTES);
    stem.char_indices()
        .map(|(at, _)| at)
        .skip(MIN_RELATED_PREFIX)
        .take_while(move |&end| end <= longest)
}

/// The weight of a match on a related term (a prefix relation) rather than the word's own stem.
pub const RELATED_TERM_WEIGHT: f32 = 0.5;
/// The shortest shared prefix, in characters, that relates two terms.
pub const MIN_RELATED_PREFIX: usize = 4;
/// The most related terms one query word expands to.
pub const MAX_RELATED_TERMS: usize = 8;
/// The longest prefix of a query word, in bytes, looked up as a term of its own. Without a
/// bound, one word of a few thousand characters (a run of combining marks, a token) against an
/// index holding a term as long costs millions of bytes hashed; real words are far shorter.
/// Longer terms are found by [`LongTerms`] instead.
const MAX_PREFIX_LOOKUP_BYTES: usize = 128;

#[cfg(test)]
mod tests {

    use serde_json::Value;

    use super::*;

    #[test]
    fn prefix_lookups_hash_a_bounded_number_of_bytes() {
        // One word of combining marks, against an index whose longest term is as long as a field
        // allows: the bytes hashed by the prefix lookups stay bounded, whatever the lengths.
        let word = format!("a{}", "\u{301}".repeat(30_000));
        let hashed: usize = prefix_lookups(&word, MAX_FIELD_BYTES).sum();
        let bound = MAX_PREFIX_LOOKUP_BYTES * MAX_PREFIX_LOOKUP_BYTES;
        assert!(hashed <= bound, "{hashed} bytes hashed");
        let ascii = "x".repeat(MAX_FIELD_BYTES);
        let hashed: usize = prefix_lookups(&ascii, MAX_FIELD_BYTES).sum();
        assert!(hashed <= bound, "{hashed} bytes hashed");
        // A short word still tries every prefix from the shortest on.
        let ends: Vec<_> = prefix_lookups("cryptocurrency", MAX_FIELD_BYTES).collect();
        assert_eq!(ends, (4..14).collect::<Vec<_>>());
        // The query reads the long word as one term, and a shorter word still meets the long
        // term it begins.
        let long_term = format!("b{}", "\u{301}".repeat(4000));
        let tools = [ToolDefinition::builder("marks")
            .description(format!("Weather {long_term}"))
            .run_sync(|_, _| Ok(Value::Null))];
        let index = ToolIndex::build(&tools).unwrap();
        assert_eq!(index.query(&format!("{long_term}\u{301}")).terms().len(), 1);
        let query = index.query(&format!("b{}", "\u{301}".repeat(100)));
        let matched: Vec<_> = query.terms()[0]
            .matches()
            .iter()
            .filter_map(|found| index.term_text(found.term))
            .collect();
        assert_eq!(matched, [long_term.as_str()]);
    }

    fn matched_terms<'i>(index: &'i ToolIndex, query: &Query) -> Vec<(&'i str, f32)> {
        query.terms()[0]
            .matches()
            .iter()
            .filter_map(|found| Some((index.term_text(found.term)?, found.weight)))
            .collect()
    }

    #[test]
    fn a_word_past_the_stemming_bound_is_its_own_term_on_both_sides() {
        // 83 bytes, so read whole: "-ing" stays on the indexed word and "-s" on the query's.
        let long = format!("{}ing", "ab".repeat(40));
        let tools = [ToolDefinition::builder("tokens")
            .description(format!("Reads {long} tokens."))
            .run_sync(|_, _| Ok(Value::Null))];
        let index = ToolIndex::build(&tools).unwrap();
        assert_eq!(
            matched_terms(&index, &index.query(&long)),
            [(long.as_str(), 1.0)]
        );
        // Another form of the word is not stemmed to the same term, but still meets it as a
        // prefix.
        let query = index.query(&format!("{long}s"));
        assert_eq!(query.terms()[0].term(), None);
        assert_eq!(
            matched_terms(&index, &query),
            [(long.as_str(), RELATED_TERM_WEIGHT)]
        );
        // A short word is stemmed as before.
        assert_eq!(
            matched_terms(&index, &index.query("reading")),
            [("read", 1.0)]
        );
    }

    #[test]
    fn a_term_past_the_prefix_lookup_bound_is_found_as_a_prefix_of_a_longer_word() {
        let long = format!("c{}", "ab".repeat(100));
        let accented = "é".repeat(100);
        assert!(long.len() > MAX_PREFIX_LOOKUP_BYTES && accented.len() > MAX_PREFIX_LOOKUP_BYTES);
        // Forty long terms, each a prefix of the next.
        let nested: Vec<String> = (129..169).map(|n| "a".repeat(n)).collect();
        let tools = [
            ToolDefinition::builder("decode")
                .description(format!("Decodes {long} and {accented}."))
                .run_sync(|_, _| Ok(Value::Null)),
            ToolDefinition::builder("nested")
                .description(nested.join(" "))
                .run_sync(|_, _| Ok(Value::Null)),
        ];
        let index = ToolIndex::build(&tools).unwrap();
        for (term, word) in [
            (&long, format!("{long}zzz")),
            (&accented, format!("{accented}é")),
        ] {
            assert_eq!(
                matched_terms(&index, &index.query(&word)),
                [(term.as_str(), RELATED_TERM_WEIGHT)]
            );
        }
        // The shortest ones, up to the cap, shortest first.
        let query = index.query(&"a".repeat(500));
        let expected: Vec<_> = nested[..MAX_RELATED_TERMS]
            .iter()
            .map(|term| (term.as_str(), RELATED_TERM_WEIGHT))
            .collect();
        assert_eq!(matched_terms(&index, &query), expected);
        // A word that only shares part of a long term does not meet it.
        let query = index.query(&format!("c{}x", "ab".repeat(99)));
        assert!(query.is_unmatched());
    }

    #[test]
    fn a_very_long_query_word_still_meets_the_term_it_begins_with() {
        let tools = [ToolDefinition::builder("weather_report")
            .description("Weather forecasts and reports.")
            .run_sync(|_, _| Ok(Value::Null))];
        let index = ToolIndex::build(&tools).unwrap();
        // A word no tool uses takes the related-terms path; what its prefix lookups cost is
        // bounded (counted in `prefix_lookups_hash_a_bounded_number_of_bytes`).
        let word = "weatherx".repeat(8192);
        let query = index.query(&word);
        assert_eq!(query.terms().len(), 1);
        let matched: Vec<_> = query.terms()[0]
            .matches()
            .iter()
            .filter_map(|found| index.term_text(found.term))
            .collect();
        assert_eq!(matched, ["weather"]);
    }
}
