//! Reading a snapshot of tools into the parts of a [`ToolIndex`](super::ToolIndex).
//!
//! One pass over the tools, in snapshot order: each field's text is tokenized, each new surface
//! word is stemmed once (through the tokenizer's stem memory) and mapped to a term, and each tool
//! becomes a list of (term, weighted frequency) pairs. The pairs are then grouped by term into
//! flat postings that stay in snapshot order, which is what makes ties break by snapshot order.

use std::borrow::Cow;
use std::collections::HashMap;

use foldhash::fast::RandomState;
use serde_json::Value;

use crate::definition::ToolDefinition;

use super::index::{Posting, TermId};
use super::limits::{MAX_FIELD_BYTES, cut_at_char_boundary};
use super::stem_memo::{RememberedStems, Stemming};
use super::tokenizer::Tokenizer;

/// How much each field of a tool counts. A word's frequency in a tool is the sum of the weights
/// of the fields it appears in, once per appearance. A weight that is negative or not a number
/// counts as 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldWeights {
    /// Words of the tool's name. Default 3.
    pub name: f32,
    /// Words of the description. Default 1.
    pub description: f32,
    /// Words of parameter names. Default 1.
    pub parameter_name: f32,
    /// Words of parameter descriptions. Default 1.
    pub parameter_description: f32,
}

impl FieldWeights {
    /// The weights with anything negative or not a number read as 0, so that no setting can
    /// make a score negative or undefined.
    fn sanitized(self) -> Self {
        let clean = |weight: f32| {
            if weight.is_finite() && weight > 0.0 {
                weight
            } else {
                0.0
            }
        };
        Self {
            name: clean(self.name),
            description: clean(self.description),
            parameter_name: clean(self.parameter_name),
            parameter_description: clean(self.parameter_description),
        }
    }

    /// Every field weighs 1: the plain baseline.
    pub const UNIFORM: Self = Self {
        name: 1.0,
        description: 1.0,
        parameter_name: 1.0,
        parameter_description: 1.0,
    };
}

impl Default for FieldWeights {
    fn default() -> Self {
        Self {
            name: 3.0,
            ..Self::UNIFORM
        }
    }
}

/// What a snapshot's text becomes: the parts of an index.
#[derive(Clone, Debug)]
pub(crate) struct SnapshotWords {
    /// The text of each term, by term id.
    pub(crate) terms: Vec<Box<str>>,
    /// Term ids in the order of their text.
    pub(crate) sorted_terms: Vec<TermId>,
    /// Surface word → its term, `None` for a stop word.
    pub(crate) surfaces: HashMap<Box<str>, Option<TermId>, RandomState>,
    /// Postings of term `t` are `postings[offsets[t]..offsets[t + 1]]`.
    pub(crate) offsets: Vec<u32>,
    pub(crate) postings: Vec<Posting>,
    /// The weighted length of each tool.
    pub(crate) lengths: Vec<f32>,
}

/// Reads `tools` (at most the index cap, names already checked) into index parts.
pub(crate) fn read_snapshot(
    tools: &[ToolDefinition],
    tokenizer: &Tokenizer,
    weights: &FieldWeights,
) -> SnapshotWords {
    let weights = weights.sanitized();
    let (terms, surfaces, triples, lengths) = {
        let mut builder = Builder {
            tokenizer,
            stems: tokenizer.stemming().map(Stemming::remembering),
            // `terms` is temporary, so it is sized to avoid rehashing; `surfaces` stays in the
            // index and grows only as far as it needs.
            terms: HashMap::with_capacity_and_hasher(tools.len() * 8, RandomState::default()),
            surfaces: HashMap::default(),
            current: 0,
            document: Vec::with_capacity(64),
            last_use: Vec::with_capacity(tools.len() * 8),
            triples: Vec::with_capacity(tools.len() * 32),
            lengths: Vec::with_capacity(tools.len()),
            lowered: String::with_capacity(64),
        };
        for (position, tool) in tools.iter().enumerate() {
            builder.add_tool(position as u32, tool, &weights);
        }
        // The builder, and with it the lock on the stem memory, ends here.
        (
            builder.terms,
            builder.surfaces,
            builder.triples,
            builder.lengths,
        )
    };
    let (offsets, postings) = group_by_term(terms.len(), &triples);
    let mut terms_by_id = vec![Box::<str>::default(); terms.len()];
    for (text, term) in terms {
        terms_by_id[term as usize] = text;
    }
    let sorted_terms = sort_terms(&terms_by_id);
    SnapshotWords {
        terms: terms_by_id,
        sorted_terms,
        surfaces,
        offsets,
        postings,
        lengths,
    }
}

/// Indexing state while a snapshot is read.
struct Builder<'t> {
    tokenizer: &'t Tokenizer,
    /// The tokenizer's stem memory, held open for the whole build; `None` without stemming.
    stems: Option<RememberedStems<'t>>,
    terms: HashMap<Box<str>, TermId, RandomState>,
    surfaces: HashMap<Box<str>, Option<TermId>, RandomState>,
    /// The tool being read.
    current: u32,
    /// The current tool's (term, frequency) pairs, one per term.
    document: Vec<(TermId, f32)>,
    /// For each term, the last tool that used it and its slot in that tool's `document`: adds a
    /// repeated word to its slot without sorting or hashing.
    last_use: Vec<(u32, u32)>,
    /// (term, tool, frequency) for every tool so far, tools in order.
    triples: Vec<(TermId, u32, f32)>,
    lengths: Vec<f32>,
    /// Scratch space for lowercasing.
    lowered: String,
}

/// How far into nested parameter schemas the index reads.
const MAX_SCHEMA_DEPTH: usize = 4;

impl Builder<'_> {
    fn add_tool(&mut self, position: u32, tool: &ToolDefinition, weights: &FieldWeights) {
        self.document.clear();
        self.current = position;
        self.add_text(tool.name(), weights.name);
        if let Some(description) = tool.description() {
            self.add_text(description, weights.description);
        }
        if let Some(parameters) = tool.parameters() {
            self.add_schema(parameters, weights, MAX_SCHEMA_DEPTH);
        }
        let length = self.document.iter().map(|(_, weight)| weight).sum();
        self.lengths.push(length);
        self.triples.extend(
            self.document
                .iter()
                .map(|&(term, frequency)| (term, position, frequency)),
        );
    }

    fn add_schema(&mut self, schema: &Value, weights: &FieldWeights, depth: usize) {
        if depth == 0 {
            return;
        }
        let Value::Object(schema) = schema else {
            return;
        };
        // One pass over the keys: a schema object is small, and matching beats three lookups.
        for (key, value) in schema {
            match (key.as_str(), value) {
                ("properties", Value::Object(properties)) => {
                    for (name, property) in properties {
                        self.add_text(name, weights.parameter_name);
                        if let Some(Value::String(description)) = property.get("description") {
                            self.add_text(description, weights.parameter_description);
                        }
                        self.add_schema(property, weights, depth - 1);
                    }
                }
                ("items", items) => self.add_schema(items, weights, depth - 1),
                _ => {}
            }
        }
    }

    fn add_text(&mut self, text: &str, weight: f32) {
        let Self {
            tokenizer,
            stems,
            terms,
            surfaces,
            current,
            document,
            last_use,
            lowered,
            ..
        } = self;
        let (text, _) = cut_at_char_boundary(text, MAX_FIELD_BYTES);
        tokenizer.for_each_lowered(text, lowered, |word| {
            let term = match surfaces.get(word) {
                Some(&term) => term,
                None => {
                    let term = if tokenizer.is_stop_word(word) {
                        None
                    } else {
                        let stem = match stems {
                            Some(stems) => stems.stem(word),
                            None => Cow::Borrowed(word),
                        };
                        let next = terms.len() as TermId;
                        Some(match terms.get(&*stem) {
                            Some(&term) => term,
                            None => *terms.entry(Box::from(&*stem)).or_insert(next),
                        })
                    };
                    surfaces.insert(Box::from(word), term);
                    term
                }
            };
            let Some(term) = term else { return };
            let at = term as usize;
            if last_use.len() <= at {
                last_use.resize(at + 1, (u32::MAX, 0));
            }
            match last_use[at] {
                (tool, slot) if tool == *current => document[slot as usize].1 += weight,
                _ => {
                    last_use[at] = (*current, document.len() as u32);
                    document.push((term, weight));
                }
            }
        });
    }
}

/// Term ids in the order of their text. Each term is keyed by its first eight bytes as a
/// big-endian number, which orders like the text itself, so most comparisons are one integer
/// comparison; only terms sharing those bytes compare their full text.
fn sort_terms(terms: &[Box<str>]) -> Vec<TermId> {
    let prefix = |text: &str| {
        let mut bytes = [0u8; 8];
        let len = text.len().min(8);
        bytes[..len].copy_from_slice(&text.as_bytes()[..len]);
        u64::from_be_bytes(bytes)
    };
    let mut keyed: Vec<(u64, TermId)> = terms
        .iter()
        .enumerate()
        .map(|(term, text)| (prefix(text), term as TermId))
        .collect();
    keyed.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| terms[a.1 as usize].cmp(&terms[b.1 as usize]))
    });
    keyed.into_iter().map(|(_, term)| term).collect()
}

/// Groups (term, tool, frequency) triples, which arrive in tool order, into flat per-term
/// postings that stay in tool order (a counting sort by term).
fn group_by_term(term_count: usize, triples: &[(TermId, u32, f32)]) -> (Vec<u32>, Vec<Posting>) {
    let mut offsets = vec![0u32; term_count + 1];
    for &(term, _, _) in triples {
        offsets[term as usize + 1] += 1;
    }
    for at in 1..offsets.len() {
        offsets[at] += offsets[at - 1];
    }
    let mut cursor = offsets.clone();
    let mut postings = vec![
        Posting {
            tool: 0,
            frequency: 0.0
        };
        triples.len()
    ];
    for &(term, tool, frequency) in triples {
        let slot = &mut cursor[term as usize];
        postings[*slot as usize] = Posting { tool, frequency };
        *slot += 1;
    }
    (offsets, postings)
}
