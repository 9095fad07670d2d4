//! The heap held by a search index over 1,024 tools, counted by an instrumented global
//! allocator. Prints one line per catalog size; it measures bytes, not time.

use prism::search::ToolIndex;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[path = "support/catalog.rs"]
mod catalog;

#[global_allocator]
static ALLOCATOR: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

fn main() {
    for count in [199, 1024] {
        let tools = catalog::tools(count);
        let region = Region::new(ALLOCATOR);
        let index = ToolIndex::build(&tools).expect("the catalog fits");
        let change = region.change();
        let held = change.bytes_allocated as isize + change.bytes_reallocated
            - change.bytes_deallocated as isize;
        println!(
            "search/index_memory_{count}_tools: {held} bytes held ({:.1} KiB, {} terms), {} bytes allocated while building",
            held as f64 / 1024.0,
            index.term_count(),
            change.bytes_allocated,
        );
        drop(index);
    }
}
