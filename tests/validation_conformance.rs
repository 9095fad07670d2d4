//! The official JSON-Schema-Test-Suite (draft 2020-12) through `JsonSchemaEngine`.
//!
//! The suite (MIT licence, © Julian Berman and contributors) is not checked in: `.ci/conformance.sh`
//! fetches it from the Python `jsonschema` sdist on PyPI into `target/json-schema-test-suite`
//! (or set `PRISM_JSON_SCHEMA_SUITE` to a checkout's root). Without it the test prints
//! `SKIPPED` and passes, unless `PRISM_REQUIRE_DATA=1`.
//!
//! Every required case must get the expected answer, except two listed groups that the
//! validator refuses by design: schemas needing a remote document (refused as remote
//! references) and data carrying a forbidden key (refused as forbidden). Optional and format
//! cases are counted and reported; the format group runs with format assertion on.

#![cfg(feature = "json-schema")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prism::validation::{ArgumentError, JsonSchemaEngine, SchemaEngine, SchemaErrorKind};
use serde_json::Value;

fn suite_root() -> Option<PathBuf> {
    let root = std::env::var_os("PRISM_JSON_SCHEMA_SUITE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/json-schema-test-suite")
        });
    root.join("tests/draft2020-12").is_dir().then_some(root)
}

/// What happened to one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Passed,
    /// Refused at compilation: the schema needs a document from outside.
    RemoteRef,
    /// Refused: the schema or the data has a `__proto__`/`constructor`/`prototype` key.
    ForbiddenKey,
    /// The wrong answer, or a refusal outside the two listed groups.
    Failed,
}

#[derive(Default)]
struct Tally {
    outcomes: BTreeMap<Outcome, usize>,
    /// "file: group / case" for every case not passed, by outcome.
    listed: BTreeMap<Outcome, Vec<String>>,
}

impl Tally {
    fn record(&mut self, outcome: Outcome, name: impl FnOnce() -> String) {
        *self.outcomes.entry(outcome).or_default() += 1;
        if outcome != Outcome::Passed {
            self.listed.entry(outcome).or_default().push(name());
        }
    }

    fn count(&self, outcome: Outcome) -> usize {
        self.outcomes.get(&outcome).copied().unwrap_or(0)
    }

    fn total(&self) -> usize {
        self.outcomes.values().sum()
    }

    fn report(&self, title: &str) {
        println!(
            "{title}: {} cases: {} passed, {} remote-document (refused as remote refs), {} forbidden-key, {} failed",
            self.total(),
            self.count(Outcome::Passed),
            self.count(Outcome::RemoteRef),
            self.count(Outcome::ForbiddenKey),
            self.count(Outcome::Failed),
        );
        for (outcome, names) in &self.listed {
            for name in names {
                println!("  {outcome:?}: {name}");
            }
        }
    }
}

fn run_file(path: &Path, validator: &JsonSchemaEngine, tally: &mut Tally) {
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).unwrap();
    let groups: Vec<Value> = serde_json::from_str(&text).unwrap();
    for group in groups {
        let description = group["description"].as_str().unwrap_or_default();
        let cases = group["tests"].as_array().unwrap();
        let compiled = validator.compile(&group["schema"]);
        if let Err(error) = &compiled
            && error.kind == SchemaErrorKind::RemoteRef
        {
            // Only schemas that really need another document may be refused as remote: the
            // bare engine, offline, cannot compile them either.
            let bare = jsonschema::options().offline().build(&group["schema"]);
            assert!(
                bare.is_err(),
                "{file}: {description}: refused as remote ({error}) but compiles offline"
            );
        }
        for case in cases {
            let name = || {
                format!(
                    "{file}: {description} / {}",
                    case["description"].as_str().unwrap_or_default()
                )
            };
            let expected = case["valid"].as_bool().unwrap();
            let outcome = match &compiled {
                Err(error) if error.kind == SchemaErrorKind::RemoteRef => Outcome::RemoteRef,
                Err(error) if error.kind == SchemaErrorKind::ForbiddenKey => Outcome::ForbiddenKey,
                Err(error) => {
                    println!("  schema refused in {}: {error}", name());
                    Outcome::Failed
                }
                Ok(compiled) => match validator.check(compiled, &case["data"]) {
                    Err(ArgumentError::ForbiddenKey { .. }) => Outcome::ForbiddenKey,
                    Ok(()) if expected => Outcome::Passed,
                    Err(ArgumentError::Invalid { .. }) if !expected => Outcome::Passed,
                    _ => Outcome::Failed,
                },
            };
            tally.record(outcome, name);
        }
    }
}

fn run_dir(dir: &Path, validator: &JsonSchemaEngine) -> Tally {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut tally = Tally::default();
    for file in files {
        run_file(&file, validator, &mut tally);
    }
    tally
}

#[test]
fn draft2020_12_suite() {
    let Some(root) = suite_root() else {
        assert!(
            std::env::var("PRISM_REQUIRE_DATA").as_deref() != Ok("1"),
            "the JSON-Schema-Test-Suite is missing: run .ci/conformance.sh"
        );
        println!(
            "SKIPPED: the JSON-Schema-Test-Suite is missing; run .ci/conformance.sh to fetch it"
        );
        return;
    };
    let tests = root.join("tests/draft2020-12");
    let annotating = JsonSchemaEngine::new();
    let asserting = JsonSchemaEngine::new().with_format_assertion(true);

    let required = run_dir(&tests, &annotating);
    required.report("required");
    let optional = run_dir(&tests.join("optional"), &annotating);
    optional.report("optional");
    let format = run_dir(&tests.join("optional/format"), &asserting);
    format.report("optional/format (format assertion on)");

    assert_eq!(
        required.count(Outcome::Failed),
        0,
        "required cases answered wrongly or refused outside the listed groups"
    );
    assert!(required.total() > 1200, "the suite looks truncated");
    assert_eq!(
        optional.count(Outcome::Failed),
        0,
        "optional cases answered wrongly"
    );
    assert_eq!(
        format.count(Outcome::Failed),
        0,
        "format cases answered wrongly"
    );
}
