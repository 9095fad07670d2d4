//! The cache of compiled schemas, keyed by content.
//!
//! A definition keeps its compiled schema in its own memo, so the dispatch path never comes
//! here. The cache serves what the memo cannot: definitions made afresh with a schema seen
//! before (an MCP catalogue refreshed per session, say), which find the compiled form here after
//! one hash of their schema, and one-shot checks of a schema that belongs to no definition.
//!
//! The key is a SHA-256 of the schema's compact JSON, computed while the size limit is checked
//! (one serialisation, no buffer), so two different schemas never share an entry. Least
//! recently used entries are dropped past the capacity. Compilation happens outside the lock:
//! two threads meeting the same new schema may both compile it, and neither waits for the other.

use std::io;
use std::num::NonZeroUsize;
use std::sync::Mutex;

use lru::LruCache;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The identity of a schema's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ContentKey([u8; 32]);

impl ContentKey {
    /// Hashes the compact JSON of `schema`; `None` once it passes `max_bytes`, before the rest
    /// is serialised.
    pub(crate) fn of(schema: &Value, max_bytes: usize) -> Option<Self> {
        let hashing = HashingWriter {
            hasher: Sha256::new(),
            written: 0,
            max_bytes,
        };
        // The serialiser writes a few bytes at a time; hash them in blocks.
        let mut buffered = io::BufWriter::with_capacity(8 * 1024, hashing);
        serde_json::to_writer(&mut buffered, schema).ok()?;
        let hashing = buffered.into_inner().ok()?;
        Some(Self(hashing.hasher.finalize().into()))
    }
}

/// Feeds serialised JSON to a hash, counting bytes and failing past a bound.
struct HashingWriter {
    hasher: Sha256,
    written: usize,
    max_bytes: usize,
}

impl io::Write for HashingWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.written = self.written.saturating_add(buf.len());
        if self.written > self.max_bytes {
            return Err(io::Error::other("schema over the size limit"));
        }
        self.hasher.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A bounded least-recently-used map from schema content to what was compiled from it.
pub(crate) struct SchemaCache<V> {
    entries: Mutex<LruCache<ContentKey, V>>,
}

impl<V: Clone> SchemaCache<V> {
    /// An empty cache keeping at most `capacity` entries.
    pub(crate) fn new(capacity: NonZeroUsize) -> Self {
        Self {
            entries: Mutex::new(LruCache::new(capacity)),
        }
    }

    /// The entry for `key`, compiling and inserting it with `compile` when absent.
    pub(crate) fn get_or_insert_with(&self, key: ContentKey, compile: impl FnOnce() -> V) -> V {
        if let Some(found) = self.lock().get(&key) {
            return found.clone();
        }
        let compiled = compile();
        self.lock().put(key, compiled.clone());
        compiled
    }

    /// How many entries it holds.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// A poisoned lock only means another thread panicked while holding it; the map itself is
    /// always in a consistent state between calls, so keep using it.
    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<ContentKey, V>> {
        self.entries
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_follow_content_and_size() {
        let a = ContentKey::of(&json!({"type": "string"}), 100).unwrap();
        let b = ContentKey::of(&json!({"type": "string"}), 100).unwrap();
        let c = ContentKey::of(&json!({"type": "integer"}), 100).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        // `{"type":"string"}` is 17 bytes of compact JSON.
        assert!(ContentKey::of(&json!({"type": "string"}), 17).is_some());
        assert!(ContentKey::of(&json!({"type": "string"}), 16).is_none());
    }

    #[test]
    fn least_recently_used_entries_leave_first() {
        let cache = SchemaCache::new(NonZeroUsize::new(2).unwrap());
        let key = |n: i32| ContentKey::of(&json!(n), 100).unwrap();
        assert_eq!(cache.get_or_insert_with(key(1), || 1), 1);
        assert_eq!(cache.get_or_insert_with(key(2), || 2), 2);
        assert_eq!(cache.get_or_insert_with(key(1), || 0), 1); // hit: 1 is now most recent
        assert_eq!(cache.get_or_insert_with(key(3), || 3), 3); // evicts 2
        assert_eq!(cache.get_or_insert_with(key(2), || 20), 20);
        assert_eq!(cache.len(), 2);
    }
}
