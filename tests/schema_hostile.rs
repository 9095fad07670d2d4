//! Hostile or unusual schemas against lowering and validation: long reference chains, inlining
//! that multiplies values, keywords beside a `$ref`, and references the fan-out check could miss.
//!
//! Tests that could abort the process (a stack overflow is not a panic) run their body in a
//! child process of this test binary, so the failure is reported instead of killing the run.

use std::io::Write;

mod common;

use common::isolated;
use prism::schema::{Dialect, lower};
use prism::validation::{JsonSchemaEngine, SchemaEngine};
use serde_json::{Map, Value, json};

/// `{"properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": {d0 -> d1 -> ... -> dN: string}}`:
/// a flat chain of references, under the 1 MiB input bound and 100 levels of JSON.
fn ref_chain(links: usize) -> Value {
    let mut defs = Map::new();
    for i in 0..links {
        defs.insert(
            format!("d{i}"),
            json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert(format!("d{links}"), json!({"type": "string"}));
    json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs})
}

fn compact_len(value: &Value) -> usize {
    struct Count(usize);
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).unwrap();
    count.0
}

/// A chain of 20,000 `$ref`s (about 700 KB) is refused by the inlining walk, not followed until
/// the stack overflows.
#[test]
fn ref_chain_inlining_does_not_overflow_the_stack() {
    isolated("ref_chain_inlining_does_not_overflow_the_stack", || {
        let schema = ref_chain(20_000);
        assert!(compact_len(&schema) < 1024 * 1024);
        for dialect in [Dialect::NoRef, Dialect::GeminiParameters] {
            let refused = lower(&schema, dialect).expect_err("too deep to inline");
            assert!(refused.to_string().contains("deep"), "{refused}");
        }
    });
}

/// The same chain through Anthropic's strict precheck.
#[test]
fn ref_chain_anthropic_strict_does_not_overflow_the_stack() {
    isolated(
        "ref_chain_anthropic_strict_does_not_overflow_the_stack",
        || {
            let schema = ref_chain(20_000);
            let result = lower(&schema, Dialect::Anthropic { strict: true });
            println!(
                "Anthropic strict: {:?}",
                result.map(|_| ()).map_err(|e| e.to_string())
            );
        },
    );
}

/// Inlining copies values (`enum`) with every copy of a definition: what it copies is bounded,
/// so a 200 KB input cannot become a lowered schema hundreds of MB large.
#[test]
fn inlining_output_is_bounded_in_bytes() {
    let big: Vec<Value> = vec![json!("x".repeat(200_000))];
    let mut defs = Map::new();
    defs.insert("l0".to_owned(), json!({"type": "string", "enum": big}));
    let levels = 10;
    for level in 1..=levels {
        let below = format!("#/$defs/l{}", level - 1);
        defs.insert(
            format!("l{level}"),
            json!({"anyOf": [{"$ref": below}, {"$ref": below}]}),
        );
    }
    let schema = json!({
        "type": "object",
        "properties": {"x": {"$ref": format!("#/$defs/l{levels}")}},
        "$defs": defs,
    });
    let input = compact_len(&schema);
    assert!(input < 1024 * 1024);
    match lower(&schema, Dialect::NoRef) {
        Ok(lowered) => {
            let output = compact_len(lowered.schema());
            assert!(
                output <= 16 * 1024 * 1024,
                "a {input}-byte schema was lowered to {output} bytes"
            );
        }
        Err(error) => assert!(
            error.to_string().contains("copied by inlining"),
            "refused for its size: {error}"
        ),
    }
}

/// A root `$ref` with `required` beside it that the target also has: both lists apply.
#[test]
fn root_ref_sibling_does_not_drop_the_targets_required() {
    let canonical = json!({
        "$ref": "#/$defs/Args",
        "required": ["b"],
        "$defs": {"Args": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a"]
        }}
    });
    let engine = JsonSchemaEngine::new();
    let without_a = json!({"b": "x"});
    assert!(
        engine.validate(&canonical, &without_a).is_err(),
        "canonical needs `a`"
    );
    for dialect in [
        Dialect::Mcp,
        Dialect::NoRef,
        Dialect::Anthropic { strict: false },
    ] {
        let lowered = lower(&canonical, dialect).unwrap();
        assert!(
            engine.validate(lowered.schema(), &without_a).is_err(),
            "{dialect}: the lowered schema accepts what the canonical refuses: {}",
            lowered.schema()
        );
    }
}

/// A `$ref` with `additionalProperties: false` beside it applies on its own (in 2020-12, no
/// property at all is allowed): inlining keeps it apart from the target's `properties`.
#[test]
fn inlined_ref_keeps_sibling_additional_properties_apart() {
    let canonical = json!({
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/A", "additionalProperties": false}},
        "$defs": {"A": {"type": "object", "properties": {"a": {"type": "string"}}}}
    });
    let engine = JsonSchemaEngine::new();
    let value = json!({"p": {"a": "x"}});
    assert!(engine.validate(&canonical, &value).is_err());
    let lowered = lower(&canonical, Dialect::NoRef).unwrap();
    assert!(
        engine.validate(lowered.schema(), &value).is_err(),
        "lowered accepts what the canonical refuses: {}\ndowngrades: {:?}",
        lowered.schema(),
        lowered.downgrades()
    );
}

/// `allOf: [{$ref: below}, {$ref: below}]` nested `levels` times under definitions named
/// `l<n>~x`, each reference writing the name with `write_key`.
fn doubling(levels: usize, write_key: impl Fn(&str) -> String) -> Value {
    let mut defs = Map::new();
    defs.insert("l0~x".to_owned(), json!({"type": "object"}));
    for level in 1..=levels {
        let below = format!("#/$defs/{}", write_key(&format!("l{}~x", level - 1)));
        defs.insert(
            format!("l{level}~x"),
            json!({"allOf": [{"$ref": below}, {"$ref": below}]}),
        );
    }
    json!({
        "type": "object",
        "$ref": format!("#/$defs/{}", write_key(&format!("l{levels}~x"))),
        "$defs": defs
    })
}

/// The fan-out bound (100,000 subschemas applied to one value) holds for references written
/// with a bare `~` (`#/$defs/l0~x`), which resolve to the same definitions as `l0~0x`.
#[test]
fn fan_out_bound_holds_for_unescaped_tilde_references() {
    let escaped = doubling(40, |key| key.replace('~', "~0"));
    let refused = JsonSchemaEngine::new().compile(&escaped);
    assert!(refused.is_err(), "control: the escaped form is refused");
    let unescaped = doubling(40, |key| key.to_owned());
    assert!(
        JsonSchemaEngine::new().compile(&unescaped).is_err(),
        "written with a bare `~`, the same references are refused too"
    );
}

/// A reference into a value the walk does not read as a schema (a `$`-prefixed unknown keyword)
/// has its target checked as the engine reads it: the fan-out bound holds there too.
#[test]
fn fan_out_bound_holds_under_unknown_dollar_keyword() {
    let under_defs = doubling(40, |key| key.replace('~', "~0"));
    assert!(
        JsonSchemaEngine::new().compile(&under_defs).is_err(),
        "control"
    );
    let text = serde_json::to_string(&under_defs)
        .unwrap()
        .replace("$defs", "$x");
    let hidden: Value = serde_json::from_str(&text).unwrap();
    assert!(
        JsonSchemaEngine::new().compile(&hidden).is_err(),
        "the fan-out through a `$` keyword is refused"
    );
}

/// The key strict lowering marks its own nullable properties with is not something a schema can
/// bring in (say, a remote MCP server's): a `null` its property holds is the model's, kept as
/// sent, not taken for "left out".
#[test]
fn a_schema_cannot_carry_the_strict_mode_mark_in() {
    let schema = json!({
        "type": "object",
        "properties": {
            "note": {"type": ["string", "null"], "\u{0}prism:null-means-absent": true}
        },
        "required": ["note"]
    });
    let lowered = lower(&schema, Dialect::OpenAiChat { strict: true }).unwrap();
    assert!(lowered.strict());
    assert!(
        !lowered
            .schema()
            .to_string()
            .contains("prism:null-means-absent"),
        "{}",
        lowered.schema()
    );
    let mut arguments = json!({"note": null});
    lowered.restore_arguments(&mut arguments);
    assert_eq!(arguments, json!({"note": null}));
}

#[test]
fn unions_of_references_branching_at_every_hop_are_restored_quickly() {
    // Ten branches per level over sixteen levels: 10^16 paths, none matching a string.
    let mut defs = Map::new();
    for level in 0..16 {
        let next = json!({"$ref": format!("#/$defs/D{}", level + 1)});
        defs.insert(format!("D{level}"), json!({"anyOf": vec![next; 10]}));
    }
    defs.insert("D16".to_owned(), json!({"type": "integer"}));
    let schema = json!({
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/D0"}, "y": {"type": "string"}},
        "$defs": defs,
    });
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let lowered = lower(&schema, Dialect::OpenAiChat { strict: true });
        let mut arguments = json!({"x": "text", "y": null});
        if let Ok(lowered) = &lowered {
            lowered.restore_arguments(&mut arguments);
        }
        let _ = sender.send((lowered.map(|lowered| lowered.strict()), arguments));
    });
    let answer = receiver.recv_timeout(std::time::Duration::from_secs(10));
    assert_eq!(answer, Ok((Ok(true), json!({"x": "text"}))));
}
