//! The lexical index: fields, prefix matching, bounds and bad configuration.

use prism::ToolDefinition;
use prism::search::{
    Bm25, FieldWeights, MAX_FIELD_BYTES, MAX_INDEXED_TOOLS, SearchConfig, Tokenizer,
};
use prism_tools::search::{IndexError, ToolIndex};
use serde_json::{Value, json};

#[path = "support/search.rs"]
mod support;
use support::tool;

#[test]
fn duplicate_names_and_oversized_snapshots_are_refused() {
    let tools = vec![tool("a", "One."), tool("a", "Two.")];
    assert_eq!(
        ToolIndex::build(&tools).unwrap_err(),
        IndexError::DuplicateName("a".into())
    );
    let many: Vec<_> = (0..=MAX_INDEXED_TOOLS)
        .map(|i| tool(&format!("t{i}"), ""))
        .collect();
    let error = ToolIndex::build(&many).unwrap_err();
    assert_eq!(error, IndexError::TooManyTools { count: 1025 });
    assert!(error.to_string().contains("1024"));
}

#[test]
fn a_word_the_tools_never_use_matches_by_a_long_shared_prefix() {
    let tools = vec![
        tool("crypto_prices", "Prices of cryptocurrencies."),
        tool("rent", "Rent a flat."),
    ];
    let index = ToolIndex::build(&tools).unwrap();
    let query = index.query("crypt rental cat");
    let terms = query.terms();
    // "crypt" is not indexed, but it begins "crypto", the whole name "crypto_prices" and
    // "cryptocurrencies" (stems "crypto", "crypto_pric", "cryptocurr"), in term order.
    assert!(terms[0].term().is_none());
    let related: Vec<_> = terms[0]
        .matches()
        .iter()
        .map(|found| index.term_text(found.term).unwrap())
        .collect();
    assert_eq!(related, ["crypto", "crypto_pric", "cryptocurr"]);
    assert!(terms[0].matches().iter().all(|found| found.weight == 0.5));
    // "rental" is not indexed; "rent" is a prefix of it.
    assert_eq!(terms[1].matches().len(), 1);
    assert_eq!(index.term_text(terms[1].matches()[0].term), Some("rent"));
    // Short words never expand.
    assert!(terms[2].matches().is_empty());

    let plain = ToolIndex::build_with(&tools, Tokenizer::plain(), FieldWeights::UNIFORM).unwrap();
    assert!(plain.query("rental").is_unmatched());
}

#[test]
fn name_words_weigh_more_than_description_words() {
    let tools = vec![
        tool("calendar", "Shows a schedule."),
        tool("planner", "Shows a calendar."),
    ];
    let search = SearchConfig::default()
        .with_scorer(Bm25::default())
        .index(&tools);
    let results = search.search("calendar", 2, &tools).unwrap();
    let hits: Vec<_> = results
        .hits()
        .iter()
        .map(|hit| (hit.tool.name(), hit.score))
        .collect();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].0, "calendar");
    assert!(hits[0].1 > hits[1].1 && hits[1].1 > 0.0);
}

#[test]
fn only_the_first_bytes_of_a_huge_field_are_indexed() {
    let description = format!("{} needle", "filler ".repeat(MAX_FIELD_BYTES / 7 + 1));
    let tools = vec![tool("big", &description)];
    let index = ToolIndex::build(&tools).unwrap();
    assert!(index.query("filler").terms()[0].term().is_some());
    assert!(index.query("needle").is_unmatched());
}

#[test]
fn deeply_nested_schemas_are_read_to_a_bounded_depth() {
    let mut schema = json!({"type": "object", "properties": {"deepest": {"type": "string"}}});
    for level in 0..8 {
        schema = json!({"type": "object", "properties": {format!("level{level}"): schema}});
    }
    let tools = vec![
        ToolDefinition::builder("nested")
            .parameters(schema)
            .run_sync(|_, _| Ok(Value::Null)),
    ];
    let index = ToolIndex::build(&tools).unwrap();
    assert!(index.query("level7").terms()[0].term().is_some());
    assert!(index.query("deepest").is_unmatched());
}

#[test]
fn weights_that_are_not_positive_numbers_count_as_zero() {
    let tools = vec![tool("weather", "Forecasts.")];
    let weights = FieldWeights {
        name: f32::NAN,
        description: -2.0,
        ..FieldWeights::default()
    };
    let search = SearchConfig::default()
        .with_field_weights(weights)
        .index(&tools);
    // Nothing scores above zero, and nothing fails: the tool is simply not ranked.
    assert!(
        search
            .search("weather forecasts", 5, &tools)
            .unwrap()
            .hits()
            .is_empty()
    );
}
