//! The one walk every lowering makes: copy the canonical schema bottom-up, optionally inlining
//! local references, and let the dialect's [`NodeRules`] rewrite each schema object once its
//! subschemas are rewritten.
//!
//! The walk is bounded: the input is measured first ([`check_input`]), the walk refuses to nest
//! deeper than [`MAX_SCHEMA_NESTING`] subschemas and references (inlining can deepen a schema), to
//! produce more than [`MAX_OUTPUT_NODES`] schema objects and to copy more than
//! [`MAX_INLINED_DATA_BYTES`] of values (`enum`, `default`, …) into inlined copies (inlining can
//! multiply both), so a hostile schema gets an error instead of a stack overflow or an exhausted
//! memory.

use serde_json::{Map, Value};

use super::keywords::{Place, place_of, push_segment};
use super::lowered::Report;
use super::lowering_error::{LoweringError, LoweringErrorKind};
use super::references::resolve_local;
use crate::limits::{Exceeded, Limits, check_value};

/// Largest canonical schema lowered, in bytes of compact JSON.
pub(crate) const MAX_INPUT_BYTES: usize = 1024 * 1024;
/// Deepest nesting of subschemas in a lowered schema (each is at least two JSON levels, so the
/// JSON stays within [`Limits::MAX_DEPTH`]).
pub(crate) const MAX_SCHEMA_NESTING: usize = Limits::MAX_DEPTH / 2;
/// Most schema objects a lowered schema may hold (inlining copies a definition per use).
pub(crate) const MAX_OUTPUT_NODES: usize = 100_000;
/// Most bytes of values inlining may copy (each use of a definition copies its values).
pub(crate) const MAX_INLINED_DATA_BYTES: usize = 4 * MAX_INPUT_BYTES;

/// Why a walk stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The schema cannot be lowered at all.
    Error(LoweringError),
    /// The schema cannot be strict; the text says why (with the pointer).
    NotStrict(String),
}

impl From<LoweringError> for Stop {
    fn from(error: LoweringError) -> Self {
        Stop::Error(error)
    }
}

/// A dialect's rewrite of one schema.
pub(crate) trait NodeRules {
    /// Rewrites `node` (an object or a boolean schema) in place; its subschemas are already
    /// rewritten. `pointer` is where the node is in the canonical schema.
    fn rewrite(&mut self, node: &mut Value, pointer: &str, walk: &mut Walk<'_>)
    -> Result<(), Stop>;
}

/// What a walk carries: the canonical root (to resolve references) and the report.
pub(crate) struct Walk<'a> {
    pub(crate) root: &'a Value,
    pub(crate) report: Report,
    inline: bool,
    /// The definitions being inlined, innermost last, to catch recursion.
    inlining: Vec<String>,
    nodes: usize,
    /// Bytes of values copied into inlined definitions so far.
    inlined_data: usize,
}

/// Measures the canonical schema before any walk.
pub(crate) fn check_input(schema: &Value) -> Result<(), LoweringError> {
    check_value(schema, MAX_INPUT_BYTES, Limits::MAX_DEPTH).map_err(|exceeded| {
        let kind = match exceeded {
            Exceeded::Bytes => LoweringErrorKind::TooLarge {
                limit: MAX_INPUT_BYTES,
                unit: "bytes",
            },
            Exceeded::Depth => LoweringErrorKind::TooDeep {
                max_depth: Limits::MAX_DEPTH,
            },
        };
        LoweringError::new("", kind)
    })
}

impl<'a> Walk<'a> {
    /// A walk over `root`; with `inline`, every `$ref` is replaced by a copy of its target and
    /// `$defs`/`definitions` are dropped.
    pub(crate) fn new(root: &'a Value, inline: bool) -> Self {
        Self {
            root,
            report: Report::default(),
            inline,
            inlining: Vec::new(),
            nodes: 0,
            inlined_data: 0,
        }
    }

    /// The rewritten copy of the whole schema.
    pub(crate) fn run(&mut self, rules: &mut dyn NodeRules) -> Result<Value, Stop> {
        let root = self.root;
        let mut pointer = String::new();
        self.schema(root, &mut pointer, 0, rules)
    }

    /// The rewritten copy of one subschema at `pointer`.
    fn schema(
        &mut self,
        schema: &Value,
        pointer: &mut String,
        nesting: usize,
        rules: &mut dyn NodeRules,
    ) -> Result<Value, Stop> {
        if nesting > MAX_SCHEMA_NESTING {
            return Err(too_deep(pointer));
        }
        self.nodes += 1;
        if self.nodes > MAX_OUTPUT_NODES {
            return Err(LoweringError::new(
                pointer,
                LoweringErrorKind::TooLarge {
                    limit: MAX_OUTPUT_NODES,
                    unit: "schema objects",
                },
            )
            .into());
        }
        let mut node = match schema {
            Value::Object(map) => {
                if self.inline
                    && let Some(reference) = map.get("$ref")
                {
                    return self.inline_reference(map, reference, pointer, nesting, rules);
                }
                Value::Object(self.children(map, pointer, nesting, rules)?)
            }
            Value::Bool(_) => schema.clone(),
            _ => {
                return Err(
                    LoweringError::invalid(pointer, "schema", "an object or a boolean").into(),
                );
            }
        };
        rules.rewrite(&mut node, pointer, self)?;
        Ok(node)
    }

    /// A copy of `map` with every subschema rewritten.
    fn children(
        &mut self,
        map: &Map<String, Value>,
        pointer: &mut String,
        nesting: usize,
        rules: &mut dyn NodeRules,
    ) -> Result<Map<String, Value>, Stop> {
        let mut copy = Map::with_capacity(map.len());
        for (keyword, value) in map {
            // The strict rewrite's own mark: one the input brings would mark a property the
            // rewrite did not make nullable.
            if super::restore::is_marker(keyword) {
                self.report.removed(pointer, keyword);
                continue;
            }
            if self.inline && matches!(keyword.as_str(), "$defs" | "definitions") {
                self.report
                    .rewritten(pointer, keyword, "inlined where referenced");
                continue;
            }
            let start = pointer.len();
            push_segment(pointer, keyword);
            let copied = match (place_of(keyword), value) {
                (Place::Schema, _) | (Place::SchemaOrList, Value::Object(_) | Value::Bool(_)) => {
                    self.schema(value, pointer, nesting + 1, rules)?
                }
                (Place::Map, Value::Object(entries)) => {
                    let mut out = Map::with_capacity(entries.len());
                    for (key, entry) in entries {
                        let at = pointer.len();
                        push_segment(pointer, key);
                        let copied = if entry.is_object() || entry.is_boolean() {
                            self.schema(entry, pointer, nesting + 1, rules)?
                        } else if keyword == "dependencies" {
                            entry.clone()
                        } else {
                            return Err(LoweringError::invalid(
                                pointer,
                                "schema",
                                "an object or a boolean",
                            )
                            .into());
                        };
                        pointer.truncate(at);
                        out.insert(key.clone(), copied);
                    }
                    Value::Object(out)
                }
                (Place::List | Place::SchemaOrList, Value::Array(items)) => {
                    let mut out = Vec::with_capacity(items.len());
                    for (index, item) in items.iter().enumerate() {
                        let at = pointer.len();
                        pointer.push('/');
                        pointer.push_str(&index.to_string());
                        out.push(self.schema(item, pointer, nesting + 1, rules)?);
                        pointer.truncate(at);
                    }
                    Value::Array(out)
                }
                (Place::Map, _) => {
                    pointer.truncate(start);
                    return Err(LoweringError::invalid(pointer, keyword, "a map of schemas").into());
                }
                (Place::List | Place::SchemaOrList, _) => {
                    pointer.truncate(start);
                    return Err(
                        LoweringError::invalid(pointer, keyword, "a list of schemas").into(),
                    );
                }
                (Place::Data | Place::Other, _) => {
                    if !self.inlining.is_empty() {
                        self.inlined_data += copied_bytes(value);
                        if self.inlined_data > MAX_INLINED_DATA_BYTES {
                            return Err(LoweringError::new(
                                pointer,
                                LoweringErrorKind::TooLarge {
                                    limit: MAX_INLINED_DATA_BYTES,
                                    unit: "bytes of values copied by inlining",
                                },
                            )
                            .into());
                        }
                    }
                    value.clone()
                }
            };
            pointer.truncate(start);
            copy.insert(keyword.clone(), copied);
        }
        Ok(copy)
    }

    /// The rewritten copy of the target of `reference`, merged with the keywords beside it.
    fn inline_reference(
        &mut self,
        map: &Map<String, Value>,
        reference: &Value,
        pointer: &mut String,
        nesting: usize,
        rules: &mut dyn NodeRules,
    ) -> Result<Value, Stop> {
        let Value::String(reference) = reference else {
            return Err(LoweringError::invalid(pointer, "$ref", "a string").into());
        };
        let unresolvable = || {
            LoweringError::new(
                pointer,
                LoweringErrorKind::UnresolvableReference {
                    reference: reference.clone(),
                },
            )
        };
        let (target, mut target_pointer) =
            resolve_local(self.root, reference).ok_or_else(unresolvable)?;
        // A definition met again while it is being inlined can only be inlined forever.
        if self.inlining.contains(&target_pointer) {
            return Err(LoweringError::new(
                pointer,
                LoweringErrorKind::RecursiveReference {
                    reference: reference.clone(),
                },
            )
            .into());
        }
        self.report.rewritten(pointer, "$ref", "inlined");
        self.inlining.push(target_pointer.clone());
        // A reference counts as a level: a long chain of them is as deep as the copy it makes
        // (and as the stack the walk needs).
        let inlined = self.schema(target, &mut target_pointer, nesting + 1, rules);
        self.inlining.pop();
        let inlined = inlined?;

        let siblings = siblings_of_ref(map);
        if siblings.is_empty() {
            return Ok(inlined);
        }
        let siblings = self.children(&siblings, pointer, nesting, rules)?;
        let mut merged = merge_inlined(inlined, siblings);
        rules.rewrite(&mut merged, pointer, self)?;
        Ok(merged)
    }
}

/// About how many bytes of JSON `value` takes: enough to bound what inlining multiplies.
/// Recursive, over a value already bounded in depth by [`check_input`].
fn copied_bytes(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len() + 2,
        Value::Array(items) => items.iter().map(copied_bytes).sum::<usize>() + 2,
        Value::Object(map) => {
            map.iter()
                .map(|(key, item)| key.len() + 3 + copied_bytes(item))
                .sum::<usize>()
                + 2
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => 8,
    }
}

/// The keywords written beside a `$ref`.
fn siblings_of_ref(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(keyword, _)| keyword.as_str() != "$ref")
        .map(|(keyword, value)| (keyword.clone(), value.clone()))
        .collect()
}

/// Keywords that only describe; beside a reference they override the target's.
pub(crate) fn is_annotation(keyword: &str) -> bool {
    matches!(
        keyword,
        "description"
            | "title"
            | "default"
            | "examples"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "$comment"
    )
}

/// Keywords whose meaning depends on other keywords of their schema object
/// (`additionalProperties` reads `properties`, `items` reads `prefixItems`, `then` reads `if`, …):
/// moved into one object with another schema's, they would read keywords that are not theirs.
fn reads_neighbours(keyword: &str) -> bool {
    matches!(
        keyword,
        "properties"
            | "patternProperties"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "dependentSchemas"
            | "prefixItems"
            | "items"
            | "unevaluatedItems"
            | "contains"
            | "minContains"
            | "maxContains"
            | "if"
            | "then"
            | "else"
    )
}

/// Whether the keywords written beside a `$ref` can join its target's object without changing
/// what either means: no assertion both have with different values, and no keyword of one that
/// reads its neighbours beside such a keyword of the other.
pub(crate) fn merges_cleanly(target: &Map<String, Value>, siblings: &Map<String, Value>) -> bool {
    let differs = siblings.iter().any(|(keyword, value)| {
        !is_annotation(keyword) && target.get(keyword).is_some_and(|own| own != value)
    });
    let reads = |map: &Map<String, Value>| map.iter().any(|(keyword, _)| reads_neighbours(keyword));
    let both_read = reads(target) && reads(siblings);
    !(differs || both_read)
}

/// An inlined target and the keywords written beside its `$ref`. Both apply (JSON Schema 2020-12):
/// annotations beside the reference win; other keywords are added when the target lacks them,
/// and when they would change each other's meaning in one object the two are kept apart under
/// `allOf`.
fn merge_inlined(target: Value, siblings: Map<String, Value>) -> Value {
    let mut target = match target {
        Value::Object(target) => target,
        Value::Bool(true) => Map::new(),
        Value::Bool(false) => return Value::Bool(false),
        other => return other,
    };
    if merges_cleanly(&target, &siblings) {
        target.extend(siblings);
        return Value::Object(target);
    }
    let (annotations, assertions): (Map<String, Value>, Map<String, Value>) = siblings
        .into_iter()
        .partition(|(keyword, _)| is_annotation(keyword));
    let mut wrapper = annotations;
    wrapper.insert(
        "allOf".to_owned(),
        Value::Array(vec![Value::Object(target), Value::Object(assertions)]),
    );
    Value::Object(wrapper)
}

fn too_deep(pointer: &str) -> Stop {
    LoweringError::new(
        pointer,
        LoweringErrorKind::TooDeep {
            max_depth: MAX_SCHEMA_NESTING,
        },
    )
    .into()
}
