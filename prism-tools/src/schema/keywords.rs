//! Where a JSON Schema document holds subschemas, for the walks that inspect or rewrite schemas
//! before they are compiled (validation) or lowered for a provider (this module).
//!
//! A schema is not a plain tree of keywords: under `properties` the keys are property names (a
//! property may be called `$ref`), under `enum` or `const` everything is data (an object there
//! with a `$ref` key is not a reference). Walking a schema correctly means knowing, keyword by
//! keyword, where the subschemas are. The table covers drafts 7, 2019-09 and 2020-12.

use serde_json::{Map, Value};

/// What a keyword's value holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// One subschema (`not`, `additionalProperties`…).
    Schema,
    /// An object whose values are subschemas (`properties`, `$defs`…).
    Map,
    /// An array of subschemas (`allOf`, `prefixItems`…).
    List,
    /// A subschema or an array of them (`items` before 2020-12).
    SchemaOrList,
    /// Data, never a schema (`enum`, `const`, `default`, `examples`).
    Data,
    /// Anything else: an assertion's argument, an annotation, an unknown keyword.
    Other,
}

/// Where `keyword` keeps its subschemas.
pub(crate) fn place_of(keyword: &str) -> Place {
    match keyword {
        "additionalProperties"
        | "additionalItems"
        | "contains"
        | "not"
        | "if"
        | "then"
        | "else"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "contentSchema" => Place::Schema,
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
        | "dependencies" => Place::Map,
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => Place::List,
        "items" => Place::SchemaOrList,
        "enum" | "const" | "default" | "examples" => Place::Data,
        _ => Place::Other,
    }
}

/// A subschema of a schema object, and how to reach it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Child<'a> {
    /// The parent's keyword holding it.
    pub keyword: &'a str,
    /// The key or index under that keyword, if any.
    pub entry: Option<Entry<'a>>,
    /// The subschema (an object or a boolean).
    pub schema: &'a Value,
}

/// A step below a keyword.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Entry<'a> {
    Key(&'a str),
    Index(usize),
}

impl Child<'_> {
    /// Appends this child's JSON pointer segments to `pointer`.
    pub fn push_pointer(&self, pointer: &mut String) {
        push_segment(pointer, self.keyword);
        match self.entry {
            Some(Entry::Key(key)) => push_segment(pointer, key),
            Some(Entry::Index(index)) => {
                pointer.push('/');
                pointer.push_str(&index.to_string());
            }
            None => {}
        }
    }
}

/// The subschemas directly below `schema`, in document order. Values that cannot be schemas
/// (a `dependencies` entry listing property names, say) are skipped.
pub(crate) fn children(schema: &Map<String, Value>) -> impl Iterator<Item = Child<'_>> {
    schema.iter().flat_map(|(keyword, value)| {
        let keyword = keyword.as_str();
        let child = move |entry, schema| Child {
            keyword,
            entry,
            schema,
        };
        let found: Vec<Child<'_>> = match (place_of(keyword), value) {
            (Place::Map, Value::Object(map)) => map
                .iter()
                .map(|(key, schema)| child(Some(Entry::Key(key)), schema))
                .collect(),
            (Place::List | Place::SchemaOrList, Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(index, schema)| child(Some(Entry::Index(index)), schema))
                .collect(),
            (Place::Schema | Place::SchemaOrList, value) => vec![child(None, value)],
            _ => Vec::new(),
        };
        found
            .into_iter()
            .filter(|child| child.schema.is_object() || child.schema.is_boolean())
    })
}

/// Appends `/segment` to a JSON pointer, escaping `~` and `/` (RFC 6901).
pub(crate) fn push_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn children_skip_data_and_name_maps_keys() {
        let schema = json!({
            "properties": {"$ref": {"type": "string"}, "a/b": true},
            "enum": [{"$ref": "#/x"}],
            "allOf": [{"minimum": 1}],
            "dependencies": {"a": ["b"], "c": {"required": ["d"]}},
            "items": {"type": "integer"}
        });
        let mut pointers: Vec<String> = children(schema.as_object().unwrap())
            .map(|child| {
                let mut pointer = String::new();
                child.push_pointer(&mut pointer);
                pointer
            })
            .collect();
        pointers.sort();
        assert_eq!(
            pointers,
            [
                "/allOf/0",
                "/dependencies/c",
                "/items",
                "/properties/$ref",
                "/properties/a~1b"
            ]
        );
    }
}
