//! Reference checks run before a schema is compiled: every reference must stay inside the
//! document, there may not be too many, and none may loop without consuming input.
//!
//! Resolution follows the drafts: `$id` opens a resource with its own base URI, `$anchor` and
//! `$dynamicAnchor` (and a draft-7 `$id` of the form `#name`) name a subschema within it, and a
//! reference resolves against the base in scope. A target must be a resource of this document,
//! or one of the draft meta-schemas compiled into the engine; anything else (`https://…`,
//! `file:…`, a relative path that lands outside, a custom `$schema`) is a remote reference and
//! is refused here with the pointer of the keyword, so no schema ever asks the process to open a
//! URL or a file.
//!
//! A loop is refused when it can be followed without moving to a different part of the
//! arguments: through references and the applicators that apply in place (`allOf`, `anyOf`,
//! `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`). Such a schema would recurse forever.
//! The same graph bounds fan-out: references applied in place may not multiply into more than
//! 100,000 subschemas for one value, however the schema shares them.
//! `$dynamicRef` and `$recursiveRef` are followed to every anchor they might reach at run time,
//! so the check may refuse a loop that a particular dynamic scope would have avoided, never the
//! other way round.

use std::collections::{HashMap, HashSet};

use jsonschema::{Draft, Uri, uri};
use serde_json::{Map, Value};

use super::error::{SchemaError, SchemaErrorKind};
use crate::schema::keywords::{Place, children, place_of, push_segment};

/// Most subschemas that references and in-place applicators may apply to one value.
pub(crate) const MAX_IN_PLACE_EXPANSION: usize = 100_000;

/// The base URI of a schema without `$id`, as the engine uses it.
const DEFAULT_BASE: &str = "json-schema:///";

/// True for keywords whose subschemas apply to the same instance as their parent (so a
/// reference loop through them never consumes input).
fn applies_in_place(keyword: &str) -> bool {
    matches!(
        keyword,
        "allOf"
            | "anyOf"
            | "oneOf"
            | "not"
            | "if"
            | "then"
            | "else"
            | "dependentSchemas"
            | "dependencies"
    )
}

/// Checks the references of `schema` (already within the shape limits).
pub(crate) fn check_references(schema: &Value, max_refs: usize) -> Result<(), SchemaError> {
    let mut index = Index::default();
    let base = uri::from_str(DEFAULT_BASE).map_err(|error| invalid("", error))?;
    index.visit(schema, String::new(), &base, Draft::default(), true)?;
    let too_many = |index: &Index| {
        index.refs.get(max_refs).map(|reference| {
            SchemaError::new(
                SchemaErrorKind::TooManyRefs,
                reference.pointer.clone(),
                format!("the schema has more than {max_refs} references"),
            )
        })
    };
    if let Some(error) = too_many(&index) {
        return Err(error);
    }
    let mut edges: HashMap<String, Vec<Edge>> = HashMap::new();
    // The list grows while it is read: a reference into a value the walk did not read as a
    // schema (an `examples` item, a `$` keyword) makes the engine read it as one, so the
    // checks visit it too, and its own references join the list.
    let mut next = 0;
    while let Some(reference) = index.refs.get(next) {
        let (node, via) = (reference.node.clone(), reference.pointer.clone());
        let resource = without_fragment(&reference.target).map_err(|error| invalid(&via, error))?;
        for to in index.targets(schema, &index.refs[next])? {
            if !index.nodes.contains(&to)
                && let Some(target) = schema.pointer(&to)
            {
                index.visit(target, to.clone(), &resource, Draft::default(), false)?;
                if let Some(error) = too_many(&index) {
                    return Err(error);
                }
            }
            edges.entry(node.clone()).or_default().push(Edge {
                to,
                via: Some(via.clone()),
            });
        }
        next += 1;
    }
    for (from, to) in std::mem::take(&mut index.in_place) {
        edges.entry(from).or_default().push(Edge { to, via: None });
    }
    check_graph(&edges)
}

/// One reference keyword.
struct Reference {
    /// Pointer to the schema holding it.
    node: String,
    /// Pointer to the keyword itself.
    pointer: String,
    keyword: &'static str,
    /// The target, resolved against the base in scope.
    target: Uri<String>,
}

/// What the walk found: resources, anchors, references and in-place edges.
#[derive(Default)]
struct Index {
    /// Resource URI (no fragment) -> pointer of its root.
    resources: HashMap<String, String>,
    /// (resource URI, anchor name) -> pointer.
    anchors: HashMap<(String, String), String>,
    /// `$dynamicAnchor` name -> every pointer carrying it.
    dynamic_anchors: HashMap<String, Vec<String>>,
    /// Pointers of schemas with `$recursiveAnchor: true`.
    recursive_anchors: Vec<String>,
    refs: Vec<Reference>,
    /// (parent, child) for subschemas applied to the same instance.
    in_place: Vec<(String, String)>,
    /// Pointer of every schema the walk visited (a reference's target is visited when it is
    /// not one yet), so that every edge of the graph lands on a node whose own edges are known.
    nodes: HashSet<String>,
}

impl Index {
    fn visit(
        &mut self,
        node: &Value,
        pointer: String,
        base: &Uri<String>,
        draft: Draft,
        identifiers: bool,
    ) -> Result<(), SchemaError> {
        let Value::Object(schema) = node else {
            // `true` and `false` are schemas too, and a reference may lead to one.
            if node.is_boolean() {
                self.nodes.insert(pointer);
            }
            return Ok(());
        };
        self.nodes.insert(pointer.clone());
        let draft = match schema.get("$schema").and_then(Value::as_str) {
            Some(meta) => match Draft::from_schema_uri(meta) {
                Draft::Unknown => {
                    let at = format!("{pointer}/$schema");
                    return Err(remote(&at, meta, "a custom meta-schema"));
                }
                known => known,
            },
            None => draft,
        };
        let mut base = base.clone();
        // Up to draft 7 a `$ref` hides its siblings, a sibling `$id` included: it changes no
        // base and names no resource.
        let ref_hides_siblings = matches!(draft, Draft::Draft4 | Draft::Draft6 | Draft::Draft7)
            && schema.contains_key("$ref");
        if identifiers && !ref_hides_siblings {
            base = self.identify(schema, &pointer, base, draft)?;
        } else if identifiers && pointer.is_empty() {
            // The document is a resource even when its root's `$ref` hides its identifiers:
            // `{"$ref": "#/definitions/a", "definitions": …}` resolves inside it.
            self.resources
                .insert(base.as_str().to_owned(), String::new());
        }
        for keyword in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(Value::String(reference)) = schema.get(keyword) {
                let mut at = pointer.clone();
                push_segment(&mut at, keyword);
                let target = uri::resolve_against(&base.borrow(), reference)
                    .map_err(|error| invalid(&at, error))?;
                self.refs.push(Reference {
                    node: pointer.clone(),
                    pointer: at,
                    keyword,
                    target,
                });
            }
        }
        for child in children(schema) {
            let mut at = pointer.clone();
            child.push_pointer(&mut at);
            if applies_in_place(child.keyword) {
                self.in_place.push((pointer.clone(), at.clone()));
            }
            self.visit(child.schema, at, &base, draft, identifiers)?;
        }
        // An unknown keyword's value is no schema, but a pointer may still lead there: its
        // references are checked too, and its identifiers are not identifiers.
        for (keyword, value) in schema {
            if place_of(keyword) == Place::Other && !keyword.starts_with('$') {
                let mut at = pointer.clone();
                push_segment(&mut at, keyword);
                self.visit_unknown(value, at, &base, draft)?;
            }
        }
        Ok(())
    }

    fn visit_unknown(
        &mut self,
        value: &Value,
        pointer: String,
        base: &Uri<String>,
        draft: Draft,
    ) -> Result<(), SchemaError> {
        match value {
            Value::Object(_) => self.visit(value, pointer, base, draft, false),
            Value::Array(items) => items.iter().enumerate().try_for_each(|(index, item)| {
                self.visit_unknown(item, format!("{pointer}/{index}"), base, draft)
            }),
            _ => Ok(()),
        }
    }

    /// Records the resource and anchors a schema declares; returns the base URI inside it.
    fn identify(
        &mut self,
        schema: &Map<String, Value>,
        pointer: &str,
        base: Uri<String>,
        draft: Draft,
    ) -> Result<Uri<String>, SchemaError> {
        let mut base = base;
        let is_root = pointer.is_empty();
        if let Some(Value::String(id)) = schema.get(draft.id_keyword()) {
            if let Some(name) = id
                .strip_prefix('#')
                .filter(|_| draft_uses_id_anchors(draft))
            {
                self.anchor(&base, name, pointer, draft.id_keyword())?;
            } else {
                let at = format!("{pointer}/{}", draft.id_keyword());
                base = uri::resolve_against(&base.borrow(), id)
                    .map_err(|error| invalid(&at, error))?;
                base = without_fragment(&base).map_err(|error| invalid(&at, error))?;
                self.resources
                    .insert(base.as_str().to_owned(), pointer.to_owned());
            }
        }
        if is_root {
            self.resources
                .insert(base.as_str().to_owned(), String::new());
        }
        if let Some(Value::String(name)) = schema.get("$anchor") {
            self.anchor(&base, name, pointer, "$anchor")?;
        }
        if let Some(Value::String(name)) = schema.get("$dynamicAnchor") {
            self.anchor(&base, name, pointer, "$dynamicAnchor")?;
            let pointers = self.dynamic_anchors.entry(name.clone()).or_default();
            pointers.push(pointer.to_owned());
        }
        if schema.get("$recursiveAnchor") == Some(&Value::Bool(true)) {
            self.recursive_anchors.push(pointer.to_owned());
        }
        Ok(base)
    }

    /// Records an anchor, refusing a second schema that claims the name in the same resource:
    /// the engine would resolve it to one of the two and this check to the other.
    fn anchor(
        &mut self,
        base: &Uri<String>,
        name: &str,
        pointer: &str,
        keyword: &str,
    ) -> Result<(), SchemaError> {
        let key = (base.as_str().to_owned(), name.to_owned());
        match self.anchors.get(&key) {
            Some(first) if first != pointer => {
                let mut at = pointer.to_owned();
                push_segment(&mut at, keyword);
                let first = if first.is_empty() { "the root" } else { first };
                Err(invalid(
                    &at,
                    format!(
                        "the anchor {name:?} is already declared at {first}; anchors must be unique"
                    ),
                ))
            }
            Some(_) => Ok(()),
            None => {
                self.anchors.insert(key, pointer.to_owned());
                Ok(())
            }
        }
    }

    /// Every schema a reference may lead to inside the document (none for a meta-schema).
    fn targets(&self, document: &Value, reference: &Reference) -> Result<Vec<String>, SchemaError> {
        let absolute = without_fragment(&reference.target)
            .map_err(|error| invalid(&reference.pointer, error))?;
        let Some(resource) = self.resources.get(absolute.as_str()) else {
            if is_bundled_meta_schema(absolute.as_str()) {
                return Ok(Vec::new());
            }
            return Err(remote(
                &reference.pointer,
                reference.target.as_str(),
                "another document",
            ));
        };
        let fragment = reference
            .target
            .fragment()
            .map(|fragment| fragment.decode().to_string_lossy().into_owned())
            .unwrap_or_default();
        let primary = if fragment.is_empty() {
            resource.clone()
        } else if fragment.starts_with('/') {
            // Written as the walk writes pointers: a bare `~` (which resolves as itself) must
            // name the node the walk recorded as `~0`.
            format!("{resource}{}", canonical_pointer(&fragment))
        } else {
            let key = (absolute.as_str().to_owned(), fragment.clone());
            self.anchors.get(&key).cloned().ok_or_else(|| {
                unresolvable(&reference.pointer, &format!("no anchor named {fragment:?}"))
            })?
        };
        if document.pointer(&primary).is_none() {
            return Err(unresolvable(
                &reference.pointer,
                &format!("nothing at {primary:?}"),
            ));
        }
        let mut targets = vec![primary];
        match reference.keyword {
            "$dynamicRef" if !fragment.starts_with('/') => {
                let dynamic = self.dynamic_anchors.get(&fragment).into_iter().flatten();
                targets.extend(dynamic.cloned());
            }
            "$recursiveRef" => targets.extend(self.recursive_anchors.iter().cloned()),
            _ => {}
        }
        Ok(targets)
    }
}

/// An edge of the in-place graph; `via` is the reference keyword behind it, if any.
struct Edge {
    to: String,
    via: Option<String>,
}

/// Depth-first search of the in-place graph, iterative so that long reference chains cannot
/// exhaust the stack. Refuses a cycle (every cycle goes through a reference: in-place
/// subschemas only ever go deeper), and a graph whose references fan out to more than
/// [`MAX_IN_PLACE_EXPANSION`] evaluations of one value: `allOf: [{$ref: a}, {$ref: a}]` nested
/// forty times compiles in microseconds but would evaluate 2^40 subschemas.
fn check_graph(edges: &HashMap<String, Vec<Edge>>) -> Result<(), SchemaError> {
    // A node's expansion is known once it is finished; an open node is on the current path.
    let mut expansion: HashMap<&str, Option<usize>> = HashMap::new();
    // In pointer order, so one schema is always refused with the same error.
    let mut starts: Vec<&String> = edges.keys().collect();
    starts.sort_unstable();
    for start in starts {
        if expansion.contains_key(start.as_str()) {
            continue;
        }
        // (node, next edge to follow, reference that led here)
        let mut stack: Vec<(&str, usize, Option<&str>)> = vec![(start, 0, None)];
        expansion.insert(start, None);
        while let Some(frame) = stack.last_mut() {
            let (node, next, _) = *frame;
            let out = edges.get(node).map(Vec::as_slice).unwrap_or_default();
            let Some(edge) = out.get(next) else {
                let total = out.iter().fold(1usize, |total, edge| {
                    let below = expansion.get(edge.to.as_str()).copied().flatten();
                    total.saturating_add(below.unwrap_or(1))
                });
                if total > MAX_IN_PLACE_EXPANSION {
                    let via = out.iter().find_map(|edge| edge.via.as_deref());
                    return Err(SchemaError::new(
                        SchemaErrorKind::TooManyRefs,
                        via.unwrap_or(node),
                        format!(
                            "the references expand to more than {MAX_IN_PLACE_EXPANSION} subschemas applied to one value"
                        ),
                    ));
                }
                expansion.insert(node, Some(total));
                stack.pop();
                continue;
            };
            frame.1 += 1;
            match expansion.get(edge.to.as_str()) {
                Some(Some(_)) => {}
                Some(None) => {
                    let entered = stack.iter().position(|(open, _, _)| *open == edge.to);
                    let via = edge.via.as_deref().or_else(|| {
                        stack[entered.unwrap_or(0) + 1..]
                            .iter()
                            .find_map(|(_, _, via)| *via)
                    });
                    return Err(SchemaError::new(
                        SchemaErrorKind::RefCycle,
                        via.unwrap_or(node),
                        "references loop back without consuming any input",
                    ));
                }
                None => {
                    expansion.insert(&edge.to, None);
                    stack.push((&edge.to, 0, edge.via.as_deref()));
                }
            }
        }
    }
    Ok(())
}

/// `pointer` (a JSON pointer, `/` first) with each segment unescaped, then escaped again as
/// [`push_segment`] writes it: the form every node of the graph is recorded in.
fn canonical_pointer(pointer: &str) -> String {
    let mut canonical = String::with_capacity(pointer.len());
    for segment in pointer.split('/').skip(1) {
        push_segment(
            &mut canonical,
            &segment.replace("~1", "/").replace("~0", "~"),
        );
    }
    canonical
}

/// Drafts before 2019-09 name subschemas with `$id: "#name"`.
fn draft_uses_id_anchors(draft: Draft) -> bool {
    matches!(draft, Draft::Draft4 | Draft::Draft6 | Draft::Draft7)
}

/// The vocabulary meta-schemas of drafts 2020-12 and 2019-09 that the engine bundles; any other
/// address under theirs is another document.
const BUNDLED_VOCABULARIES: [(&str, &[&str]); 2] = [
    (
        "2020-12",
        &[
            "applicator",
            "content",
            "core",
            "format-annotation",
            "format-assertion",
            "meta-data",
            "unevaluated",
            "validation",
        ],
    ),
    (
        "2019-09",
        &[
            "applicator",
            "content",
            "core",
            "format",
            "meta-data",
            "validation",
        ],
    ),
];

/// The meta-schemas compiled into the engine: referring to them opens nothing.
fn is_bundled_meta_schema(uri: &str) -> bool {
    Draft::from_schema_uri(uri) != Draft::Unknown
        || BUNDLED_VOCABULARIES.iter().any(|(draft, vocabularies)| {
            uri.strip_prefix("https://json-schema.org/draft/")
                .and_then(|rest| rest.strip_prefix(draft))
                .and_then(|rest| rest.strip_prefix("/meta/"))
                .is_some_and(|name| vocabularies.contains(&name))
        })
}

fn without_fragment(uri: &Uri<String>) -> Result<Uri<String>, jsonschema::ReferencingError> {
    uri::from_str(uri.strip_fragment().as_str())
}

fn remote(pointer: &str, target: &str, what: &str) -> SchemaError {
    SchemaError::new(
        SchemaErrorKind::RemoteRef,
        pointer,
        format!(
            "{target:?} names {what}; references must stay inside the schema, which is never fetched from a network or a file"
        ),
    )
}

fn unresolvable(pointer: &str, why: &str) -> SchemaError {
    SchemaError::new(
        SchemaErrorKind::UnresolvableRef,
        pointer,
        format!("the reference points nowhere in the schema: {why}"),
    )
}

fn invalid(pointer: &str, error: impl std::fmt::Display) -> SchemaError {
    SchemaError::new(SchemaErrorKind::Invalid, pointer, error.to_string())
}
