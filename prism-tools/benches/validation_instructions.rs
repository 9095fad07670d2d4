//! A driver for counting instructions with valgrind, not a timing benchmark. It repeats one
//! validation step on the `validation` benchmark's schemas a given number of times, so the cost
//! of one step is the difference between two runs divided by the difference in repeats: the
//! set-up cancels out, and unlike wall time the count does not depend on how busy the machine is.
//!
//! ```text
//! cargo bench -p prism-tools --features json-schema --bench validation_instructions --no-run
//! valgrind --tool=callgrind --toggle-collect=validation_instructions::measured \
//!     <executable> adapter small 1000                             # then again with 2000
//! ```
//!
//! With `--toggle-collect`, only the repeated loop is counted; `callgrind_annotate
//! --inclusive=yes` on its output then shows where one step's instructions go.
//!
//! Steps: `is-valid` (the compiled schema's `is_valid`), `walk` (the argument-limit walk),
//! `walk+is-valid` (both, called one after the other), `check` (the engine's check, which is
//! the same two) and `adapter` (the dispatcher's validator: definition memo, then the check).
//! Without arguments, as under a plain `cargo bench`, it prints this usage and exits.

use std::hint::black_box;

use prism_tools::guard::Verdict;
use prism_tools::validation::{JsonSchemaEngine, SchemaEngine, SchemaValidator};
use prism_tools::{ArgumentValidator, ToolDefinition};
use serde_json::Value;

#[path = "support/schemas.rs"]
mod schemas;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(step), Some((schema, value)), Some(Ok(repeats))) = (
        args.next(),
        args.next().and_then(|size| schemas::named(&size)),
        args.next().map(|n| n.parse::<usize>()),
    ) else {
        println!(
            "usage: validation_instructions is-valid|walk|walk+is-valid|check|adapter small|large REPEATS"
        );
        return;
    };
    let engine = JsonSchemaEngine::new();
    let compiled = engine.compile(&schema).expect("the schema compiles");
    let adapter = SchemaValidator::new(engine.clone());
    let tool = ToolDefinition::builder("bench")
        .parameters(schema)
        .run_sync(|_, _| Ok(Value::Null));
    adapter.prepare(&tool).expect("the schema compiles");
    let limits = *engine.limits();
    let step: &dyn Fn() -> bool = match step.as_str() {
        "is-valid" => &|| compiled.is_valid(black_box(&value)),
        "walk" => &|| limits.check_arguments(black_box(&value)).is_ok(),
        // `is_ok_and` consumes the result, so an `Ok` needs no call to drop the error type
        // (as in the engine's `?`); `is_ok` here could cost such a call, depending on inlining.
        "walk+is-valid" => &|| {
            let value = black_box(&value);
            limits
                .check_arguments(value)
                .is_ok_and(|()| compiled.is_valid(value))
        },
        "check" => &|| {
            engine
                .check(black_box(&compiled), black_box(&value))
                .is_ok()
        },
        "adapter" => &|| {
            matches!(
                adapter.validate(black_box(&tool), black_box(&value)),
                Verdict::Ready(Ok(()))
            )
        },
        other => {
            println!("unknown step `{other}`");
            return;
        }
    };
    measured(step, repeats);
}

/// The loop callgrind counts (`--toggle-collect=validation_instructions::measured`).
#[inline(never)]
fn measured(step: &dyn Fn() -> bool, repeats: usize) {
    for _ in 0..repeats {
        assert!(
            black_box(step()),
            "the benchmark arguments match the schema"
        );
    }
}
