//! [`Query`]: a search text as the index understands it.
//!
//! A query is analysed once, by the index that will answer it
//! ([`ToolIndex::query`](super::ToolIndex::query)), and then handed to every scorer. Each word
//! keeps its surface form (what the user wrote, lowercased) next to the index term it maps to, so
//! a result can say which of the user's words matched without showing stems.

use super::TermId;

/// An index term a query word stands for, and how much a match on it counts (1 for the word's
/// own stem, less for a related one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TermMatch {
    /// The term.
    pub term: TermId,
    /// Its weight, in `(0, 1]`.
    pub weight: f32,
}

/// One word of a query.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryTerm {
    word: Box<str>,
    exact: Option<TermId>,
    matches: Vec<TermMatch>,
}

impl QueryTerm {
    pub(crate) fn new(word: &str, exact: Option<TermId>, matches: Vec<TermMatch>) -> Self {
        Self {
            word: Box::from(word),
            exact,
            matches,
        }
    }

    /// The word as written, lowercased.
    pub fn word(&self) -> &str {
        &self.word
    }

    /// The index term of the word's own stem; `None` when no indexed tool uses it.
    pub fn term(&self) -> Option<TermId> {
        self.exact
    }

    /// Every term the word matches: its own stem (weight 1) and related terms (lower weight).
    pub fn matches(&self) -> &[TermMatch] {
        &self.matches
    }
}

/// An analysed query: the original text and its words, in order, repeats included.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    text: Box<str>,
    terms: Vec<QueryTerm>,
}

impl Query {
    pub(crate) fn new(text: &str, terms: Vec<QueryTerm>) -> Self {
        Self {
            text: Box::from(text),
            terms,
        }
    }

    /// The text that was analysed (after any length cut).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The words, in order; stop words are already gone.
    pub fn terms(&self) -> &[QueryTerm] {
        &self.terms
    }

    /// True when no word of the query matches any indexed term: nothing can match lexically.
    pub fn is_unmatched(&self) -> bool {
        self.terms.iter().all(|term| term.matches.is_empty())
    }
}
