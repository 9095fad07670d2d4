//! References in the validation engine's pre-check: draft 7's `$ref` that hides its siblings,
//! and the same error for the same schema every time.
#![cfg(feature = "json-schema")]

use std::collections::BTreeSet;

use prism::validation::{JsonSchemaEngine, SchemaEngine, SchemaErrorKind};
use serde_json::json;

/// Draft 7 ignores every keyword beside `$ref`, `$id` included (JSON-Schema-Test-Suite draft7
/// ref.json, "$ref prevents a sibling $id from changing the base uri"). The schema is valid and
/// self-contained, and the pre-check must not resolve `#/definitions/b` against the ignored
/// sibling `$id`.
#[test]
fn draft7_ref_with_a_sibling_id_is_accepted() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {
            "a": {"$id": "http://example.com/other/a.json", "$ref": "#/definitions/b"},
            "b": {"type": "integer"}
        },
        "properties": {"x": {"$ref": "#/definitions/a"}}
    });
    // The bare engine (offline) agrees with the spec.
    let bare = jsonschema::options().offline().build(&schema).unwrap();
    assert!(bare.is_valid(&json!({"x": 1})));
    assert!(!bare.is_valid(&json!({"x": "one"})));

    let engine = JsonSchemaEngine::new();
    let compiled = engine
        .compile(&schema)
        .expect("a valid draft-7 schema must compile");
    assert!(engine.check(&compiled, &json!({"x": 1})).is_ok());
    assert!(engine.check(&compiled, &json!({"x": "one"})).is_err());
}

/// Up to draft 7 a root `$ref` hides its siblings, yet the document stays a resource its
/// references resolve in. Generators write draft-7 schemas this way (`{"$ref":
/// "#/definitions/Args", "definitions": {...}}`); such a schema is self-contained and must
/// compile, and a loop through the root must still be refused as a loop.
#[test]
fn a_root_ref_of_draft_7_or_4_resolves_inside_the_document() {
    for draft in [
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-04/schema#",
    ] {
        let schema = json!({
            "$schema": draft,
            "$ref": "#/definitions/args",
            "definitions": {
                "args": {"type": "object", "properties": {"n": {"$ref": "#/definitions/count"}}},
                "count": {"type": "integer"}
            }
        });
        let engine = JsonSchemaEngine::new();
        let compiled = engine
            .compile(&schema)
            .unwrap_or_else(|error| panic!("{draft}: a self-contained schema is refused: {error}"));
        assert!(engine.check(&compiled, &json!({"n": 1})).is_ok(), "{draft}");
        assert!(
            engine.check(&compiled, &json!({"n": "one"})).is_err(),
            "{draft}"
        );

        let looping = json!({"$schema": draft, "$ref": "#"});
        let error = JsonSchemaEngine::new().compile(&looping).unwrap_err();
        assert_eq!(
            (error.kind, error.pointer.as_str()),
            (SchemaErrorKind::RefCycle, "/$ref"),
            "{draft}"
        );
    }
}

/// Two subschemas of one resource may not carry the same anchor (the drafts require anchors to
/// be unique). The engine resolves such a name to one of them and the reference check to
/// another, so a loop through the one the engine picks went unseen, and the engine, which takes
/// a loop as valid, then accepted any value.
#[test]
fn a_duplicate_anchor_is_refused() {
    let schema = json!({
        "$defs": {
            "a": {"$anchor": "x", "type": "integer"},
            "b": {"$anchor": "x", "allOf": [{"$ref": "#x"}]}
        },
        "$ref": "#x"
    });
    let error = JsonSchemaEngine::new()
        .compile(&schema)
        .expect_err("a schema with a duplicate anchor must not compile");
    assert_eq!(
        (error.kind, error.pointer.as_str()),
        (SchemaErrorKind::Invalid, "/$defs/b/$anchor")
    );
}

/// A reference to a draft's meta-schema resolves offline only for the vocabulary meta-schemas
/// the engine bundles; any other address under `https://json-schema.org/draft/…/meta/` is
/// another document, refused as remote at the keyword that names it.
#[test]
fn only_the_bundled_vocabulary_meta_schemas_are_offline() {
    let engine = JsonSchemaEngine::new();
    let bundled = "https://json-schema.org/draft/2020-12/meta/validation";
    let schema = json!({"properties": {"a": {"$ref": bundled}}});
    assert!(engine.compile(&schema).is_ok());
    let schema = json!({"properties": {"a": {"$ref": "https://json-schema.org/draft/2020-12/meta/nonexistent"}}});
    let error = engine.compile(&schema).unwrap_err();
    assert_eq!(
        (error.kind, error.pointer.as_str()),
        (SchemaErrorKind::RemoteRef, "/properties/a/$ref")
    );
}

/// Two independent reference loops: the error must name the same one every time the same
/// schema is compiled. The loop check walks a `HashMap` (random iteration order), so the
/// reported pointer changes from one compilation to the next.
#[test]
fn the_same_bad_schema_gets_the_same_error_every_time() {
    let schema = json!({
        "$defs": {
            "a": {"$ref": "#/$defs/a"},
            "b": {"$ref": "#/$defs/b"},
            "c": {"$ref": "#/$defs/c"},
            "d": {"$ref": "#/$defs/d"}
        }
    });
    let mut pointers = BTreeSet::new();
    for _ in 0..64 {
        // A fresh engine each time, so no cache answers.
        let error = JsonSchemaEngine::new().compile(&schema).unwrap_err();
        pointers.insert(error.pointer);
    }
    assert_eq!(
        pointers.len(),
        1,
        "one schema, several answers: {pointers:?}"
    );
}

/// A subschema may refer to the meta-schema of another draft than its document's: the engine
/// bundles both, so the reference resolves offline and validates as that draft's meta-schema.
#[test]
fn a_reference_to_another_drafts_meta_schema_resolves_offline() {
    let engine = JsonSchemaEngine::new();
    for (draft, other) in [
        (
            "https://json-schema.org/draft/2020-12/schema",
            "https://json-schema.org/draft/2019-09/schema",
        ),
        (
            "https://json-schema.org/draft/2019-09/schema",
            "https://json-schema.org/draft/2020-12/schema",
        ),
    ] {
        let schema = json!({
            "$schema": draft,
            "type": "object",
            "properties": {"schema": {"$ref": other}}
        });
        let compiled = engine
            .compile(&schema)
            .unwrap_or_else(|error| panic!("{draft} -> {other}: {error:?}"));
        assert!(
            engine
                .check(&compiled, &json!({"schema": {"type": "string"}}))
                .is_ok(),
            "{draft} -> {other}"
        );
        assert!(
            engine
                .check(&compiled, &json!({"schema": {"type": 5}}))
                .is_err(),
            "{draft} -> {other}"
        );
    }
}
