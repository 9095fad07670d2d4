//! Local `$ref` resolution (`#` and `#/json/pointer`), the only kind lowering follows.

use std::collections::HashSet;

use serde_json::Value;

use super::keywords::{Place, place_of};

/// The target of a local reference inside `root` and its JSON pointer, or `None` when the
/// reference is not a local JSON pointer (`https://…`, `#anchor`) or points at nothing.
pub(crate) fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<(&'a Value, String)> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some((root, String::new()));
    }
    if !fragment.starts_with('/') {
        return None;
    }
    let pointer = percent_decode(fragment)?;
    root.pointer(&pointer).map(|target| (target, pointer))
}

/// Why the schema's references cannot all be followed to their end: the first local reference
/// that leads back to a schema it is inside of (a recursive type), or a chain of references
/// longer than `max_chain` (followed further, it could exhaust the stack).
/// Definitions are only followed from where they are used; references that do not resolve are
/// skipped (the walks report them).
pub(crate) fn find_recursion(root: &Value, max_chain: usize) -> Option<String> {
    let mut search = Recursion {
        root,
        max_chain,
        active: Vec::new(),
        done: HashSet::new(),
    };
    search.scan(root)
}

struct Recursion<'a> {
    root: &'a Value,
    max_chain: usize,
    /// The targets being scanned, outermost first.
    active: Vec<String>,
    done: HashSet<String>,
}

impl<'a> Recursion<'a> {
    /// Scans the schema `schema` (already bounded in depth by the input check; the references
    /// it follows are bounded here).
    fn scan(&mut self, schema: &'a Value) -> Option<String> {
        let Value::Object(map) = schema else {
            return None;
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str)
            && let Some((target, pointer)) = resolve_local(self.root, reference)
        {
            if self.active.contains(&pointer) || pointer.is_empty() {
                return Some(format!("the schema is recursive (`$ref: {reference}`)"));
            }
            if self.active.len() >= self.max_chain {
                return Some(format!(
                    "the schema's references run more than {} deep",
                    self.max_chain
                ));
            }
            if self.done.insert(pointer.clone()) {
                self.active.push(pointer);
                let found = self.scan(target);
                self.active.pop();
                if found.is_some() {
                    return found;
                }
            }
        }
        for (keyword, value) in map {
            let found = match (place_of(keyword), value) {
                _ if matches!(keyword.as_str(), "$defs" | "definitions") => None,
                (Place::Schema | Place::SchemaOrList, Value::Object(_)) => self.scan(value),
                (Place::Map, Value::Object(entries)) => {
                    entries.values().find_map(|entry| self.scan(entry))
                }
                (Place::List | Place::SchemaOrList, Value::Array(items)) => {
                    items.iter().find_map(|item| self.scan(item))
                }
                _ => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

/// Decodes `%XX` escapes of a URI fragment; `None` for a malformed escape or non-UTF-8 result.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            decoded.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_root_and_pointers_with_escapes() {
        let root = json!({"$defs": {"a/b": {"type": "string"}, "c d": {"type": "integer"}}});
        assert_eq!(resolve_local(&root, "#").unwrap().1, "");
        let (target, pointer) = resolve_local(&root, "#/$defs/a~1b").unwrap();
        assert_eq!(target, &json!({"type": "string"}));
        assert_eq!(pointer, "/$defs/a~1b");
        assert_eq!(
            resolve_local(&root, "#/$defs/c%20d").unwrap().0,
            &json!({"type": "integer"})
        );
    }

    #[test]
    fn finds_recursion_through_definitions_only_when_used() {
        let tree = json!({
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"properties": {"children": {"items": {"$ref": "#/$defs/Node"}}}}}
        });
        assert_eq!(
            find_recursion(&tree, 50).as_deref(),
            Some("the schema is recursive (`$ref: #/$defs/Node`)")
        );
        let unused = json!({"$defs": {"Loop": {"$ref": "#/$defs/Loop"}}});
        assert_eq!(find_recursion(&unused, 50), None);
        let shared = json!({
            "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"type": "string"}}
        });
        assert_eq!(find_recursion(&shared, 50), None);
        assert!(find_recursion(&json!({"properties": {"again": {"$ref": "#"}}}), 50).is_some());
    }

    #[test]
    fn refuses_remote_anchors_missing_and_malformed() {
        let root = json!({"$defs": {}});
        for reference in [
            "https://example.com/s",
            "#anchor",
            "#/$defs/missing",
            "#/%zz",
            "",
        ] {
            assert!(resolve_local(&root, reference).is_none(), "{reference}");
        }
    }
}
