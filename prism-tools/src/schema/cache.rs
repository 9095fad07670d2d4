//! [`LoweringCache`]: each definition's schema lowered once per dialect.

use std::num::NonZeroUsize;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use lru::LruCache;
use serde_json::{Value, json};

use super::dialect::Dialect;
use super::lower::lower;
use super::lowered::LoweredSchema;
use super::lowering_error::LoweringError;
use crate::definition::{DefinitionIdentity, ToolDefinition};

/// The schema of a tool that declares none: an object without properties.
static NO_PARAMETERS: LazyLock<Value> =
    LazyLock::new(|| json!({"type": "object", "properties": {}}));

type Lowered = Result<Arc<LoweredSchema>, LoweringError>;

struct Entry {
    /// Holds the definition's allocation so the key's address stays its own.
    identity: DefinitionIdentity,
    lowered: Lowered,
}

/// Lowered schemas per (definition, dialect), computed once per definition.
///
/// Keyed on the definition's identity, not its name or content: a definition replaced in the
/// registry (or rebuilt with [`ToolDefinition::with_parameters`]) is a different definition and
/// is lowered afresh, while clones of one definition share its entry. Thread-safe; lowering
/// runs outside the lock (two threads meeting a new definition may both lower it, and neither
/// waits). Bounded: past the capacity the least recently used entries are dropped. Errors are
/// cached too, so a broken schema is not lowered again on every request.
///
/// ```
/// use prism::schema::{Dialect, LoweringCache};
/// use prism::ToolDefinition;
/// use serde_json::{json, Value};
///
/// let cache = LoweringCache::default();
/// let tool = ToolDefinition::builder("echo")
///     .parameters(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
///     .run_sync(|args: &Value, _| Ok(args.clone()));
/// let dialect = Dialect::OpenAiChat { strict: true };
/// let first = cache.lower(&tool, dialect).unwrap();
/// let again = cache.lower(&tool.clone(), dialect).unwrap();
/// assert!(std::sync::Arc::ptr_eq(&first, &again));
///
/// let replaced = tool.with_parameters(json!({"type": "object"}));
/// assert!(!std::sync::Arc::ptr_eq(&first, &cache.lower(&replaced, dialect).unwrap()));
/// ```
pub struct LoweringCache {
    entries: Mutex<LruCache<(usize, Dialect), Entry>>,
}

impl LoweringCache {
    /// Entries kept by [`default`](Default::default): enough for a large catalogue in every
    /// dialect.
    pub const DEFAULT_CAPACITY: usize = 4096;

    /// An empty cache keeping at most `capacity` lowered schemas.
    pub fn new(capacity: NonZeroUsize) -> Self {
        Self {
            entries: Mutex::new(LruCache::new(capacity)),
        }
    }

    /// The parameters of `definition` lowered to `dialect`; computed on first use. A definition
    /// without parameters is lowered as an object without properties.
    pub fn lower(&self, definition: &ToolDefinition, dialect: Dialect) -> Lowered {
        let identity = definition.identity();
        let key = (identity.address(), dialect);
        if let Some(entry) = self.lock().get(&key) {
            return entry.lowered.clone();
        }
        let schema = definition.parameters().unwrap_or(&NO_PARAMETERS);
        let lowered = lower(schema, dialect).map(Arc::new);
        self.lock().put(
            key,
            Entry {
                identity,
                lowered: lowered.clone(),
            },
        );
        lowered
    }

    /// How many lowered schemas are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the entries of definitions that no longer exist. They would be evicted in time;
    /// this frees them at once (a host that replaces its catalogue may call it after a swap).
    pub fn purge_dropped(&self) {
        let mut entries = self.lock();
        let dropped: Vec<(usize, Dialect)> = entries
            .iter()
            .filter(|(_, entry)| !entry.identity.is_alive())
            .map(|(key, _)| *key)
            .collect();
        for key in dropped {
            entries.pop(&key);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<(usize, Dialect), Entry>> {
        // A panic elsewhere cannot leave an entry half-written: every change is one call.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for LoweringCache {
    fn default() -> Self {
        Self::new(NonZeroUsize::new(Self::DEFAULT_CAPACITY).unwrap_or(NonZeroUsize::MIN))
    }
}

impl std::fmt::Debug for LoweringCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoweringCache")
            .field("len", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(schema: Value) -> ToolDefinition {
        ToolDefinition::builder("t")
            .parameters(schema)
            .run_sync(|_, _| Ok(Value::Null))
    }

    #[test]
    fn one_entry_per_definition_and_dialect() {
        let cache = LoweringCache::default();
        let a = tool(json!({"type": "object", "properties": {"x": {"type": "integer"}}}));
        let strict = Dialect::OpenAiChat { strict: true };
        let loose = Dialect::OpenAiChat { strict: false };
        let first = cache.lower(&a, strict).unwrap();
        assert!(Arc::ptr_eq(
            &first,
            &cache.lower(&a.clone(), strict).unwrap()
        ));
        assert!(!Arc::ptr_eq(&first, &cache.lower(&a, loose).unwrap()));
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_dropped_definition_is_never_served_to_a_new_one() {
        let cache = LoweringCache::default();
        let dialect = Dialect::Mcp;
        for round in 0..50 {
            // Each definition is dropped before the next is made, so the allocator would reuse
            // the address if the cache did not hold it.
            let definition = tool(
                json!({"type": "object", "properties": {format!("p{round}"): {"type": "string"}}}),
            );
            let lowered = cache.lower(&definition, dialect).unwrap();
            assert!(
                lowered.schema()["properties"]
                    .get(format!("p{round}"))
                    .is_some()
            );
        }
        assert_eq!(cache.len(), 50);
        cache.purge_dropped();
        assert!(cache.is_empty());
    }

    #[test]
    fn bounded_and_errors_cached() {
        let cache = LoweringCache::new(NonZeroUsize::new(2).unwrap());
        let broken = tool(json!({"type": "string"}));
        let definitions: Vec<_> = (0..3)
            .map(|_| broken.clone())
            .chain((0..3).map(|_| tool(json!({}))))
            .collect();
        for definition in &definitions {
            let _ = cache.lower(definition, Dialect::NoRef);
        }
        assert_eq!(cache.len(), 2);
        assert!(cache.lower(&broken, Dialect::NoRef).is_err());
        let none = ToolDefinition::builder("n").run_sync(|_, _| Ok(Value::Null));
        let lowered = cache.lower(&none, Dialect::GeminiParameters).unwrap();
        assert_eq!(
            lowered.schema(),
            &json!({"type": "object", "properties": {}})
        );
        assert!(lowered.downgrades().is_empty());
    }
}
