//! A driver for counting instructions with valgrind, not a timing benchmark. It repeats one
//! search operation over the benchmark catalog of 1,024 tools a given number of times, so the
//! cost of one operation is the difference between two runs divided by the difference in
//! repeats; building the catalog and the setup cancel out, and unlike wall time the count does
//! not depend on how busy the machine is.
//!
//! ```text
//! cargo bench --bench search_instructions --no-run     # prints the executable's path
//! valgrind --tool=callgrind <executable> cold 1        # then again with `cold 6`
//! ```
//!
//! Operations: `cold` (an index built with a fresh tokenizer, so every word is stemmed),
//! `warm` (an index built by a configuration that already remembers the stems), `query` (one
//! 12-word query) and `disclose` (one turn's disclosure). Without an operation, as under a plain
//! `cargo bench`, it prints this usage and exits.

use std::hint::black_box;

use prism::search::{SearchConfig, SharedActivatedTools};
use prism_tools::search::ToolIndex;

#[path = "support/catalog.rs"]
mod catalog;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(operation), Some(Ok(repeats))) = (args.next(), args.next().map(|n| n.parse())) else {
        println!("usage: search_instructions cold|warm|query|disclose REPEATS");
        return;
    };
    let tools = catalog::tools(1024);
    let query = catalog::twelve_word_query();
    let config = SearchConfig::default();
    let search = config.index(&tools);
    let activated = SharedActivatedTools::default();
    // Built indexes are kept, not dropped: the criterion benchmark leaves dropping out too.
    let mut kept = Vec::with_capacity(repeats);
    let mut searches = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        match operation.as_str() {
            "cold" => kept.push(black_box(ToolIndex::build(&tools).expect("1024 tools fit"))),
            "warm" => searches.push(black_box(config.index(&tools))),
            "query" => drop(black_box(search.search(&query, 16, &tools))),
            "disclose" => drop(black_box(search.disclose(&tools, &query, &activated))),
            other => {
                println!("unknown operation `{other}`");
                return;
            }
        }
    }
    // The process ends here: freeing what was kept would only add to the count.
    std::mem::forget((kept, searches));
}
