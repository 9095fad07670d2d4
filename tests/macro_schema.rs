//! The schemas `#[tool]` generates, compared with reviewed golden files in `tests/golden/`.
//!
//! A change in the generated JSON shows up as a failing test with both versions printed. To
//! accept a deliberate change, run `PRISM_UPDATE_GOLDEN=1 cargo test --test macro_schema`, then
//! read the diff of `tests/golden/` before committing it.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use prism::{Tool, ToolDefinition, ToolExecutionContext, tool, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Scalars of every JSON type.
#[tool]
fn scalars(
    flag: bool,
    small: u8,
    count: u32,
    offset: i64,
    ratio: f64,
    label: String,
    letter: char,
) -> String {
    format!("{flag}{small}{count}{offset}{ratio}{label}{letter}")
}

/// Optional arguments are not required.
#[tool]
fn optionals(
    /// Some text, or nothing.
    text: Option<String>,
    numbers: Option<Vec<u16>>,
    required: String,
) -> usize {
    text.map_or(0, |text| text.len()) + numbers.map_or(0, |numbers| numbers.len()) + required.len()
}

/// Lists and maps.
#[tool]
fn collections(
    tags: Vec<String>,
    scores: HashMap<String, f64>,
    ordered: BTreeMap<String, u8>,
    matrix: Vec<Vec<i64>>,
) -> usize {
    tags.len() + scores.len() + ordered.len() + matrix.len()
}

/// A plain enum: one of a few strings.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Colour {
    Red,
    DarkGreen,
}

/// An internally tagged enum.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Shape {
    /// A circle.
    Circle { radius: f64 },
    /// A rectangle.
    Rectangle { width: f64, height: f64 },
}

/// An adjacently tagged enum.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data")]
enum Event {
    Started,
    Progress(u8),
    Finished { ok: bool },
}

/// An externally tagged enum (serde's default).
#[derive(Deserialize, JsonSchema)]
enum Payload {
    Text(String),
    Numbers(Vec<i64>),
}

/// Every enum representation.
#[tool]
fn enums(colour: Colour, shape: Shape, event: Event, payload: Payload) -> f64 {
    let area = match shape {
        Shape::Circle { radius } => radius * radius * std::f64::consts::PI,
        Shape::Rectangle { width, height } => width * height,
    };
    let progress = match event {
        Event::Started => 0.0,
        Event::Progress(percent) => f64::from(percent),
        Event::Finished { ok } => f64::from(u8::from(ok)) * 100.0,
    };
    let size = match payload {
        Payload::Text(text) => text.len(),
        Payload::Numbers(numbers) => numbers.len(),
    };
    let weight = match colour {
        Colour::Red => 1.0,
        Colour::DarkGreen => 2.0,
    };
    weight * (area + progress + size as f64)
}

/// A postal address.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Address {
    street: String,
    /// Five digits.
    postcode: String,
}

#[derive(Deserialize, JsonSchema)]
struct Customer {
    name: String,
    address: Address,
}

#[derive(Deserialize, JsonSchema)]
struct Line {
    sku: String,
    quantity: u16,
}

/// Nested structs, reused through `$defs`.
#[tool]
fn nested(customer: Customer, lines: Vec<Line>, billing: Option<Address>) -> usize {
    let units: usize = lines
        .iter()
        .map(|line| line.sku.len() + usize::from(line.quantity))
        .sum();
    customer.name.len()
        + customer.address.street.len()
        + customer.address.postcode.len()
        + units
        + usize::from(billing.is_some())
}

fn default_page_size() -> u32 {
    20
}

/// Renames, defaults and documented fields.
#[tool(name = "search.documents")]
fn renames_and_defaults(
    /// What to look for.
    #[serde(rename = "q")]
    query: String,
    /// Result page, from zero.
    #[serde(default)]
    page: u32,
    /// Results per page.
    #[serde(default = "default_page_size")]
    page_size: u32,
    #[serde(rename = "type")] r#kind: Option<String>,
    #[schemars(length(min = 1, max = 3))] languages: Vec<String>,
) -> String {
    format!(
        "{query}{page}{page_size}{kind:?}{languages:?}",
        kind = r#kind
    )
}

/// One struct as the whole argument object.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Move {
    /// Where from.
    from_path: String,
    /// Where to.
    to_path: String,
    overwrite: Option<bool>,
}

/// Moves a file.
#[tool(destructive)]
fn move_file(#[args] request: Move, ctx: ToolExecutionContext) -> String {
    let _ = (ctx, request.overwrite);
    format!("{} -> {}", request.from_path, request.to_path)
}

/// Counts words.
#[derive(Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
struct WordCount {
    /// The text.
    text: String,
    /// Count only words at least this long.
    min_length: Option<u8>,
}

impl WordCount {
    async fn run(self, _ctx: ToolExecutionContext) -> Result<usize, String> {
        let min = usize::from(self.min_length.unwrap_or(0));
        Ok(self
            .text
            .split_whitespace()
            .filter(|word| word.len() >= min)
            .count())
    }
}

struct Notes;

#[tools]
impl Notes {
    /// Appends a note.
    #[tool]
    fn append_note(&self, note: String) -> usize {
        note.len()
    }
}

/// Fields declared out of alphabetical order.
#[derive(Deserialize, JsonSchema)]
struct Unsorted {
    zeta: bool,
    alpha: bool,
    mid: bool,
}

/// Parameters declared out of alphabetical order.
#[tool]
fn declaration_order(zeta: String, alpha: u32, mid: Unsorted) -> usize {
    zeta.len() + alpha as usize + usize::from(mid.zeta && mid.alpha && mid.mid)
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// What is compared: everything the model reads about a tool.
fn model_view(definition: &ToolDefinition) -> Value {
    json!({
        "name": definition.name(),
        "description": definition.description(),
        "parameters": definition.parameters(),
        "output_schema": definition.output_schema(),
        "annotations": definition.annotations(),
    })
}

fn check(file: &str, definition: ToolDefinition) {
    let path = golden_dir().join(file);
    let actual = serde_json::to_string_pretty(&model_view(&definition)).unwrap() + "\n";
    if std::env::var_os("PRISM_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "{} is missing ({error}); run with PRISM_UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "the schema of `{}` changed.\n--- {}\n{expected}\n--- generated\n{actual}",
        definition.name(),
        path.display()
    );
}

#[test]
fn scalar_types() {
    check("scalars.json", scalars::definition());
}

#[test]
fn optional_arguments_are_not_required() {
    check("optionals.json", optionals::definition());
}

#[test]
fn lists_and_maps() {
    check("collections.json", collections::definition());
}

#[test]
fn enum_representations() {
    check("enums.json", enums::definition());
}

#[test]
fn nested_structs() {
    check("nested.json", nested::definition());
}

#[test]
fn renames_defaults_and_field_docs() {
    check(
        "renames_and_defaults.json",
        renames_and_defaults::definition(),
    );
}

#[test]
fn whole_argument_object() {
    check("move_file.json", move_file::definition());
}

#[test]
fn derived_tool() {
    check("word_count.json", WordCount::definition());
}

#[test]
fn impl_block_tool() {
    let definitions = Arc::new(Notes).tools();
    check("append_note.json", definitions.into_iter().next().unwrap());
}

/// Models read a schema in the order it is written: parameters and struct fields keep the order
/// of their declaration, in the JSON text as in the value.
#[test]
fn properties_keep_declaration_order() {
    let schema = declaration_order::definition()
        .parameters()
        .unwrap()
        .clone();
    let keys =
        |object: &Value| -> Vec<String> { object.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(keys(&schema["properties"]), ["zeta", "alpha", "mid"]);
    assert_eq!(schema["required"], json!(["zeta", "alpha", "mid"]));
    let unsorted = &schema["$defs"]["Unsorted"];
    assert_eq!(keys(&unsorted["properties"]), ["zeta", "alpha", "mid"]);
    assert_eq!(unsorted["required"], json!(["zeta", "alpha", "mid"]));

    let text = serde_json::to_string(&schema).unwrap();
    let at = |needle: &str| text.find(needle).unwrap();
    assert!(at("\"zeta\":") < at("\"alpha\":") && at("\"alpha\":") < at("\"mid\":"));
    // The root keeps schemars' order, "properties" before "required".
    assert!(at("\"properties\":") < at("\"required\":"));
}

/// The settings every parameter schema follows, whatever the types: checked on all of them so a
/// golden file regenerated carelessly cannot slip one through.
#[test]
fn every_schema_follows_the_settings() {
    let definitions = [
        scalars::definition(),
        optionals::definition(),
        collections::definition(),
        enums::definition(),
        nested::definition(),
        renames_and_defaults::definition(),
        move_file::definition(),
        WordCount::definition(),
    ];
    for definition in definitions {
        let schema = definition.parameters().unwrap();
        let name = definition.name();
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        assert!(schema.get("$schema").is_none(), "{name}");
        assert!(schema.get("title").is_none(), "{name}");
        // Built once per tool: a second definition carries an equal schema.
        assert_eq!(
            Some(schema),
            ToolDefinition::clone(&definition).parameters()
        );
    }
}

/**
 * Adds two numbers.
 *
 * Overflow wraps.
 */
#[tool]
fn block_doc(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// A `/** … */` comment describes the tool as rustdoc shows it: without the `*` of each line.
#[test]
fn a_block_doc_comment_describes_the_tool_without_its_decorations() {
    assert_eq!(
        block_doc::definition().description(),
        Some("Adds two numbers.\n\nOverflow wraps."),
    );
}

/// Adds two numbers.
/// Overflow wraps.
#[tool]
fn opening_line_lines() {}

/** Adds two numbers.
 * Overflow wraps.
 */
#[tool]
fn opening_line_block() {}

/// Sorts a list.
///
/// - ascending by default
///   - stable
#[tool]
fn nested_lines() {}

/**
    Sorts a list.

    - ascending by default
      - stable
*/
#[tool]
fn nested_block() {}

/// Reads a file.
/// Binary files are refused.
#[tool]
fn mixed_lines() {}

/// Reads a file.
/**
 * Binary files are refused.
 */
#[tool]
fn mixed_block() {}

/// A `/** … */` comment describes the tool as the same text in `///` lines does, as rustdoc
/// shows both: text on the opening line, relative indentation and a block beside line comments.
#[test]
fn a_block_doc_comment_describes_the_tool_as_line_comments_do() {
    let pairs = [
        (
            opening_line_lines::definition(),
            opening_line_block::definition(),
            "Adds two numbers.\nOverflow wraps.",
        ),
        (
            nested_lines::definition(),
            nested_block::definition(),
            "Sorts a list.\n\n- ascending by default\n  - stable",
        ),
        (
            mixed_lines::definition(),
            mixed_block::definition(),
            "Reads a file.\nBinary files are refused.",
        ),
    ];
    for (lines, block, expected) in pairs {
        assert_eq!(lines.description(), Some(expected), "{}", lines.name());
        assert_eq!(block.description(), Some(expected), "{}", block.name());
    }
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Report {
    title: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
    #[serde(rename(serialize = "pageCount"))]
    page_count: u32,
}

/// Summarises a document.
#[tool]
fn summarise(title: String) -> Report {
    Report {
        title,
        warnings: Vec::new(),
        page_count: 3,
    }
}

/// The output schema describes what the tool serializes (MCP clients check `structuredContent`
/// against it): a field skipped when empty is optional, a serialize-only rename is the name.
#[test]
fn the_output_schema_accepts_what_the_tool_returns() {
    let schema = summarise::definition()
        .output_schema()
        .expect("an output schema")
        .clone();
    let output = serde_json::to_value(summarise("t".into())).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&output)
        .map(|error| error.to_string())
        .collect();
    assert!(errors.is_empty(), "{output} against {schema}: {errors:?}");
}
