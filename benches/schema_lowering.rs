//! Criterion benchmarks of schema lowering: a 200-property parameter schema lowered to each
//! dialect, cold (`schema::lower`) and cached (`LoweringCache::lower` on a definition already
//! lowered, which is what a provider request pays per tool after the first).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use prism::ToolDefinition;
use prism::schema::{Dialect, LoweringCache, lower};
use serde_json::{Map, Value, json};

/// 200 properties as `#[tool]` writes them: documented strings, Rust integers (with schemars'
/// formats and unsigned minimums), optional values, string enums, lists, and references to two
/// shared definitions; a quarter of them required.
fn schema_200() -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for index in 0..200 {
        let name = format!("field_{index:03}");
        let property = match index % 8 {
            0 => json!({"type": "string", "description": format!("Text number {index}.")}),
            1 => json!({"type": "integer", "format": "uint32", "minimum": 0}),
            2 => json!({"type": ["string", "null"], "description": "Optional text."}),
            3 => json!({"$ref": "#/$defs/Unit", "description": "A unit."}),
            4 => json!({"type": "array", "items": {"type": "integer", "format": "int64"}}),
            5 => json!({"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}),
            6 => json!({"type": "number", "format": "double", "default": 1.5}),
            _ => json!({"type": "boolean"}),
        };
        if index % 4 == 0 {
            required.push(json!(name));
        }
        properties.insert(name, property);
    }
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
        "required": required,
        "$defs": {
            "Unit": {"type": "string", "enum": ["metric", "imperial"], "description": "Units."},
            "Address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "number": {"type": "integer", "format": "uint16", "minimum": 0, "maximum": 65535},
                    "postcode": {"type": ["string", "null"]}
                },
                "required": ["street"]
            }
        }
    })
}

fn lowering(c: &mut Criterion) {
    let schema = schema_200();
    let definition = ToolDefinition::builder("wide")
        .parameters(schema.clone())
        .run_sync(|_, _| Ok(Value::Null));
    let cache = LoweringCache::default();
    for dialect in Dialect::ALL {
        let lowered = lower(&schema, dialect).expect("the benchmark schema lowers");
        assert_eq!(lowered.strict(), dialect.wants_strict(), "{dialect}");
        c.bench_function(&format!("schema_lowering/cold/{dialect}"), |b| {
            b.iter_with_large_drop(|| lower(black_box(&schema), dialect));
        });
        cache.lower(&definition, dialect).expect("lowers");
        c.bench_function(&format!("schema_lowering/cached/{dialect}"), |b| {
            b.iter(|| cache.lower(black_box(&definition), dialect));
        });
    }
}

criterion_group!(benches, lowering);
criterion_main!(benches);
