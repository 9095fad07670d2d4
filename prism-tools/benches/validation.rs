//! Argument validation costs: the adapter against the bare `jsonschema` engine, the argument
//! walk on its own, and compiling a schema cold against finding it compiled. The arm calling
//! the walk and `is_valid` one after the other is the floor the adapter is measured against:
//! the difference is the adapter's own cost (memo read, result handling). For counts that do
//! not move with the machine's load, see the `validation_instructions` driver.
//!
//! Run with `cargo bench -p prism-tools --features json-schema --bench validation`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use prism_tools::validation::{JsonSchemaEngine, SchemaEngine, SchemaValidator};
use prism_tools::{ArgumentValidator, ToolDefinition};
use serde_json::Value;

#[path = "support/schemas.rs"]
mod schemas;

use schemas::{large, small};

fn tool(schema: &Value) -> ToolDefinition {
    ToolDefinition::builder("bench")
        .parameters(schema.clone())
        .run_sync(|_, _| Ok(Value::Null))
}

fn checks(c: &mut Criterion) {
    for (size, (schema, value)) in [("small", small()), ("large", large())] {
        let engine = JsonSchemaEngine::new();
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
        let adapter = SchemaValidator::new(engine.clone());
        let tool = tool(&schema);
        assert_eq!(adapter.validate(&tool, &value).ready(), Some(Ok(())));

        let mut group = c.benchmark_group(format!("validate/{size}"));
        group.bench_function("bare jsonschema is_valid", |b| {
            b.iter(|| bare.is_valid(black_box(&value)))
        });
        group.bench_function("same compiled schema, is_valid", |b| {
            b.iter(|| compiled.is_valid(black_box(&value)))
        });
        let limits = *engine.limits();
        group.bench_function("argument-limit walk", |b| {
            b.iter(|| limits.check_arguments(black_box(&value)))
        });
        group.bench_function("walk + is_valid, called one after the other", |b| {
            b.iter(|| {
                let value = black_box(&value);
                limits
                    .check_arguments(value)
                    .is_ok_and(|()| compiled.is_valid(value))
            })
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
            b.iter(|| JsonSchemaEngine::new().compile(black_box(&schema)))
        });
        let warm = JsonSchemaEngine::new();
        warm.compile(&schema).expect("the schema compiles");
        group.bench_function("cached by content (shape walk, hash, LRU hit)", |b| {
            b.iter(|| warm.compile(black_box(&schema)))
        });
        let adapter = SchemaValidator::new(warm.clone());
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
