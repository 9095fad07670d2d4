//! Each lowering rule and each error, on hand-written schemas like the ones hosts and remote MCP
//! servers send.

use prism::schema::{
    Dialect, DowngradeAction, LoweredSchema, LoweringError, LoweringErrorKind, lower,
};
use serde_json::{Value, json};

const OPENAI_STRICT: Dialect = Dialect::OpenAiChat { strict: true };
const ANTHROPIC_STRICT: Dialect = Dialect::Anthropic { strict: true };

fn lowered(schema: Value, dialect: Dialect) -> LoweredSchema {
    lower(&schema, dialect).unwrap_or_else(|error| panic!("{dialect}: {error}"))
}

fn error(schema: Value, dialect: Dialect) -> LoweringError {
    match lower(&schema, dialect) {
        Ok(lowered) => panic!("{dialect} lowered {}", lowered.schema()),
        Err(error) => error,
    }
}

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

fn has(lowered: &LoweredSchema, pointer: &str, keyword: &str) -> Option<DowngradeAction> {
    lowered
        .downgrades()
        .iter()
        .find(|downgrade| downgrade.pointer == pointer && downgrade.keyword == keyword)
        .map(|downgrade| downgrade.action.clone())
}

#[test]
fn the_root_must_be_an_object() {
    for schema in [
        json!({"type": "string"}),
        json!(false),
        json!(3),
        json!({"type": ["string", "null"]}),
    ] {
        for dialect in Dialect::ALL {
            assert_eq!(
                error(schema.clone(), dialect).kind,
                LoweringErrorKind::NotAnObject,
                "{schema}"
            );
        }
    }
    let anything = lowered(json!({}), Dialect::Mcp);
    assert_eq!(
        anything.schema(),
        &json!({"type": "object", "properties": {}})
    );
    let untyped = lowered(
        json!({"properties": {"a": {"type": "string"}}}),
        Dialect::Mcp,
    );
    assert_eq!(untyped.schema()["type"], "object");
    assert!(has(&untyped, "", "type").is_some());
    let nullable_root = lowered(json!({"type": ["object", "null"]}), Dialect::Mcp);
    assert_eq!(nullable_root.schema()["type"], "object");
}

#[test]
fn a_root_reference_is_replaced_by_its_target() {
    let args =
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"]});
    let schema = json!({"$ref": "#/$defs/Args", "$defs": {"Args": args, "A": {"type": "string"}}});
    let strict = lowered(schema, OPENAI_STRICT);
    assert!(strict.strict());
    assert_eq!(
        strict.schema()["properties"]["a"],
        json!({"$ref": "#/$defs/A"})
    );
    assert_eq!(strict.schema()["$defs"]["A"], json!({"type": "string"}));
}

#[test]
fn malformed_keywords_are_errors_with_their_pointer() {
    let cases = [
        (object(json!({"a": {"type": 5}})), "/properties/a", "type"),
        (
            json!({"type": "object", "properties": []}),
            "",
            "properties",
        ),
        (
            json!({"type": "object", "required": "a", "properties": {}}),
            "",
            "required",
        ),
        (
            object(json!({"a": {"anyOf": {}}})),
            "/properties/a",
            "anyOf",
        ),
        (object(json!({"a": 7})), "/properties/a", "schema"),
    ];
    for (schema, pointer, keyword) in cases {
        let found = error(schema.clone(), OPENAI_STRICT);
        assert_eq!(found.pointer, pointer, "{schema}");
        assert!(
            matches!(&found.kind, LoweringErrorKind::InvalidKeyword { keyword: k, .. } if k == keyword),
            "{found:?}"
        );
        assert!(found.to_string().contains(keyword));
    }
}

#[test]
fn references_that_cannot_be_inlined() {
    let remote = object(json!({"a": {"$ref": "https://example.com/a.json"}}));
    for dialect in [Dialect::NoRef, Dialect::GeminiParameters] {
        let found = error(remote.clone(), dialect);
        assert_eq!(found.pointer, "/properties/a");
        assert!(matches!(
            found.kind,
            LoweringErrorKind::UnresolvableReference { .. }
        ));
    }
    // Strict mode cannot check a remote document: the tool goes non-strict.
    let strict = lowered(remote.clone(), OPENAI_STRICT);
    assert!(!strict.strict());
    assert!(
        strict
            .non_strict_reason()
            .unwrap()
            .contains("another document")
    );
    // A missing local target is broken everywhere references are followed.
    let missing = object(json!({"a": {"$ref": "#/$defs/Nope"}}));
    assert!(matches!(
        error(missing.clone(), OPENAI_STRICT).kind,
        LoweringErrorKind::UnresolvableReference { .. }
    ));
    let recursive = json!({"type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}}, "$defs": {"Node": object(json!({"next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}}))}});
    for dialect in [Dialect::NoRef, Dialect::GeminiParameters] {
        let found = error(recursive.clone(), dialect);
        assert!(
            matches!(found.kind, LoweringErrorKind::RecursiveReference { .. }),
            "{found:?}"
        );
        assert_eq!(found.pointer, "/$defs/Node/properties/next/anyOf/0");
    }
    assert!(lowered(recursive.clone(), OPENAI_STRICT).strict());
    let anthropic = lowered(recursive, ANTHROPIC_STRICT);
    assert!(anthropic.non_strict_reason().unwrap().contains("recursive"));
}

#[test]
fn hostile_schemas_get_errors_not_overflows() {
    // Deep: past the JSON depth bound.
    let mut deep = json!({"type": "string"});
    for _ in 0..200 {
        deep = json!({"type": "object", "properties": {"a": deep}});
    }
    for dialect in Dialect::ALL {
        assert!(matches!(
            error(deep.clone(), dialect).kind,
            LoweringErrorKind::TooDeep { .. }
        ));
    }
    // Large: past the byte bound.
    let big = object(json!({"a": {"type": "string", "description": "x".repeat(2 << 20)}}));
    assert!(matches!(
        error(big, Dialect::Mcp).kind,
        LoweringErrorKind::TooLarge { .. }
    ));
    // A reference bomb: each definition uses the previous one twice; inlining doubles per level.
    let mut defs = serde_json::Map::new();
    defs.insert("D0".into(), json!({"type": "string"}));
    for level in 1..40 {
        let previous = format!("#/$defs/D{}", level - 1);
        defs.insert(
            format!("D{level}"),
            object(json!({"l": {"$ref": previous}, "r": {"$ref": previous}})),
        );
    }
    let bomb =
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/D39"}}, "$defs": defs});
    for dialect in [Dialect::NoRef, Dialect::GeminiParameters] {
        assert!(matches!(
            error(bomb.clone(), dialect).kind,
            LoweringErrorKind::TooLarge { .. } | LoweringErrorKind::TooDeep { .. }
        ));
    }
    // Keeping references, the same schema is small and lowers.
    assert!(lowered(bomb, OPENAI_STRICT).strict());
}

#[test]
fn strict_mode_closes_objects_and_requires_every_property() {
    let schema = object(json!({
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0, "format": "uint8"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "unit": {"type": "string", "enum": ["c", "f"], "description": "Unit."},
        "nested": {"properties": {"x": {"type": "number"}}}
    }));
    let mut schema = schema;
    schema["required"] = json!(["name"]);
    for dialect in [OPENAI_STRICT, Dialect::OpenAiResponses { strict: true }] {
        let strict = lowered(schema.clone(), dialect);
        assert!(strict.strict() && strict.non_strict_reason().is_none());
        let out = strict.schema();
        assert_eq!(
            out["required"],
            json!(["name", "age", "tags", "unit", "nested"])
        );
        assert_eq!(out["additionalProperties"], false);
        assert_eq!(
            out["properties"]["age"],
            json!({"type": ["integer", "null"], "minimum": 0})
        );
        assert_eq!(out["properties"]["tags"]["type"], json!(["array", "null"]));
        assert_eq!(
            out["properties"]["unit"],
            json!({"description": "Unit.", "anyOf": [{"type": "string", "enum": ["c", "f"]}, {"type": "null"}]})
        );
        let nested = &out["properties"]["nested"];
        assert_eq!(nested["additionalProperties"], false);
        assert_eq!(nested["required"], json!(["x"]));
        assert_eq!(
            has(&strict, "/properties/age", "format"),
            Some(DowngradeAction::Removed)
        );
        assert!(matches!(
            has(&strict, "/properties/nested", "type"),
            Some(DowngradeAction::Rewritten(_))
        ));
    }
    // Non-strict OpenAI sends the canonical schema, and says so explicitly.
    let loose = lowered(schema.clone(), Dialect::OpenAiResponses { strict: false });
    assert!(!loose.strict());
    assert_eq!(loose.schema(), &schema);
    assert!(loose.downgrades().is_empty());
}

#[test]
fn strict_unions_references_and_all_of() {
    let schema = json!({
        "type": "object",
        "properties": {
            "shape": {"oneOf": [object(json!({"r": {"type": "number"}})), object(json!({"s": {"type": "number"}}))]},
            "unit": {"$ref": "#/$defs/Unit", "description": "The unit."},
            "both": {"allOf": [object(json!({"a": {"type": "string"}})), {"properties": {"b": {"type": "integer"}}, "required": ["b"]}]}
        },
        "required": ["shape", "unit", "both"],
        "$defs": {"Unit": {"type": "string", "enum": ["c", "f"]}}
    });
    let strict = lowered(schema, OPENAI_STRICT);
    let out = strict.schema();
    assert!(out["properties"]["shape"].get("oneOf").is_none());
    assert_eq!(
        out["properties"]["shape"]["anyOf"][1]["required"],
        json!(["s"])
    );
    assert_eq!(
        out["properties"]["unit"],
        json!({"anyOf": [{"$ref": "#/$defs/Unit"}], "description": "The unit."})
    );
    let both = &out["properties"]["both"];
    assert!(both.get("allOf").is_none());
    assert_eq!(both["required"], json!(["a", "b"]));
    assert_eq!(both["properties"]["a"]["type"], json!(["string", "null"]));
    assert_eq!(both["properties"]["b"]["type"], json!("integer"));
    for keyword in ["oneOf", "$ref", "allOf"] {
        let pointer = match keyword {
            "oneOf" => "/properties/shape",
            "$ref" => "/properties/unit",
            _ => "/properties/both",
        };
        assert!(
            matches!(
                has(&strict, pointer, keyword),
                Some(DowngradeAction::Rewritten(_))
            ),
            "{keyword}"
        );
    }
}

#[test]
fn schemas_without_a_strict_form_fall_back_with_the_reason() {
    let cases = [
        (
            object(json!({"m": {"type": "object", "additionalProperties": {"type": "string"}}})),
            "/properties/m is a map",
        ),
        (
            object(json!({"m": {"type": "object", "additionalProperties": true}})),
            "/properties/m is a map",
        ),
        (
            object(json!({"m": {"type": "object", "patternProperties": {"^x": {}}}})),
            "patternProperties",
        ),
        (
            object(
                json!({"t": {"type": "array", "prefixItems": [{"type": "string"}], "items": false}}),
            ),
            "tuple",
        ),
        (
            object(json!({"a": true})),
            "/properties/a accepts any value",
        ),
        (
            object(json!({"a": {"description": "anything"}})),
            "/properties/a has no type",
        ),
        (object(json!({"a": {"type": "array"}})), "without `items`"),
        (
            json!({"type": "object", "properties": {}, "required": ["ghost"]}),
            "`ghost`",
        ),
        (
            json!({"type": "object", "anyOf": [object(json!({})), object(json!({"a": {"type": "string"}}))]}),
            "the root is a union",
        ),
        (
            object(
                json!({"a": {"allOf": [object(json!({"x": {"type": "string"}})), object(json!({"x": {"type": "integer"}}))]}}),
            ),
            "disagree on property `x`",
        ),
    ];
    for (schema, reason) in cases {
        for dialect in [OPENAI_STRICT, ANTHROPIC_STRICT] {
            let fallback = lowered(schema.clone(), dialect);
            assert!(!fallback.strict(), "{dialect}: {schema}");
            let found = fallback.non_strict_reason().unwrap();
            assert!(
                found.contains(reason),
                "{dialect}: {found:?} lacks {reason:?}"
            );
            // The fallback is the dialect's non-strict schema.
            assert_eq!(
                fallback.schema(),
                lowered(schema.clone(), Dialect::Mcp).schema()
            );
        }
    }
}

#[test]
fn openai_size_limits_fall_back() {
    let values: Vec<Value> = (0..1001).map(|i| json!(format!("v{i}"))).collect();
    let many = lowered(
        object(json!({"e": {"type": "string", "enum": values}})),
        OPENAI_STRICT,
    );
    assert!(
        many.non_strict_reason()
            .unwrap()
            .contains("1001 enum values")
    );
}

#[test]
fn anthropic_strict_describes_what_it_cannot_enforce() {
    let mut schema = object(json!({
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "format": "uint8", "description": "Age."},
        "site": {"type": "string", "format": "uri"},
        "code": {"type": "string", "pattern": "^[A-Z]+$", "minLength": 2},
        "list": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
        "kind": {"type": "string", "const": "a"}
    }));
    schema["required"] = json!(["age"]);
    let strict = lowered(schema, ANTHROPIC_STRICT);
    assert!(strict.strict());
    let out = strict.schema();
    assert_eq!(
        out["required"],
        json!(["age"]),
        "optional properties stay optional"
    );
    assert_eq!(
        out["properties"]["age"],
        json!({"type": "integer", "description": "Age.\n\n{minimum: 0, maximum: 150}"})
    );
    assert_eq!(
        out["properties"]["site"],
        json!({"type": "string", "format": "uri"})
    );
    assert_eq!(
        out["properties"]["code"]["description"],
        json!("{pattern: \"^[A-Z]+$\", minLength: 2}")
    );
    assert_eq!(out["properties"]["list"]["minItems"], 1);
    assert_eq!(
        out["properties"]["list"]["description"],
        json!("{maxItems: 3}")
    );
    assert_eq!(out["properties"]["kind"]["const"], "a");
    assert_eq!(
        has(&strict, "/properties/age", "format"),
        Some(DowngradeAction::Removed)
    );
    assert_eq!(
        has(&strict, "/properties/age", "minimum"),
        Some(DowngradeAction::MovedToDescription)
    );
    // Nothing becomes nullable, so nothing needs restoring.
    let mut arguments = json!({"age": 3, "site": null});
    strict.restore_arguments(&mut arguments);
    assert_eq!(arguments, json!({"age": 3, "site": null}));
    // Non-strict Anthropic takes the canonical schema.
    assert!(
        lowered(
            object(json!({"m": {"type": "object", "additionalProperties": true}})),
            Dialect::Anthropic { strict: false }
        )
        .downgrades()
        .is_empty()
    );
}

#[test]
fn gemini_parameters_speak_the_openapi_subset() {
    let schema = json!({
        "type": "object",
        "properties": {
            "either": {"type": ["string", "integer"]},
            "maybe": {"type": ["string", "null"]},
            "kind": {"const": "circle"},
            "level": {"type": "integer", "enum": [1, 2]},
            "count": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10, "format": "uint32"},
            "ratio": {"type": "number", "exclusiveMinimum": 0.5, "format": "double"},
            "when": {"type": "string", "format": "date-time"},
            "mail": {"type": "string", "format": "email"},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
            "merged": {"allOf": [object(json!({"a": {"type": "string"}})), {"required": ["a"]}]},
            "map": {"type": "object", "additionalProperties": {"type": "string"}},
            "unit": {"$ref": "#/$defs/Unit", "description": "Unit."}
        },
        "$defs": {"Unit": {"enum": ["c", "f", null]}}
    });
    let gemini = lowered(schema, Dialect::GeminiParameters);
    let p = &gemini.schema()["properties"];
    assert_eq!(
        p["either"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    assert_eq!(p["maybe"], json!({"type": "string", "nullable": true}));
    assert_eq!(p["kind"], json!({"enum": ["circle"], "type": "string"}));
    assert_eq!(p["level"], json!({"type": "integer"}));
    assert_eq!(
        p["count"],
        json!({"type": "integer", "minimum": 1, "maximum": 9})
    );
    assert_eq!(p["ratio"], json!({"type": "number", "format": "double"}));
    assert_eq!(p["when"]["format"], "date-time");
    assert!(p["mail"].get("format").is_none());
    assert_eq!(
        p["pair"]["items"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    assert_eq!(p["merged"]["required"], json!(["a"]));
    assert_eq!(p["map"], json!({"type": "object"}));
    assert_eq!(
        p["unit"],
        json!({"enum": ["c", "f"], "nullable": true, "type": "string", "description": "Unit."})
    );
    assert!(gemini.schema().get("$defs").is_none());
    assert_eq!(
        has(&gemini, "/properties/level", "enum"),
        Some(DowngradeAction::Removed)
    );
    assert_eq!(
        has(&gemini, "/properties/map", "additionalProperties"),
        Some(DowngradeAction::Removed)
    );
    assert_eq!(
        has(&gemini, "/properties/ratio", "exclusiveMinimum"),
        Some(DowngradeAction::Removed)
    );
    assert!(matches!(
        has(&gemini, "/$defs/Unit", "enum"),
        Some(DowngradeAction::Rewritten(_))
    ));
    // A `false` subschema has no form.
    let never = error(object(json!({"gone": false})), Dialect::GeminiParameters);
    assert!(matches!(never.kind, LoweringErrorKind::Unsupported { .. }));
}

#[test]
fn gemini_json_schema_is_lighter() {
    let schema = json!({
        "type": "object",
        "properties": {
            "unit": {"$ref": "#/$defs/Unit", "description": "Unit."},
            "kind": {"oneOf": [{"const": "a"}, {"type": "integer", "format": "uint16", "minLength": 1}]},
            "maybe": {"type": ["string", "null"]},
            "tree": {"$ref": "#/$defs/Tree"}
        },
        "$defs": {"Unit": {"type": "string", "enum": ["c", "f"]}, "Tree": object(json!({"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}))}
    });
    let gemini = lowered(schema, Dialect::GeminiJsonSchema);
    let p = &gemini.schema()["properties"];
    assert_eq!(
        p["unit"],
        json!({"description": "Unit.", "anyOf": [{"$ref": "#/$defs/Unit"}]})
    );
    assert_eq!(
        p["kind"],
        json!({"anyOf": [{"enum": ["a"]}, {"type": "integer"}]})
    );
    assert_eq!(p["maybe"], json!({"type": ["string", "null"]}));
    assert_eq!(p["tree"], json!({"$ref": "#/$defs/Tree"}));
    assert_eq!(
        has(&gemini, "/properties/kind/oneOf/1", "format"),
        Some(DowngradeAction::Removed)
    );
    assert_eq!(
        has(&gemini, "/properties/kind/oneOf/1", "minLength"),
        Some(DowngradeAction::Removed)
    );
}

#[test]
fn mcp_and_no_ref_keep_the_canonical_schema_otherwise() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "minLength": 3}, "b": {"$ref": "#/$defs/A", "description": "B."}},
        "additionalProperties": {"type": "integer"},
        "$defs": {"A": {"type": "string", "minLength": 1, "description": "A."}}
    });
    assert_eq!(lowered(schema.clone(), Dialect::Mcp).schema(), &schema);
    let inlined = lowered(schema, Dialect::NoRef);
    let p = &inlined.schema()["properties"];
    // A conflicting keyword beside a reference: both apply, under `allOf`.
    assert_eq!(
        p["a"],
        json!({"allOf": [{"type": "string", "minLength": 1, "description": "A."}, {"minLength": 3}]})
    );
    // An annotation beside a reference overrides the target's.
    assert_eq!(
        p["b"],
        json!({"type": "string", "minLength": 1, "description": "B."})
    );
    assert_eq!(
        inlined.schema()["additionalProperties"],
        json!({"type": "integer"})
    );
}

#[test]
fn restoring_walks_arrays_references_and_union_branches() {
    let schema = json!({
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "pick": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}, "size": {"type": "integer"}}, "required": ["kind"]},
                {"type": "object", "properties": {"kind": {"const": "b"}, "size": {"type": "string"}}, "required": ["kind"]}
            ]}
        },
        "required": ["items", "pick"],
        "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}, "note": {"type": "string"}, "keep": {"type": ["string", "null"]}}, "required": ["id"]}}
    });
    let strict = lowered(schema, OPENAI_STRICT);
    let mut arguments = json!({
        "items": [{"id": 1, "note": null, "keep": null}, {"id": 2, "note": "x", "keep": "y"}],
        "pick": {"kind": "b", "size": null}
    });
    strict.restore_arguments(&mut arguments);
    assert_eq!(
        arguments,
        json!({"items": [{"id": 1, "keep": null}, {"id": 2, "note": "x", "keep": "y"}], "pick": {"kind": "b"}})
    );
    // Arguments that match nothing are left for validation to report.
    let mut odd = json!({"items": "not a list", "pick": 3});
    strict.restore_arguments(&mut odd);
    assert_eq!(odd, json!({"items": "not a list", "pick": 3}));
}

#[test]
fn downgrades_and_errors_read_as_sentences() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "format": "int64"}}, "required": ["n"], "additionalProperties": false});
    let strict = lowered(schema, OPENAI_STRICT);
    let text: Vec<String> = strict
        .downgrades()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(text, ["`format` at /properties/n: removed"]);
    let found = error(json!({"type": "string"}), Dialect::Mcp);
    assert_eq!(
        found.to_string(),
        "tool parameters must be an object schema (`type: object`), and the root is not"
    );
}

fn lowered_tuple(tuple: serde_json::Value) -> serde_json::Value {
    let schema = json!({"type": "object", "properties": {"t": tuple}});
    let lowered = lower(&schema, Dialect::GeminiParameters).unwrap();
    lowered.schema()["properties"]["t"].clone()
}

#[test]
fn an_integer_keeps_the_tighter_of_its_exclusive_and_inclusive_bounds() {
    let lowered = |bounds: serde_json::Value| {
        let mut property = json!({"type": "integer"});
        if let (Some(property), Some(bounds)) = (property.as_object_mut(), bounds.as_object()) {
            property.extend(bounds.clone());
        }
        lowered_tuple(property)
    };
    assert_eq!(
        lowered(
            json!({"minimum": 0, "exclusiveMinimum": 5, "maximum": 100, "exclusiveMaximum": 10})
        ),
        json!({"type": "integer", "minimum": 6, "maximum": 9})
    );
    assert_eq!(
        lowered(json!({"minimum": 7, "exclusiveMinimum": 5, "maximum": 8, "exclusiveMaximum": 10})),
        json!({"type": "integer", "minimum": 7, "maximum": 8})
    );
    assert_eq!(
        lowered(json!({"exclusiveMinimum": 0.5, "exclusiveMaximum": 9.5})),
        json!({"type": "integer", "minimum": 1, "maximum": 9})
    );
}

#[test]
fn a_tuple_keeps_its_rest_and_its_closed_length() {
    let pair = json!([{"type": "string"}, {"type": "integer"}]);
    let either = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
    assert_eq!(
        lowered_tuple(json!({"type": "array", "prefixItems": pair, "items": false})),
        json!({"type": "array", "items": either, "maxItems": 2})
    );
    assert_eq!(
        lowered_tuple(json!({"type": "array", "items": pair, "additionalItems": false})),
        json!({"type": "array", "items": either, "maxItems": 2})
    );
    assert_eq!(
        lowered_tuple(json!({
            "type": "array", "prefixItems": pair, "items": false, "maxItems": 5
        })),
        json!({"type": "array", "maxItems": 2, "items": either})
    );
    assert_eq!(
        lowered_tuple(json!({
            "type": "array", "prefixItems": pair, "items": {"type": "boolean"}
        })),
        json!({"type": "array", "items": {"anyOf": [
            {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
        ]}})
    );
}

/// A union whose only branches are `null` is the type `null`, as a type list of `null` alone is;
/// an empty `anyOf`, which Gemini refuses, is never sent.
#[test]
fn a_union_of_null_alone_is_the_null_type_for_gemini() {
    for union in [
        json!([{"type": "null"}]),
        json!([{"type": "null"}, {"type": "null"}]),
    ] {
        let schema = json!({"type": "object", "properties": {"n": {"anyOf": union}}});
        let lowered = lower(&schema, Dialect::GeminiParameters).unwrap();
        assert_eq!(lowered.schema()["properties"]["n"], json!({"type": "null"}));
    }
}

/// `parametersJsonSchema` has no exclusive bounds either: an integer's become inclusive ones, as
/// for `parameters`, rather than being dropped.
#[test]
fn an_integer_keeps_its_exclusive_bounds_as_inclusive_ones_in_gemini_json() {
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "integer", "exclusiveMinimum": 5, "exclusiveMaximum": 10},
        "x": {"type": "number", "exclusiveMinimum": 0.5},
    }});
    let lowered = lower(&schema, Dialect::GeminiJsonSchema).unwrap();
    let properties = &lowered.schema()["properties"];
    assert_eq!(
        properties["n"],
        json!({"type": "integer", "minimum": 6, "maximum": 9})
    );
    assert_eq!(properties["x"], json!({"type": "number"}));
}
