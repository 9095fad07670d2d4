//! Reading a snapshot of tools into the parts of a [`ToolIndex`](super::ToolIndex).
//!
//! One pass over the tools, in snapshot order: each field's text is tokenized, each new surface
//! word is stemmed once (through the tokenizer's stem memory) and mapped to a term, and each tool
//! becomes a list of (term, weighted frequency) pairs. The pairs are then grouped by term into
//! flat postings that stay in snapshot order, which is what makes ties break by snapshot order.

use std::borrow::Cow;

use serde_json::Value;

use crate::definition::ToolDefinition;

use super::interner::Interner;
use super::limits::{MAX_FIELD_BYTES, cut_at_char_boundary};
use super::posting::{Posting, TermId};
use super::stem_memo::{RememberedStems, Stemming};
use super::tokenizer::Tokenizer;

/// How much each field of a tool counts. A word's frequency in a tool is the sum of the weights
/// of the fields it appears in, once per appearance. A weight that is negative or not a number
/// counts as 0, and a field weighing 0 is not indexed at all.
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
    /// The terms (stems); a term's id is its number here.
    pub(crate) terms: Interner,
    /// Term ids in the order of their text.
    pub(crate) sorted_terms: Vec<TermId>,
    /// The surface words (lowercase, before stemming).
    pub(crate) surfaces: Interner,
    /// The term of each surface word, by surface id; `None` for a stop word.
    pub(crate) surface_terms: Vec<Option<TermId>>,
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
    // Sized for tools of a few dozen words, up to a dozen of them new to the snapshot: a large
    // snapshot then grows each buffer once at most (the word tables never), and the buffers
    // that stay in the index are trimmed at the end.
    let words = tools.len() * 8;
    let mut stems = tokenizer.stemming().map(Stemming::remembering);
    if let Some(stems) = &mut stems {
        stems.expect_first(words);
    }
    let mut builder = Builder {
        tokenizer,
        stems,
        terms: Interner::with_capacity(words, words * 8),
        surfaces: Interner::with_capacity(words, words * 8),
        surface_terms: Vec::with_capacity(words),
        current: 0,
        document_start: 0,
        last_use: Vec::with_capacity(words),
        triples: Vec::with_capacity(tools.len() * 40),
        lengths: Vec::with_capacity(tools.len()),
        lowered: String::with_capacity(64),
    };
    for (position, tool) in tools.iter().enumerate() {
        builder.add_tool(position as u32, tool, &weights);
    }
    let Builder {
        stems,
        mut terms,
        mut surfaces,
        mut surface_terms,
        triples,
        lengths,
        ..
    } = builder;
    terms.shrink_to_fit();
    surfaces.shrink_to_fit();
    surface_terms.shrink_to_fit();
    // Releases the lock on the stem memory before the postings are grouped.
    drop(stems);
    let (offsets, postings) = group_by_term(terms.len(), &triples);
    let sorted_terms = sort_terms(&terms);
    SnapshotWords {
        terms,
        sorted_terms,
        surfaces,
        surface_terms,
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
    terms: Interner,
    surfaces: Interner,
    surface_terms: Vec<Option<TermId>>,
    /// The tool being read.
    current: u32,
    /// Where the current tool's triples start in `triples`.
    document_start: usize,
    /// For each term, the last tool that used it and the slot of that use in `triples`: adds a
    /// repeated word to its slot without sorting or hashing.
    last_use: Vec<(u32, u32)>,
    /// (term, tool, frequency) for every tool so far, one per term of a tool, tools in order.
    triples: Vec<(TermId, u32, f32)>,
    lengths: Vec<f32>,
    /// Scratch space for lowercasing.
    lowered: String,
}

/// How far into nested parameter schemas the index reads.
const MAX_SCHEMA_DEPTH: usize = 4;

impl Builder<'_> {
    fn add_tool(&mut self, position: u32, tool: &ToolDefinition, weights: &FieldWeights) {
        self.current = position;
        self.document_start = self.triples.len();
        self.add_text(tool.name(), weights.name);
        if let Some(description) = tool.description() {
            self.add_text(description, weights.description);
        }
        if let Some(parameters) = tool.parameters() {
            self.add_schema(parameters, weights, MAX_SCHEMA_DEPTH);
        }
        let document = &self.triples[self.document_start..];
        self.lengths
            .push(document.iter().map(|&(_, _, weight)| weight).sum());
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
        // A word that weighs nothing must not count as present: a zero frequency would still
        // count towards its document frequency, and BM25's `tf / (tf + norm)` is 0/0 for it when
        // `k1` is 0 or the document's length is 0.
        if weight <= 0.0 {
            return;
        }
        let Self {
            tokenizer,
            stems,
            terms,
            surfaces,
            surface_terms,
            current,
            last_use,
            triples,
            lowered,
            ..
        } = self;
        let (text, _) = cut_at_char_boundary(text, MAX_FIELD_BYTES);
        tokenizer.for_each_lowered(text, lowered, |word| {
            let term = match surfaces.intern(word) {
                (surface, false) => surface_terms[surface as usize],
                (_, true) => {
                    // A word new to this snapshot: a stop word, or a stem to number.
                    let term = (!tokenizer.is_stop_word(word)).then(|| {
                        let stem = match stems {
                            Some(stems) => stems.stem(word),
                            None => Cow::Borrowed(word),
                        };
                        let (term, new) = terms.intern(&stem);
                        if new {
                            last_use.push((u32::MAX, 0));
                        }
                        term
                    });
                    surface_terms.push(term);
                    term
                }
            };
            let Some(term) = term else { return };
            let last = &mut last_use[term as usize];
            match *last {
                (tool, slot) if tool == *current => triples[slot as usize].2 += weight,
                _ => {
                    *last = (*current, triples.len() as u32);
                    triples.push((term, *current, weight));
                }
            }
        });
    }
}

/// Term ids in the order of their text. Each term is keyed by its first eight bytes read as a
/// big-endian number, which orders like the text itself, so the sort compares integers; only
/// terms whose keys tie (they share those eight bytes) are then ordered by their full text.
fn sort_terms(terms: &Interner) -> Vec<TermId> {
    let key = |text: &str| {
        let mut bytes = [0u8; 8];
        let len = text.len().min(8);
        bytes[..len].copy_from_slice(&text.as_bytes()[..len]);
        u64::from_be_bytes(bytes)
    };
    let mut keyed: Vec<(u64, TermId)> = (0..terms.len() as TermId)
        .map(|term| (key(terms.resolve(term)), term))
        .collect();
    keyed.sort_unstable_by_key(|&(key, _)| key);
    for tied in keyed.chunk_by_mut(|a, b| a.0 == b.0) {
        if tied.len() > 1 {
            tied.sort_unstable_by(|a, b| terms.resolve(a.1).cmp(terms.resolve(b.1)));
        }
    }
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

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use crate::definition::ToolDefinition;
    use crate::search::{Bm25, FieldWeights, SearchConfig};

    #[test]
    fn a_field_weighing_zero_is_not_indexed_and_never_breaks_scoring() {
        let tools = [
            ToolDefinition::builder("weather")
                .description("Weather forecasts.")
                .run_sync(|_, _| Ok(Value::Null)),
            ToolDefinition::builder("stocks").run_sync(|_, _| Ok(Value::Null)),
        ];
        let weights = FieldWeights {
            name: 0.0,
            ..FieldWeights::default()
        };
        for scorer in [Bm25 { k1: 1.2, b: 1.0 }, Bm25 { k1: 0.0, b: 0.5 }] {
            let search = SearchConfig::default()
                .with_field_weights(weights)
                .with_scorer(scorer)
                .index(&tools);
            let results = search.search("stocks weather", 4, &tools).unwrap();
            let names: Vec<_> = results.hits().iter().map(|hit| hit.tool.name()).collect();
            assert_eq!(names, ["weather"], "{scorer:?}");
        }
    }
}
