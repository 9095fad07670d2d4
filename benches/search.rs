//! Criterion benchmarks of search disclosure over 1,024 tools: building the index (target
//! <= 5 ms), answering one 12-word query (target <= 50 µs median), and answering a query that is
//! one 60 KiB word (its cost must grow with its length, not faster). Memory is measured by the
//! separate `search_memory` bench, whose counting allocator would slow these timings down.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use prism::search::{MAX_QUERY_BYTES, SearchConfig, SearchLimits, SharedActivatedTools};
use prism_tools::search::ToolIndex;

#[path = "support/catalog.rs"]
mod catalog;

fn index_build(c: &mut Criterion) {
    let tools = catalog::tools(1024);
    // Cold: a fresh tokenizer each time, so every distinct word that needs a stem is stemmed.
    // Dropping the index is not part of building it.
    c.bench_function("search/index_build_1024_tools", |b| {
        b.iter_with_large_drop(|| ToolIndex::build(black_box(&tools)).expect("1024 tools fit"));
    });
    // Warm: one configuration re-indexing, as an agent does for each run's snapshot; its
    // tokenizer remembers the stems.
    let config = SearchConfig::default();
    c.bench_function("search/index_build_1024_tools_remembered_stems", |b| {
        b.iter_with_large_drop(|| config.index(black_box(&tools)));
    });
}

fn query(c: &mut Criterion) {
    let tools = catalog::tools(1024);
    let query = catalog::twelve_word_query();
    let search = SearchConfig::default().index(&tools);
    let activated = SharedActivatedTools::default();
    assert!(
        !search.search(&query, 16, &tools).unwrap().hits().is_empty(),
        "the benchmark query must match something"
    );
    c.bench_function("search/query_12_words_1024_tools", |b| {
        b.iter(|| search.search(black_box(&query), 16, &tools).unwrap());
    });
    c.bench_function("search/disclose_turn_1024_tools", |b| {
        b.iter(|| search.disclose(&tools, black_box(&query), &activated));
    });
}

fn long_word_query(c: &mut Criterion) {
    let tools = catalog::tools(1024);
    // The longest query a host can allow, as one word that the Snowball stemmer would take far
    // longer than its length to stem.
    let limits = SearchLimits::default().with_max_query_bytes(MAX_QUERY_BYTES);
    let search = SearchConfig::default().with_limits(limits).index(&tools);
    let query = "ay".repeat(60 * 1024 / 2);
    assert!(!search.search(&query, 16, &tools).unwrap().query_truncated());
    c.bench_function("search/query_60_kib_single_word_1024_tools", |b| {
        b.iter(|| search.search(black_box(&query), 16, &tools).unwrap());
    });
}

criterion_group!(benches, index_build, query, long_word_query);
criterion_main!(benches);
