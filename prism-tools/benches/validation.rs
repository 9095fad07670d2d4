//! Argument validation costs: the adapter against the bare `jsonschema` engine, the argument
//! walk on its own, and compiling a schema cold against finding it compiled.
//!
//! Run with `cargo bench -p prism-tools --features json-schema --bench validation`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use prism_tools::validation::{JsonSchemaValidator, ToolArgumentValidator, ToolParameterValidator};
use prism_tools::{ToolDefinition, ToolValidator};
use serde_json::{Map, Value, json};

/// Five properties of common kinds, and arguments that match.
fn small() -> (Value, Value) {
    let schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1, "maxLength": 100},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "unit": {"enum": ["celsius", "fahrenheit"]},
            "hourly": {"type": "boolean"},
            "fields": {"type": "array", "items": {"type": "string"}, "maxItems": 8}
        },
        "required": ["city", "days"],
        "additionalProperties": false
    });
    let value = json!({
        "city": "Paris", "days": 3, "unit": "celsius", "hourly": false,
        "fields": ["temperature", "wind"]
    });
    (schema, value)
}

/// Two hundred properties; every tenth is an object of five, one level down.
fn large() -> (Value, Value) {
    let mut properties = Map::new();
    let mut value = Map::new();
    for index in 0..200 {
        let name = format!("field_{index}");
        let (property, sample) = match index % 10 {
            0 => {
                let (schema, sample) = small();
                (schema, sample)
            }
            1 | 2 => (json!({"type": "integer", "minimum": 0}), json!(index)),
            3 => (json!({"type": "number"}), json!(index as f64 / 3.0)),
            4 => (json!({"enum": ["a", "b", "c"]}), json!("b")),
            5 => (json!({"type": "boolean"}), json!(true)),
            6 => (
                json!({"type": "array", "items": {"type": "integer"}}),
                json!([1, 2, 3]),
            ),
            _ => (
                json!({"type": "string", "maxLength": 64}),
                json!(format!("value {index}")),
            ),
        };
        properties.insert(name.clone(), property);
        value.insert(name, sample);
    }
    let required: Vec<Value> = properties.keys().take(50).map(|k| json!(k)).collect();
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    });
    (schema, Value::Object(value))
}

fn tool(schema: &Value) -> ToolDefinition {
    ToolDefinition::builder("bench")
        .parameters(schema.clone())
        .run_sync(|_, _| Ok(Value::Null))
}

fn checks(c: &mut Criterion) {
    for (size, (schema, value)) in [("small", small()), ("large", large())] {
        let engine = JsonSchemaValidator::new();
        let compiled = engine.compile(&schema).expect("the schema compiles");
        // Built as the adapter's engine builds it: offline, bounded patterns.
        let bare = jsonschema::options()
            .offline()
            .should_validate_formats(false)
            .with_pattern_options(
                jsonschema::PatternOptions::fancy_regex()
                    .backtrack_limit(1_000_000)
                    .size_limit(1 << 20)
                    .dfa_size_limit(1 << 20),
            )
            .build(&schema)
            .expect("the schema compiles");
        assert!(bare.is_valid(&value) && compiled.is_valid(&value));
        let adapter = ToolParameterValidator::new(engine.clone());
        let tool = tool(&schema);
        assert!(adapter.validate(&tool, &value).is_ok());

        let mut group = c.benchmark_group(format!("validate/{size}"));
        group.bench_function("bare jsonschema is_valid", |b| {
            b.iter(|| bare.is_valid(black_box(&value)))
        });
        group.bench_function("same compiled schema, is_valid", |b| {
            b.iter(|| compiled.is_valid(black_box(&value)))
        });
        group.bench_function("argument-limit walk", |b| {
            b.iter(|| engine.limits().check_arguments(black_box(&value)))
        });
        group.bench_function("engine check (walk + is_valid)", |b| {
            b.iter(|| engine.check(black_box(&compiled), black_box(&value)))
        });
        group.bench_function("adapter (memo + walk + is_valid)", |b| {
            b.iter(|| adapter.validate(black_box(&tool), black_box(&value)))
        });
        group.finish();
    }
}

fn compiles(c: &mut Criterion) {
    for (size, (schema, _)) in [("small", small()), ("large", large())] {
        let mut group = c.benchmark_group(format!("compile/{size}"));
        group.bench_function("cold (limits, references, engine build)", |b| {
            b.iter(|| JsonSchemaValidator::new().compile(black_box(&schema)))
        });
        let warm = JsonSchemaValidator::new();
        warm.compile(&schema).expect("the schema compiles");
        group.bench_function("cached by content (shape walk, hash, LRU hit)", |b| {
            b.iter(|| warm.compile(black_box(&schema)))
        });
        let adapter = ToolParameterValidator::new(warm.clone());
        let tool = tool(&schema);
        adapter.prepare(&tool).expect("the schema compiles");
        group.bench_function("kept with the definition (memo hit)", |b| {
            b.iter(|| adapter.prepare(black_box(&tool)))
        });
        group.finish();
    }
}

criterion_group!(benches, checks, compiles);
criterion_main!(benches);
