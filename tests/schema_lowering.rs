//! Schema lowering per provider dialect, over the argument types `#[tool]` supports, compared
//! with reviewed golden files in `tests/golden/lowering/` (one file per dialect, every tool in
//! it). To accept a deliberate change, run `PRISM_UPDATE_GOLDEN=1 cargo test --test
//! schema_lowering`, then read the diff before committing it.
//!
//! Beside the goldens, the properties every lowered schema must have are checked on all of them,
//! so a golden regenerated carelessly cannot slip a broken schema through.

#![allow(dead_code)] // The argument types exist for their schemas.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use prism::schema::{Dialect, LoweredSchema, lower};
use prism::{ToolDefinition, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Seat class.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Class {
    Economy,
    Business,
}

/// A traveller.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Traveller {
    /// Full name, as on the passport.
    name: String,
    age: u8,
    #[serde(rename = "loyaltyNumber")]
    loyalty_number: Option<String>,
}

/// Books a trip.
#[tool]
fn book_trip(
    /// Where to.
    destination: String,
    travellers: Vec<Traveller>,
    /// Seat class; economy when absent.
    class: Option<Class>,
    /// Nights away.
    nights: u32,
    /// Budget change allowed, in cents.
    budget_delta: i64,
    #[serde(default)] flexible: bool,
    lead: Option<Traveller>,
) -> usize {
    let _ = (destination, class, nights, budget_delta, flexible, lead);
    travellers.len()
}

/// An internally tagged enum.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Shape {
    /// A circle.
    Circle {
        radius: f64,
    },
    Square {
        side: f64,
        rotated: Option<bool>,
    },
}

/// An adjacently tagged enum.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum Change {
    Add(u16),
    Clear,
}

/// An externally tagged enum.
#[derive(Deserialize, JsonSchema)]
enum Payload {
    Text(String),
    Point { x: i32, y: i32 },
    Empty,
}

/// Every enum representation.
#[tool]
fn classify(shape: Shape, change: Option<Change>, payload: Payload) -> bool {
    let _ = (shape, change, payload);
    true
}

/// Maps of values.
#[tool]
fn tag_counts(counts: HashMap<String, u32>, labels: BTreeMap<String, String>) -> usize {
    counts.len() + labels.len()
}

/// A recursive outline.
#[derive(Deserialize, JsonSchema)]
struct Section {
    title: String,
    /// Nested sections.
    children: Vec<Section>,
}

/// Writes an outline.
#[tool]
fn outline(root: Section, depth: Option<u8>) -> usize {
    let _ = depth;
    root.children.len() + usize::from(!root.title.is_empty())
}

/// A closed range, as a pair.
#[tool]
fn window(range: (u16, u16), note: Option<String>) -> u16 {
    let _ = note;
    range.1.saturating_sub(range.0)
}

fn tools() -> Vec<ToolDefinition> {
    vec![
        book_trip::definition(),
        classify::definition(),
        tag_counts::definition(),
        outline::definition(),
        window::definition(),
    ]
}

fn golden_path(dialect: Dialect) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/lowering")
        .join(format!("{}.json", dialect.name()))
}

/// What is compared: everything a provider is told, and what was changed.
fn view(lowered: &Result<LoweredSchema, prism::schema::LoweringError>) -> Value {
    match lowered {
        Ok(lowered) => json!({
            "strict": lowered.strict(),
            "non_strict_reason": lowered.non_strict_reason(),
            "schema": lowered.schema(),
            "downgrades": lowered.downgrades().iter().map(ToString::to_string).collect::<Vec<_>>(),
        }),
        Err(error) => json!({"error": error.to_string()}),
    }
}

#[test]
fn golden_files_per_dialect() {
    let mut failures = Vec::new();
    for dialect in Dialect::ALL {
        let mut all = Map::new();
        for tool in tools() {
            let lowered = lower(tool.parameters().unwrap(), dialect);
            all.insert(tool.name().to_owned(), view(&lowered));
        }
        let actual = serde_json::to_string_pretty(&Value::Object(all)).unwrap() + "\n";
        let path = golden_path(dialect);
        if std::env::var_os("PRISM_UPDATE_GOLDEN").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|error| {
            panic!(
                "{} is missing ({error}); run with PRISM_UPDATE_GOLDEN=1 to create it",
                path.display()
            )
        });
        if expected != actual {
            failures.push(format!(
                "--- {}\n{expected}\n--- lowered\n{actual}",
                path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "lowering changed:\n{}",
        failures.join("\n")
    );
}

/// Calls `visit` on every schema object of `schema` (properties, items, unions, definitions).
fn each_schema(schema: &Value, visit: &mut dyn FnMut(&Map<String, Value>)) {
    let Value::Object(map) = schema else { return };
    visit(map);
    for (keyword, value) in map {
        match (keyword.as_str(), value) {
            ("properties" | "$defs" | "definitions", Value::Object(entries)) => {
                entries.values().for_each(|entry| each_schema(entry, visit));
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(entries)) => {
                entries.iter().for_each(|entry| each_schema(entry, visit));
            }
            ("items" | "additionalProperties" | "not", entry) => each_schema(entry, visit),
            _ => {}
        }
    }
}

#[test]
fn every_lowered_schema_keeps_its_dialects_rules() {
    for tool in tools() {
        for dialect in Dialect::ALL {
            let Ok(lowered) = lower(tool.parameters().unwrap(), dialect) else {
                continue;
            };
            let name = format!("{} as {dialect}", tool.name());
            let schema = lowered.schema();
            assert_eq!(schema["type"], "object", "{name}");
            // Every lowered schema is still a schema.
            jsonschema::validator_for(schema).unwrap_or_else(|error| panic!("{name}: {error}"));
            each_schema(schema, &mut |node| {
                let keys: Vec<&str> = node.keys().map(String::as_str).collect();
                if lowered.strict() {
                    assert!(
                        !keys.contains(&"oneOf") && !keys.contains(&"allOf"),
                        "{name}: {node:?}"
                    );
                    if node.contains_key("$ref") {
                        assert_eq!(keys, ["$ref"], "{name}: a `$ref` stands alone");
                    }
                    if node.get("type") == Some(&json!("object")) {
                        assert_eq!(node["additionalProperties"], false, "{name}: {node:?}");
                    }
                }
                if lowered.strict()
                    && matches!(
                        dialect,
                        Dialect::OpenAiChat { .. } | Dialect::OpenAiResponses { .. }
                    )
                {
                    if let Some(Value::Object(properties)) = node.get("properties") {
                        let required: Vec<&str> = node["required"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|n| n.as_str().unwrap())
                            .collect();
                        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
                        assert_eq!(required, names, "{name}: every property required");
                    }
                    if let Some(Value::String(format)) = node.get("format") {
                        assert!(
                            !format.starts_with("uint") && !format.starts_with("int"),
                            "{name}: {format}"
                        );
                    }
                }
                if dialect == Dialect::GeminiParameters {
                    assert!(
                        !keys.iter().any(|key| matches!(
                            *key,
                            "$ref" | "$defs" | "oneOf" | "allOf" | "const" | "additionalProperties"
                        )),
                        "{name}: {node:?}"
                    );
                    assert!(
                        node.get("type").is_none_or(Value::is_string),
                        "{name}: one type"
                    );
                    if let Some(Value::Array(values)) = node.get("enum") {
                        assert!(values.iter().all(Value::is_string), "{name}: string enums");
                    }
                }
                if dialect == Dialect::NoRef {
                    assert!(
                        !node.contains_key("$ref") && !node.contains_key("$defs"),
                        "{name}"
                    );
                }
            });
        }
    }
}
