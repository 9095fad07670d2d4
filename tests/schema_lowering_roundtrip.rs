//! Lowering never changes what a call means.
//!
//! Values are generated from Rust argument types (nested structs, every enum representation,
//! recursion, `Option`, `#[serde(default)]`, renames, signed and unsigned integers) and
//! serialised, so they are valid under the canonical schema by construction. Each is encoded as
//! the dialect's model would send it (under OpenAI's strict mode every property is required, so
//! a property left out is sent as `null`), must be valid under the lowered schema (checked with
//! the `jsonschema` crate), and after `restore_arguments` must decode to the same Rust value.

use jsonschema::Validator;
use prism::schema::{Dialect, LoweredSchema, lower, parameters_for};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn is_false(flag: &bool) -> bool {
    !flag
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Traveller {
    /// Full name.
    name: String,
    age: u8,
    #[serde(
        rename = "loyaltyNumber",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    loyalty: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    vip: bool,
}

/// Seat class.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Class {
    Economy,
    Business,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
enum Shape {
    Circle {
        radius: i32,
    },
    Square {
        side: u16,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rotated: Option<bool>,
    },
    Dot,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum Change {
    Add(u16),
    Clear,
    Move {
        from: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<u8>,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
enum Payload {
    Text(String),
    Point { x: i32, y: i64 },
    Empty,
}

/// A recursive outline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Section {
    title: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    children: Vec<Section>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// Where to.
    destination: String,
    travellers: Vec<Traveller>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    class: Option<Class>,
    nights: u32,
    budget_delta: i64,
    #[serde(default, skip_serializing_if = "is_false")]
    flexible: bool,
    /// Serialised as `null` when absent: a null the canonical schema allows.
    lead: Option<Traveller>,
    shape: Shape,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    change: Option<Change>,
    payload: Payload,
    outline: Section,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
}

const MAX_SAFE: i64 = 1 << 53;

fn text() -> impl Strategy<Value = String> {
    "[a-z é_]{0,5}"
}

fn traveller() -> impl Strategy<Value = Traveller> {
    (
        text(),
        any::<u8>(),
        proptest::option::of(text()),
        any::<bool>(),
    )
        .prop_map(|(name, age, loyalty, vip)| Traveller {
            name,
            age,
            loyalty,
            vip,
        })
}

fn section() -> impl Strategy<Value = Section> {
    let leaf = (text(), proptest::option::of(text())).prop_map(|(title, note)| Section {
        title,
        children: Vec::new(),
        note,
    });
    leaf.prop_recursive(3, 8, 3, |inner| {
        (
            text(),
            proptest::collection::vec(inner, 0..3),
            proptest::option::of(text()),
        )
            .prop_map(|(title, children, note)| Section {
                title,
                children,
                note,
            })
    })
}

fn args() -> impl Strategy<Value = Args> {
    let class = proptest::option::of(prop_oneof![Just(Class::Economy), Just(Class::Business)]);
    let shape = prop_oneof![
        any::<i32>().prop_map(|radius| Shape::Circle { radius }),
        (any::<u16>(), proptest::option::of(any::<bool>()))
            .prop_map(|(side, rotated)| Shape::Square { side, rotated }),
        Just(Shape::Dot),
    ];
    let change = proptest::option::of(prop_oneof![
        any::<u16>().prop_map(Change::Add),
        Just(Change::Clear),
        (any::<u8>(), proptest::option::of(any::<u8>()))
            .prop_map(|(from, to)| Change::Move { from, to }),
    ]);
    let payload = prop_oneof![
        text().prop_map(Payload::Text),
        (any::<i32>(), -MAX_SAFE..MAX_SAFE).prop_map(|(x, y)| Payload::Point { x, y }),
        Just(Payload::Empty),
    ];
    (
        (
            text(),
            proptest::collection::vec(traveller(), 0..3),
            class,
            any::<u32>(),
        ),
        (
            -MAX_SAFE..MAX_SAFE,
            any::<bool>(),
            proptest::option::of(traveller()),
            shape,
        ),
        (change, payload, section(), proptest::option::of(text())),
    )
        .prop_map(
            |(
                (destination, travellers, class, nights),
                (budget_delta, flexible, lead, shape),
                (change, payload, outline, kind),
            )| Args {
                destination,
                travellers,
                class,
                nights,
                budget_delta,
                flexible,
                lead,
                shape,
                change,
                payload,
                outline,
                kind,
            },
        )
}

/// Whether `value` is valid under `branch`, a subschema of `root` (its `$defs` in scope).
fn valid_under(root: &Value, branch: &Value, value: &Value) -> bool {
    let mut schema = branch.as_object().cloned().unwrap_or_default();
    if let Some(defs) = root.get("$defs") {
        schema.insert("$defs".into(), defs.clone());
    }
    jsonschema::validator_for(&Value::Object(schema))
        .unwrap()
        .is_valid(value)
}

/// `value` as OpenAI's strict mode sends it: every property the canonical schema describes is
/// present, a left-out one as `null`. The canonical schema is walked beside the value (through
/// references, and the union branch the value is valid under).
fn as_strict_model_sends(root: &Value, schema: &Value, value: &mut Value) {
    let mut schema = schema;
    while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        schema = root.pointer(reference.trim_start_matches('#')).unwrap();
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = schema.get(keyword) {
            let branch = branches
                .iter()
                .find(|branch| valid_under(root, branch, value))
                .unwrap();
            as_strict_model_sends(root, branch, value);
        }
    }
    match value {
        Value::Object(object) => {
            let Some(Value::Object(properties)) = schema.get("properties") else {
                return;
            };
            for (name, property) in properties {
                match object.get_mut(name) {
                    Some(item) => as_strict_model_sends(root, property, item),
                    None => {
                        object.insert(name.clone(), Value::Null);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                items
                    .iter_mut()
                    .for_each(|item| as_strict_model_sends(root, item_schema, item));
            }
        }
        _ => {}
    }
}

/// The dialects whose lowered schema is JSON Schema (Gemini `parameters` is OpenAPI's subset,
/// where `nullable` replaces type lists).
fn json_schema_dialects() -> impl Iterator<Item = Dialect> {
    Dialect::ALL
        .into_iter()
        .filter(|dialect| *dialect != Dialect::GeminiParameters)
}

fn requires_every_property(lowered: &LoweredSchema) -> bool {
    lowered.strict()
        && matches!(
            lowered.dialect(),
            Dialect::OpenAiChat { .. } | Dialect::OpenAiResponses { .. }
        )
}

#[test]
fn strict_calls_are_valid_and_restore_to_the_same_value() {
    let canonical = parameters_for::<Args>();
    let lowered: Vec<(LoweredSchema, Validator)> = json_schema_dialects()
        .filter_map(|dialect| lower(&canonical, dialect).ok())
        .map(|lowered| {
            let validator = jsonschema::validator_for(lowered.schema()).unwrap();
            (lowered, validator)
        })
        .collect();
    // The recursive outline cannot be inlined; every other dialect lowers it.
    assert_eq!(lowered.len(), 8);
    let strict_openai = lowered
        .iter()
        .filter(|(lowered, _)| requires_every_property(lowered))
        .count();
    assert_eq!(
        strict_openai, 2,
        "both OpenAI strict dialects grant strict mode"
    );

    let canonical_validator = jsonschema::validator_for(&canonical).unwrap();
    let restored_nulls = std::cell::Cell::new(0usize);
    let mut runner = TestRunner::new(Config::with_cases(256));
    runner
        .run(&args(), |args| {
            let original = serde_json::to_value(&args).unwrap();
            for (lowered, validator) in &lowered {
                let mut sent = original.clone();
                if requires_every_property(lowered) {
                    as_strict_model_sends(&canonical, &canonical, &mut sent);
                }
                let dialect = lowered.dialect();
                prop_assert!(
                    validator.is_valid(&sent),
                    "{dialect}: invalid under the lowered schema: {sent}"
                );
                let added = sent != original;
                lowered.restore_arguments(&mut sent);
                // Only the nulls the canonical schema refuses are taken out: an `Option` left
                // out may come back as `null`, which means the same.
                prop_assert!(
                    canonical_validator.is_valid(&sent),
                    "{dialect}: restored {sent} is not canonical"
                );
                let decoded: Args = serde_json::from_value(sent).unwrap();
                prop_assert_eq!(&decoded, &args);
                restored_nulls.set(restored_nulls.get() + usize::from(added));
            }
            Ok(())
        })
        .unwrap();
    // Strict calls with left-out properties were plentiful.
    let restored_nulls = restored_nulls.get();
    assert!(restored_nulls > 200, "{restored_nulls}");
}

#[test]
fn a_null_the_canonical_schema_allows_is_kept() {
    let canonical = parameters_for::<Args>();
    let lowered = lower(&canonical, Dialect::OpenAiChat { strict: true }).unwrap();
    let mut sent = json!({
        "flexible": null,
        "lead": null,
        "class": null,
        "outline": {"title": "t", "children": [{"title": "u", "children": null, "note": null}], "note": null}
    });
    lowered.restore_arguments(&mut sent);
    // `flexible` and `children` have defaults but no null; `lead`, `class` and `note` are
    // `Option`s, whose null the canonical schema accepts.
    assert_eq!(
        sent,
        json!({
            "lead": null,
            "class": null,
            "outline": {"title": "t", "children": [{"title": "u", "note": null}], "note": null}
        })
    );
}
