//! The schema a `#[tool]` publishes and the decoding it performs agree: a value valid under the
//! schema decodes, and a value that decodes is valid under the schema.
//!
//! Values start as well-formed arguments generated from the Rust types, then go through random
//! mutations (a key removed, an unknown key added, a value replaced by one of another type or out
//! of range), so both valid and invalid values are plentiful. The argument types are named
//! structs and enums of every serde representation but untagged, without string formats, with
//! integers within ±2^53.
//!
//! Three differences between JSON Schema and serde are outside the property. The generator
//! avoids two on purpose: a float with no fractional part (`3.0`) is an `integer` to JSON Schema
//! but not to serde; and an integer type wider than 16 bits is bounded by its `format` (`int64`),
//! which validators treat as an annotation, not a check. The third, two mutations can make: a
//! struct of the user's (`Address`, a `Line`) written as an array of its fields in order, which
//! serde's derived `Deserialize` accepts and the schema does not; such values are left out.

use std::cell::Cell;
use std::collections::BTreeMap;

use jsonschema::Validator;
use prism::{ToolDefinition, ToolExecutionContext, tool};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Priority {
    Low,
    High,
    VeryHigh,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64, rotated: Option<bool> },
    Dot,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum Change {
    Add(u8),
    Remove { index: u16 },
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
enum Payload {
    Text(String),
    Bytes(Vec<u8>),
    Pair(i64, bool),
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Address {
    street: String,
    number: Option<u16>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct Line {
    sku: String,
    quantity: u8,
    #[serde(default)]
    gift: bool,
}

/// Places an order.
#[allow(clippy::too_many_arguments)]
#[tool]
fn place_order(
    customer: String,
    address: Address,
    lines: Vec<Line>,
    priority: Priority,
    shape: Shape,
    change: Option<Change>,
    payload: Payload,
    tags: BTreeMap<String, i64>,
    #[serde(rename = "note")] comment: Option<String>,
    #[serde(default)] express: bool,
    ratio: f64,
) -> usize {
    let _ = (
        address, priority, shape, change, payload, comment, express, ratio,
    );
    customer.len() + lines.len() + tags.len()
}

const MAX_SAFE: i64 = 1 << 53;

fn text() -> impl Strategy<Value = String> {
    "[a-z0-9 é_]{0,6}"
}

fn finite() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("JSON numbers are finite", |x| x.is_finite())
}

fn safe_integer() -> impl Strategy<Value = i64> {
    -MAX_SAFE..=MAX_SAFE
}

fn arguments() -> impl Strategy<Value = Value> {
    let address = (text(), proptest::option::of(any::<u16>()))
        .prop_map(|(street, number)| Address { street, number });
    let line = (text(), any::<u8>(), any::<bool>()).prop_map(|(sku, quantity, gift)| Line {
        sku,
        quantity,
        gift,
    });
    let priority = prop_oneof![
        Just(Priority::Low),
        Just(Priority::High),
        Just(Priority::VeryHigh)
    ];
    let shape = prop_oneof![
        finite().prop_map(|radius| Shape::Circle { radius }),
        (finite(), proptest::option::of(any::<bool>()))
            .prop_map(|(side, rotated)| Shape::Square { side, rotated }),
        Just(Shape::Dot),
    ];
    let change = prop_oneof![
        any::<u8>().prop_map(Change::Add),
        any::<u16>().prop_map(|index| Change::Remove { index }),
    ];
    let payload = prop_oneof![
        text().prop_map(Payload::Text),
        proptest::collection::vec(any::<u8>(), 0..4).prop_map(Payload::Bytes),
        (safe_integer(), any::<bool>()).prop_map(|(n, b)| Payload::Pair(n, b)),
    ];
    let tags = proptest::collection::btree_map(text(), safe_integer(), 0..3);
    (
        (
            text(),
            address,
            proptest::collection::vec(line, 0..3),
            priority,
            shape,
        ),
        (
            proptest::option::of(change),
            payload,
            tags,
            proptest::option::of(text()),
        ),
        (proptest::option::of(any::<bool>()), finite()),
    )
        .prop_map(
            |(
                (customer, address, lines, priority, shape),
                (change, payload, tags, note),
                (express, ratio),
            )| {
                let mut object = json!({
                    "customer": customer,
                    "address": address,
                    "lines": lines,
                    "priority": priority,
                    "shape": shape,
                    "payload": payload,
                    "tags": tags,
                    "ratio": ratio,
                });
                let map = object.as_object_mut().unwrap();
                // Optional and defaulted arguments are sometimes absent, sometimes present.
                if let Some(change) = change {
                    map.insert("change".into(), serde_json::to_value(change).unwrap());
                }
                if let Some(note) = note {
                    map.insert("note".into(), note.into());
                }
                if let Some(express) = express {
                    map.insert("express".into(), express.into());
                }
                object
            },
        )
}

/// A value of some JSON type, never a float without a fractional part.
fn replacement() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..300).prop_map(Value::from),
        safe_integer().prop_map(Value::from),
        (-1000i32..1000).prop_map(|n| Value::from(f64::from(n) + 0.5)),
        text().prop_map(Value::from),
        prop_oneof![
            Just("low"),
            Just("very_high"),
            Just("Circle"),
            Just("Dot"),
            Just("Add"),
            Just("Text")
        ]
        .prop_map(Value::from),
        Just(json!([])),
        proptest::collection::vec(0i64..300, 1..3).prop_map(Value::from),
        Just(json!({})),
        Just(json!({"kind": "Circle", "radius": 1})),
        Just(json!({"t": "Remove", "c": {"index": 3}})),
    ]
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Removes the n-th key found in the value's objects.
    RemoveKey(usize),
    /// Adds an unknown key to the n-th object.
    AddKey(usize, Value),
    /// Replaces the n-th value (any depth, the root included).
    Replace(usize, Value),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::RemoveKey),
        (any::<usize>(), replacement()).prop_map(|(at, value)| Mutation::AddKey(at, value)),
        (any::<usize>(), replacement()).prop_map(|(at, value)| Mutation::Replace(at, value)),
    ]
}

/// Calls `visit` on every value, the root first, depth first, until it returns true.
fn walk(value: &mut Value, visit: &mut dyn FnMut(&mut Value) -> bool) -> bool {
    if visit(value) {
        return true;
    }
    match value {
        Value::Array(items) => items.iter_mut().any(|item| walk(item, visit)),
        Value::Object(map) => map.values_mut().any(|item| walk(item, visit)),
        _ => false,
    }
}

/// How many values, objects and object keys the tree holds.
fn census(value: &mut Value) -> (usize, usize, usize) {
    let (mut values, mut objects, mut keys) = (0, 0, 0);
    walk(value, &mut |node| {
        values += 1;
        if let Value::Object(map) = node {
            objects += 1;
            keys += map.len();
        }
        false
    });
    (values, objects, keys)
}

fn apply(value: &mut Value, mutation: Mutation) {
    let (values, objects, keys) = census(value);
    let mut seen = 0;
    match mutation {
        Mutation::Replace(at, replacement) => {
            let target = at % values;
            walk(value, &mut |node| {
                let hit = seen == target;
                if hit {
                    *node = replacement.clone();
                }
                seen += 1;
                hit
            });
        }
        Mutation::AddKey(at, added) if objects > 0 => {
            let target = at % objects;
            walk(value, &mut |node| match node {
                Value::Object(map) => {
                    let hit = seen == target;
                    if hit {
                        map.insert(format!("unexpected_{target}"), added.clone());
                    }
                    seen += 1;
                    hit
                }
                _ => false,
            });
        }
        Mutation::RemoveKey(at) if keys > 0 => {
            let target = at % keys;
            walk(value, &mut |node| match node {
                Value::Object(map) if target < seen + map.len() => {
                    let key = map.keys().nth(target - seen).cloned().unwrap();
                    map.remove(&key);
                    true
                }
                Value::Object(map) => {
                    seen += map.len();
                    false
                }
                _ => false,
            });
        }
        Mutation::AddKey(..) | Mutation::RemoveKey(_) => {}
    }
}

fn decodes(definition: &ToolDefinition, value: &Value) -> bool {
    definition
        .handler()
        .prepare(value, ToolExecutionContext::new())
        .is_ok()
}

/// True when `Address` or a `Line` is written as an array: serde decodes a struct from its fields
/// in order, which the schema refuses (see the module docs).
fn has_struct_as_array(value: &Value) -> bool {
    value["address"].is_array()
        || value["lines"]
            .as_array()
            .is_some_and(|lines| lines.iter().any(Value::is_array))
}

fn validator(definition: &ToolDefinition) -> Validator {
    jsonschema::validator_for(definition.parameters().unwrap()).expect("the schema compiles")
}

#[test]
fn generated_arguments_are_valid_and_decode() {
    let definition = place_order::definition();
    let validator = validator(&definition);
    let mut runner = TestRunner::new(Config::with_cases(256));
    runner
        .run(&arguments(), |value| {
            prop_assert!(
                validator.is_valid(&value),
                "invalid under the schema: {value}"
            );
            prop_assert!(decodes(&definition, &value), "does not decode: {value}");
            Ok(())
        })
        .unwrap();
}

#[test]
fn schema_validity_and_decoding_agree_on_mutated_arguments() {
    let definition = place_order::definition();
    let validator = validator(&definition);
    let mut runner = TestRunner::new(Config::with_cases(2048));
    let cases = (arguments(), proptest::collection::vec(mutation(), 1..3));
    let outcomes = [Cell::new(0usize), Cell::new(0usize)];
    runner
        .run(&cases, |(mut value, mutations)| {
            for mutation in mutations {
                apply(&mut value, mutation);
            }
            let valid = validator.is_valid(&value);
            if !valid && has_struct_as_array(&value) {
                return Ok(());
            }
            prop_assert_eq!(
                valid,
                decodes(&definition, &value),
                "schema says {} for {}",
                if valid { "valid" } else { "invalid" },
                value
            );
            outcomes[usize::from(valid)].set(outcomes[usize::from(valid)].get() + 1);
            Ok(())
        })
        .unwrap();
    // Both sides of the property were exercised, plentifully.
    let [invalid, valid] = outcomes.map(Cell::into_inner);
    assert!(
        invalid > 200 && valid > 200,
        "valid {valid}, invalid {invalid}"
    );
}

#[test]
fn mutations_do_what_they_say() {
    let mut value = json!({"a": {"b": 1}, "c": [2]});
    apply(&mut value, Mutation::RemoveKey(2));
    assert_eq!(value, json!({"a": {}, "c": [2]}));
    apply(&mut value, Mutation::AddKey(1, json!(true)));
    assert_eq!(value, json!({"a": {"unexpected_1": true}, "c": [2]}));
    apply(&mut value, Mutation::Replace(0, json!(null)));
    assert_eq!(value, Value::Null);
}
