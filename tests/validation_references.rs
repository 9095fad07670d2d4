//! References in the validation engine's pre-check: draft 7's `$ref` that hides its siblings,
//! and the same error for the same schema every time.
#![cfg(feature = "json-schema")]

use std::collections::BTreeSet;

use prism::validation::{JsonSchemaEngine, SchemaEngine};
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
