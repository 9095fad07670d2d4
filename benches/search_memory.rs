//! The heap held by a search index, and the heap one query allocates, counted by an
//! instrumented global allocator. Prints one line per figure; it measures bytes, not time.

use prism::search::SearchConfig;
use prism_tools::search::ToolIndex;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[path = "support/catalog.rs"]
mod catalog;

#[global_allocator]
static ALLOCATOR: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// Net bytes still allocated since `region` started.
fn held(region: &Region<'_, std::alloc::System>) -> isize {
    let change = region.change();
    change.bytes_allocated as isize + change.bytes_reallocated - change.bytes_deallocated as isize
}

fn main() {
    for count in [199, 1024] {
        let tools = catalog::tools(count);
        // A fresh tokenizer: the index plus the stems its tokenizer remembers.
        let region = Region::new(ALLOCATOR);
        let index = ToolIndex::build(&tools).expect("the catalog fits");
        let with_stems = held(&region);
        // An index from a configuration that already remembers these stems: the index alone.
        let config = SearchConfig::default();
        drop(config.index(&tools));
        let region = Region::new(ALLOCATOR);
        let search = config.index(&tools);
        let index_only = held(&region);
        println!(
            "search/index_memory_{count}_tools: {index_only} bytes ({:.0} KiB) for the index, \
             {} bytes ({:.0} KiB) for the remembered stems ({} terms)",
            index_only as f64 / 1024.0,
            with_stems - index_only,
            (with_stems - index_only) as f64 / 1024.0,
            index.term_count(),
        );
        drop((index, search));
    }

    let tools = catalog::tools(1024);
    let search = SearchConfig::default().index(&tools);
    let query = catalog::twelve_word_query();
    let region = Region::new(ALLOCATOR);
    let hits = search
        .search(&query, 16, &tools)
        .expect("search works")
        .hits()
        .len();
    let change = region.change();
    println!(
        "search/query_12_words_1024_tools: {} bytes in {} allocations ({hits} hits)",
        change.bytes_allocated, change.allocations,
    );
}
