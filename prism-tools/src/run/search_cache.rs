//! [`SearchCache`]: the search indexes an agent built, reused by later runs over the same snapshot.
//!
//! A search-mode run ranks against one [`ToolSearch`] over its snapshot, built when the run starts
//! and used by every turn. Sessions usually start many runs over the same tools, so the agent
//! keeps the few latest indexes and hands one back when a run's snapshot holds the very same
//! definitions (compared by identity, in order) under the same search configuration and top-k.
//! A tool replaced or removed in the registry gives a different snapshot, hence a new index: a
//! cached index can never describe tools a run does not have.
//!
//! Building happens outside the lock, so two runs starting at once may both build; the cache only
//! saves work, it never decides anything.

use std::collections::VecDeque;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use crate::definition::ToolDefinition;
use crate::search::{SearchConfig, ToolSearch};

/// How many indexes an agent keeps.
const CACHED_SEARCHES: usize = 4;

/// The configuration of runs that set none: one for the process, so its indexes can be reused
/// across runs and share its tokenizer's stem memory.
static DEFAULT_CONFIG: LazyLock<Arc<SearchConfig>> =
    LazyLock::new(|| Arc::new(SearchConfig::default()));

/// Recently built searches, most recent first. Clones share them.
#[derive(Clone, Default)]
pub(crate) struct SearchCache {
    entries: Arc<Mutex<VecDeque<Entry>>>,
}

struct Entry {
    tools: Vec<ToolDefinition>,
    config: Arc<SearchConfig>,
    top_k: usize,
    search: ToolSearch,
}

impl Entry {
    fn serves(&self, tools: &[ToolDefinition], config: &Arc<SearchConfig>, top_k: usize) -> bool {
        self.top_k == top_k
            && Arc::ptr_eq(&self.config, config)
            && self.tools.len() == tools.len()
            && self.tools.iter().zip(tools).all(|(a, b)| a.ptr_eq(b))
    }
}

impl SearchCache {
    /// The search over `tools` with `config` (`None`: the default) and `top_k`, built on a miss.
    pub(crate) fn search_for(
        &self,
        tools: &[ToolDefinition],
        config: Option<&Arc<SearchConfig>>,
        top_k: usize,
    ) -> ToolSearch {
        let config = config.unwrap_or(&DEFAULT_CONFIG);
        let limits = config.limits().with_top_k(top_k);
        let top_k = limits.top_k();
        {
            let mut entries = self.lock();
            let found = entries
                .iter()
                .position(|entry| entry.serves(tools, config, top_k));
            if let Some(entry) = found.and_then(|at| entries.remove(at)) {
                let search = entry.search.clone();
                entries.push_front(entry);
                return search;
            }
        }
        let search = SearchConfig::clone(config).with_limits(limits).index(tools);
        let mut entries = self.lock();
        entries.push_front(Entry {
            tools: tools.to_vec(),
            config: Arc::clone(config),
            top_k,
            search: search.clone(),
        });
        entries.truncate(CACHED_SEARCHES);
        search
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<Entry>> {
        // Every update is a single push, remove or truncate: the list is valid after a panic.
        self.entries
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn tools(names: &[&str]) -> Vec<ToolDefinition> {
        names
            .iter()
            .map(|name| ToolDefinition::builder(*name).run_sync(|_, _| Ok(Value::Null)))
            .collect()
    }

    #[test]
    fn the_same_snapshot_reuses_its_index() {
        let cache = SearchCache::default();
        let snapshot = tools(&["weather", "stocks"]);
        let first = cache.search_for(&snapshot, None, 4);
        assert!(first.same_as(&cache.search_for(&snapshot.clone(), None, 4)));
        assert_eq!(first.limits().top_k(), 4);

        // Another top-k, another configuration, or other definitions under the same names: new.
        assert!(!first.same_as(&cache.search_for(&snapshot, None, 5)));
        let config = Arc::new(SearchConfig::default());
        assert!(!first.same_as(&cache.search_for(&snapshot, Some(&config), 4)));
        let rebuilt = tools(&["weather", "stocks"]);
        assert!(!first.same_as(&cache.search_for(&rebuilt, None, 4)));
    }

    #[test]
    fn only_the_latest_indexes_are_kept() {
        let cache = SearchCache::default();
        let snapshot = tools(&["weather"]);
        let first = cache.search_for(&snapshot, None, 1);
        for top_k in 2..=CACHED_SEARCHES {
            cache.search_for(&snapshot, None, top_k);
        }
        assert!(first.same_as(&cache.search_for(&snapshot, None, 1)), "kept");
        for top_k in 2..=CACHED_SEARCHES + 1 {
            cache.search_for(&snapshot, None, top_k + 10);
        }
        assert_eq!(cache.lock().len(), CACHED_SEARCHES);
        assert!(
            !first.same_as(&cache.search_for(&snapshot, None, 1)),
            "evicted"
        );
    }
}
