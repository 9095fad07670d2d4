//! `JsonSchemaEngine` limits: each bound just under and just over, and hostile schemas that
//! must be refused (or checked) in bounded time and memory.

#![cfg(feature = "json-schema")]

use prism::validation::{
    ArgumentError, JsonSchemaEngine, SchemaEngine, SchemaError, SchemaErrorKind, ValidationLimits,
};
use serde_json::{Map, Value, json};

fn compile(validator: &JsonSchemaEngine, schema: &Value) -> Result<(), SchemaError> {
    validator.compile(schema).map(drop)
}

fn refused(validator: &JsonSchemaEngine, schema: &Value) -> SchemaError {
    validator
        .compile(schema)
        .expect_err("the schema must be refused")
}

/// `{"items": {"items": … {}}}`, `levels` objects deep (built without recursion).
fn nested_items(levels: usize) -> Value {
    let mut schema = json!({});
    for _ in 1..levels {
        // `json!` would serialise the inner value recursively; move it instead.
        schema = Value::Object(Map::from_iter([("items".to_owned(), schema)]));
    }
    schema
}

/// Drops a deep value one level at a time, so the test's own stack stays small.
fn dismantle(mut value: Value) {
    loop {
        value = match value {
            Value::Object(mut map) => match map.values_mut().next() {
                Some(inner) => inner.take(),
                None => return,
            },
            Value::Array(mut items) => match items.pop() {
                Some(inner) => inner,
                None => return,
            },
            _ => return,
        };
    }
}

/// A schema whose compact JSON is exactly `bytes` long: `{"description":"xxx…"}`.
fn schema_of_size(bytes: usize) -> Value {
    let overhead = r#"{"description":""}"#.len();
    json!({ "description": "x".repeat(bytes - overhead) })
}

#[test]
fn schema_bytes_just_under_and_over() {
    let validator = JsonSchemaEngine::new();
    let limit = validator.limits().max_schema_bytes();
    assert_eq!(limit, 256 * 1024);
    assert!(compile(&validator, &schema_of_size(limit)).is_ok());
    let error = refused(&validator, &schema_of_size(limit + 1));
    assert_eq!(
        (error.kind, error.pointer.as_str()),
        (SchemaErrorKind::TooLarge, "")
    );
}

#[test]
fn schema_depth_just_under_and_over() {
    let validator = JsonSchemaEngine::new();
    assert_eq!(validator.limits().max_schema_depth(), 64);
    assert!(compile(&validator, &nested_items(64)).is_ok());
    let error = refused(&validator, &nested_items(65));
    assert_eq!(error.kind, SchemaErrorKind::TooDeep);
    assert_eq!(error.pointer, "/items".repeat(64));
}

#[test]
fn schema_keywords_just_under_and_over() {
    let validator = JsonSchemaEngine::new();
    let limit = validator.limits().max_schema_keywords();
    assert_eq!(limit, 10_000);
    // `properties` plus n properties of `{}`: n + 1 members.
    let with = |n: usize| {
        let properties: Map<String, Value> = (0..n).map(|i| (format!("p{i}"), json!({}))).collect();
        json!({ "properties": properties })
    };
    assert!(compile(&validator, &with(limit - 1)).is_ok());
    let error = refused(&validator, &with(limit));
    assert_eq!(error.kind, SchemaErrorKind::TooManyKeywords);
}

#[test]
fn refs_just_under_and_over() {
    let validator = JsonSchemaEngine::new();
    let limit = validator.limits().max_refs();
    assert_eq!(limit, 128);
    let with = |n: usize| {
        let properties: Map<String, Value> = (0..n)
            .map(|i| (format!("p{i}"), json!({"$ref": "#/$defs/s"})))
            .collect();
        json!({ "$defs": {"s": {"type": "string"}}, "properties": properties })
    };
    assert!(compile(&validator, &with(limit)).is_ok());
    let error = refused(&validator, &with(limit + 1));
    assert_eq!(error.kind, SchemaErrorKind::TooManyRefs);
    assert!(error.pointer.ends_with("/$ref"), "{}", error.pointer);
}

#[test]
fn argument_bytes_and_depth_just_under_and_over() {
    let limits = ValidationLimits::default()
        .with_max_argument_bytes(100)
        .unwrap()
        .with_max_argument_depth(3)
        .unwrap();
    let validator = JsonSchemaEngine::new().with_limits(limits);
    let schema = validator.compile(&json!({})).unwrap();
    // The size is the compact JSON's: `{"k":"…"}` is 8 bytes around the string.
    let sized = |len: usize| json!({ "k": "x".repeat(len) });
    assert_eq!(serde_json::to_string(&sized(92)).unwrap().len(), 100);
    assert!(validator.check(&schema, &sized(92)).is_ok());
    assert_eq!(
        validator.check(&schema, &sized(93)),
        Err(ArgumentError::TooLarge { limit: 100 })
    );
    // Escapes count as written: 46 newlines are 92 bytes of `\n`.
    assert!(
        validator
            .check(&schema, &json!({ "k": "\n".repeat(46) }))
            .is_ok()
    );
    assert_eq!(
        validator.check(&schema, &json!({ "k": "\n".repeat(47) })),
        Err(ArgumentError::TooLarge { limit: 100 })
    );
    assert!(validator.check(&schema, &json!({"a": {"b": []}})).is_ok());
    assert_eq!(
        validator.check(&schema, &json!({"a": {"b": [[]]}})),
        Err(ArgumentError::TooDeep { limit: 3 })
    );
}

#[test]
fn violations_are_bounded_and_counted() {
    let limits = ValidationLimits::default().with_max_violations(3).unwrap();
    let validator = JsonSchemaEngine::new().with_limits(limits);
    let schema = json!({"additionalProperties": {"type": "integer"}});
    let value: Map<String, Value> = (0..5).map(|i| (format!("k{i}"), json!("text"))).collect();
    let Err(ArgumentError::Invalid {
        violations,
        omitted,
    }) = validator.validate(&schema, &Value::Object(value))
    else {
        panic!("expected violations");
    };
    assert_eq!((violations.len(), omitted), (3, 2));
    assert!(
        violations
            .iter()
            .all(|v| v.keyword == "type" && v.instance_path.starts_with("/k"))
    );
}

#[test]
fn schema_problems_listed_in_one_error_are_bounded_and_counted() {
    let limits = ValidationLimits::default().with_max_violations(2).unwrap();
    let validator = JsonSchemaEngine::new().with_limits(limits);
    let properties: Map<String, Value> = (0..5)
        .map(|i| (format!("p{i}"), json!({"type": "x".repeat(1000)})))
        .collect();
    let error = refused(&validator, &json!({ "properties": properties }));
    assert_eq!(error.pointer, "/properties/p0/type");
    assert!(error.message.contains("also at /properties/p1/type"));
    assert!(!error.message.contains("/properties/p2/type"));
    assert!(error.message.ends_with("; and 3 more"), "{}", error.message);
    assert!(error.message.len() < 1000, "{}", error.message);
}

#[test]
fn every_limit_refuses_zero_and_values_over_its_ceiling() {
    type Setter =
        fn(ValidationLimits, usize) -> Result<ValidationLimits, prism::validation::LimitError>;
    let ceilings = ValidationLimits::CEILINGS;
    let setters: [(Setter, usize); 8] = [
        (
            ValidationLimits::with_max_schema_bytes,
            ceilings.max_schema_bytes(),
        ),
        (
            ValidationLimits::with_max_schema_depth,
            ceilings.max_schema_depth(),
        ),
        (
            ValidationLimits::with_max_schema_keywords,
            ceilings.max_schema_keywords(),
        ),
        (ValidationLimits::with_max_refs, ceilings.max_refs()),
        (
            ValidationLimits::with_max_cached_schemas,
            ceilings.max_cached_schemas(),
        ),
        (
            ValidationLimits::with_max_argument_bytes,
            ceilings.max_argument_bytes(),
        ),
        (
            ValidationLimits::with_max_argument_depth,
            ceilings.max_argument_depth(),
        ),
        (
            ValidationLimits::with_max_violations,
            ceilings.max_violations(),
        ),
    ];
    for (set, ceiling) in setters {
        assert!(set(ValidationLimits::default(), 0).is_err());
        assert!(set(ValidationLimits::default(), ceiling).is_ok());
        let error = set(ValidationLimits::default(), ceiling + 1).unwrap_err();
        assert_eq!((error.value, error.ceiling), (ceiling + 1, ceiling));
    }
}

#[test]
fn a_ten_thousand_deep_schema_is_refused_without_deep_recursion() {
    let validator = JsonSchemaEngine::new();
    let schema = nested_items(10_000);
    let error = refused(&validator, &schema);
    assert_eq!(error.kind, SchemaErrorKind::TooDeep);
    dismantle(schema);
}

#[test]
fn ten_thousand_deep_arguments_are_refused() {
    let validator = JsonSchemaEngine::new();
    let mut value = json!(1);
    for _ in 0..10_000 {
        value = Value::Array(vec![value]);
    }
    let schema = validator.compile(&json!({})).unwrap();
    assert_eq!(
        validator.check(&schema, &value),
        Err(ArgumentError::TooDeep { limit: 64 })
    );
    dismantle(value);
}

#[test]
fn a_million_element_enum_is_refused_by_size() {
    let validator = JsonSchemaEngine::new();
    let schema = json!({ "enum": (0..1_000_000).collect::<Vec<u32>>() });
    let error = refused(&validator, &schema);
    assert_eq!(error.kind, SchemaErrorKind::TooLarge);
}

/// `d{n} = allOf: [{$ref: d{n-1}}, {$ref: d{n-1}}]`: 2n references, 2^n evaluations.
fn fan_out(levels: usize) -> Value {
    let mut defs = Map::new();
    defs.insert("d0".into(), json!({"type": "integer"}));
    for level in 1..=levels {
        let below = format!("#/$defs/d{}", level - 1);
        defs.insert(
            format!("d{level}"),
            json!({"allOf": [{"$ref": below}, {"$ref": below}]}),
        );
    }
    json!({"$defs": defs, "$ref": format!("#/$defs/d{levels}")})
}

#[test]
fn exponential_ref_fan_out_is_refused_before_it_runs() {
    let validator = JsonSchemaEngine::new();
    // Level n applies 2^(n+2) - 3 subschemas in place: 65,533 at 14 levels, allowed.
    assert!(validator.validate(&fan_out(14), &json!(5)).is_ok());
    assert!(validator.validate(&fan_out(14), &json!("five")).is_err());
    // 131,069 at 15 levels, and 2^62 at 60 (120 references), are refused at compile time.
    for levels in [15, 60] {
        let error = refused(&validator, &fan_out(levels));
        assert_eq!(
            error.kind,
            SchemaErrorKind::TooManyRefs,
            "{levels}: {error}"
        );
    }
}

#[test]
fn fan_out_that_consumes_input_is_not_refused() {
    // The same shape under `properties` only multiplies with the size of the value.
    let mut defs = Map::new();
    defs.insert("d0".into(), json!({"type": "integer"}));
    for level in 1..=60 {
        let below = format!("#/$defs/d{}", level - 1);
        defs.insert(
            format!("d{level}"),
            json!({"properties": {"a": {"$ref": below}, "b": {"$ref": below}}}),
        );
    }
    let schema = json!({"$defs": defs, "$ref": "#/$defs/d60"});
    let validator = JsonSchemaEngine::new();
    assert!(
        validator
            .validate(&schema, &json!({"a": {"b": {}}}))
            .is_ok()
    );
}

#[test]
fn huge_patterns_are_refused_or_bounded() {
    let validator = JsonSchemaEngine::new();
    // Small patterns whose compiled form would be huge (a thousand copies of a thousand Unicode
    // word classes) are refused by the compiled-pattern bound…
    let schema = json!({"type": "string", "pattern": "(\\w{1000}|x){1000}"});
    let error = refused(&validator, &schema);
    assert_eq!(error.kind, SchemaErrorKind::Invalid, "{error}");
    assert_eq!(error.pointer, "/pattern");
    // …or matched without building that form.
    let schema = json!({"type": "string", "pattern": "^\\w{1000}{1000}$"});
    assert!(
        validator
            .validate(&schema, &json!("a".repeat(10_000)))
            .is_err()
    );

    // A 200 KB alternation fits every bound and is checked like any other pattern.
    let alternation: Vec<String> = (0..25_000).map(|i| format!("w{i}")).collect();
    let schema = json!({"type": "string", "pattern": format!("^({})$", alternation.join("|"))});
    assert!(validator.validate(&schema, &json!("w24999")).is_ok());
    assert!(validator.validate(&schema, &json!("w25000")).is_err());

    // Catastrophic backtracking (a back-reference forces the backtracking engine) stops at the
    // step limit and counts as a violation.
    let schema = json!({"type": "string", "pattern": "^(a+)+\\1b$"});
    let text = "a".repeat(64);
    assert!(matches!(
        validator.validate(&schema, &json!(text)),
        Err(ArgumentError::Invalid { .. })
    ));
}

#[test]
fn references_that_leave_the_document_are_refused_with_their_pointer() {
    let validator = JsonSchemaEngine::new();
    for (schema, pointer) in [
        (json!({"$ref": "https://example.com/s.json"}), "/$ref"),
        (
            json!({"properties": {"a": {"$ref": "file:///etc/passwd"}}}),
            "/properties/a/$ref",
        ),
        (
            json!({"$id": "https://example.com/root.json", "items": {"$ref": "other.json#/x"}}),
            "/items/$ref",
        ),
        (
            json!({"$schema": "https://example.com/my-meta"}),
            "/$schema",
        ),
        (
            json!({"x-extension": {"$ref": "http://localhost:1234/a.json"}}),
            "/x-extension/$ref",
        ),
    ] {
        let error = refused(&validator, &schema);
        assert_eq!(
            (error.kind, error.pointer.as_str()),
            (SchemaErrorKind::RemoteRef, pointer),
            "{schema}"
        );
    }
}

#[test]
fn forbidden_keys_in_schemas_are_refused_with_their_pointer() {
    let validator = JsonSchemaEngine::new();
    for (schema, pointer) in [
        (
            json!({"type": "object", "properties": {"__proto__": {"type": "string"}}}),
            "/properties/__proto__",
        ),
        (json!({"type": "object", "constructor": {}}), "/constructor"),
        (
            json!({"$defs": {"prototype": {}}, "$ref": "#/$defs/prototype"}),
            "/$defs/prototype",
        ),
        (
            json!({"items": [{"patternProperties": {"^a/b": {"prototype": true}}}]}),
            "/items/0/patternProperties/^a~1b/prototype",
        ),
        (json!({"default": {"__proto__": {}}}), "/default/__proto__"),
    ] {
        let error = refused(&validator, &schema);
        assert_eq!(
            (error.kind.as_str(), error.pointer.as_str()),
            ("forbidden_key", pointer),
            "{schema}"
        );
    }
    // As values (names listed, enum members, text) they are only data.
    let schema = json!({
        "enum": ["__proto__", "constructor"],
        "propertyNames": {"not": {"const": "prototype"}},
        "description": "prototype"
    });
    assert!(compile(&validator, &schema).is_ok());
}

#[test]
fn forbidden_keys_in_arguments_are_refused_with_their_path() {
    let validator = JsonSchemaEngine::new();
    for key in ["__proto__", "constructor", "prototype"] {
        let arguments = json!({"a": [{"b": {key: {"admin": true}}}]});
        assert_eq!(
            validator.validate(&json!({}), &arguments),
            Err(ArgumentError::ForbiddenKey {
                path: "/a/0/b".into(),
                key: key.into()
            })
        );
    }
    assert!(
        validator
            .validate(&json!({}), &json!({"a": ["__proto__"]}))
            .is_ok()
    );
}

#[test]
fn local_references_in_every_form_are_accepted() {
    let validator = JsonSchemaEngine::new();
    let schema = json!({
        "$id": "https://example.com/root.json",
        "$defs": {
            "byPointer": {"type": "integer"},
            "byAnchor": {"$anchor": "name", "type": "string"},
            "nested": {"$id": "nested.json", "$defs": {"inner": {"minimum": 0}}},
            "tree": {"$dynamicAnchor": "node", "items": {"$dynamicRef": "#node"}}
        },
        "properties": {
            "a": {"$ref": "#/$defs/byPointer"},
            "b": {"$ref": "#name"},
            "c": {"$ref": "nested.json#/$defs/inner"},
            "d": {"$ref": "https://example.com/root.json#/$defs/byPointer"},
            "e": {"$ref": "#/$defs/tree"},
            "self": {"$ref": "#"},
            "meta": {"$ref": "https://json-schema.org/draft/2020-12/schema"}
        }
    });
    assert!(
        validator
            .validate(
                &schema,
                &json!({"a": 1, "b": "x", "c": 2, "e": [[]], "self": {}})
            )
            .is_ok()
    );
    assert!(validator.validate(&schema, &json!({"c": -1})).is_err());
}

#[test]
fn in_place_reference_loops_and_dangling_references_are_refused() {
    let validator = JsonSchemaEngine::new();
    for (schema, kind, pointer) in [
        (json!({"$ref": "#"}), SchemaErrorKind::RefCycle, "/$ref"),
        (
            json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"}),
            SchemaErrorKind::RefCycle,
            "",
        ),
        (
            json!({"$ref": "#/$defs/missing"}),
            SchemaErrorKind::UnresolvableRef,
            "/$ref",
        ),
        (
            json!({"$ref": "#nowhere"}),
            SchemaErrorKind::UnresolvableRef,
            "/$ref",
        ),
    ] {
        let error = refused(&validator, &schema);
        assert_eq!(error.kind, kind, "{schema}: {error}");
        if !pointer.is_empty() {
            assert_eq!(error.pointer, pointer);
        } else {
            assert!(error.pointer.ends_with("/$ref"), "{error}");
        }
    }
}

#[test]
fn dynamic_schemas_are_served_from_the_cache() {
    let limits = ValidationLimits::default()
        .with_max_cached_schemas(2)
        .unwrap();
    let validator = JsonSchemaEngine::new().with_limits(limits);
    for round in 0..3 {
        for n in 0..3 {
            let schema = json!({"maximum": n});
            assert!(
                validator.validate(&schema, &json!(n)).is_ok(),
                "round {round}"
            );
            assert!(validator.validate(&schema, &json!(n + 1)).is_err());
        }
    }
    assert_eq!(validator.cached_schemas(), 2);
}
