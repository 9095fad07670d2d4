//! [`Interner`]: distinct strings numbered 0, 1, 2… in the order they were first seen.
//!
//! The index handles tens of thousands of words per build, most of them repeats. Numbering each
//! distinct string once lets everything after that (postings, the surface-to-term map, the stem
//! memory) work on `u32` ids. The strings are stored end to end in one buffer rather than one
//! allocation each: a build then allocates a handful of growing buffers instead of one box per
//! word, and dropping an index frees those buffers instead of every word.

use std::fmt;
use std::hash::BuildHasher;
use std::ops::Range;

use foldhash::fast::RandomState;
use hashbrown::HashTable;

/// Strings stored end to end in one buffer, numbered in the order they were pushed.
#[derive(Clone)]
pub(crate) struct StringList {
    text: String,
    /// String `i` is `text[bounds[i]..bounds[i + 1]]`; the first bound is 0.
    bounds: Vec<usize>,
}

impl StringList {
    /// A list with room for `strings` strings of `bytes` bytes in all.
    pub(crate) fn with_capacity(strings: usize, bytes: usize) -> Self {
        let mut bounds = Vec::with_capacity(strings + 1);
        bounds.push(0);
        Self {
            text: String::with_capacity(bytes),
            bounds,
        }
    }

    /// How many strings.
    pub(crate) fn len(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Where string `id` lies in the buffer. Panics when there is no such string.
    fn range(&self, id: u32) -> Range<usize> {
        let id = id as usize;
        self.bounds[id]..self.bounds[id + 1]
    }

    /// String `id`. Panics when there is no such string.
    pub(crate) fn get(&self, id: u32) -> &str {
        &self.text[self.range(id)]
    }

    /// True when string `id` is `text`.
    fn is(&self, id: u32, text: &str) -> bool {
        self.text.as_bytes()[self.range(id)] == *text.as_bytes()
    }

    /// Gives back the room reserved beyond what the strings use.
    fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.bounds.shrink_to_fit();
    }

    /// Appends `text`, returning its number.
    pub(crate) fn push(&mut self, text: &str) -> u32 {
        let id = self.len() as u32;
        self.text.push_str(text);
        self.bounds.push(self.text.len());
        id
    }
}

impl Default for StringList {
    fn default() -> Self {
        Self::with_capacity(0, 0)
    }
}

/// Distinct strings and their ids.
#[derive(Clone, Default)]
pub(crate) struct Interner {
    strings: StringList,
    /// The ids, found by the hash of their string.
    ids: HashTable<u32>,
    hasher: RandomState,
}

impl Interner {
    /// An interner with room for `strings` strings of `bytes` bytes in all.
    pub(crate) fn with_capacity(strings: usize, bytes: usize) -> Self {
        Self {
            strings: StringList::with_capacity(strings, bytes),
            ids: HashTable::with_capacity(strings),
            hasher: RandomState::default(),
        }
    }

    /// How many distinct strings.
    pub(crate) fn len(&self) -> usize {
        self.strings.len()
    }

    /// How many bytes the strings take in all.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.strings.text.len()
    }

    /// The string numbered `id`. Panics when `id` was not returned by this interner.
    pub(crate) fn resolve(&self, id: u32) -> &str {
        self.strings.get(id)
    }

    /// The string numbered `id`, or `None` when there is no such id.
    pub(crate) fn try_resolve(&self, id: u32) -> Option<&str> {
        ((id as usize) < self.len()).then(|| self.resolve(id))
    }

    /// Gives back the room reserved for strings beyond those interned; the table keeps its size.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.strings.shrink_to_fit();
    }

    /// The id of `text`, when it was interned.
    pub(crate) fn get(&self, text: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(text);
        self.ids
            .find(hash, |&id| self.strings.is(id, text))
            .copied()
    }

    /// The id of `text`, numbering it first when it is new, and whether it was new.
    pub(crate) fn intern(&mut self, text: &str) -> (u32, bool) {
        let hash = self.hasher.hash_one(text);
        // Most strings are repeats: a plain lookup first, which is cheaper than an entry.
        if let Some(&id) = self.ids.find(hash, |&id| self.strings.is(id, text)) {
            return (id, false);
        }
        let Self {
            strings,
            ids,
            hasher,
        } = self;
        let id = strings.push(text);
        ids.insert_unique(hash, id, |&id| hasher.hash_one(strings.get(id)));
        (id, true)
    }
}

impl fmt::Debug for Interner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interner")
            .field("strings", &self.len())
            .field("bytes", &self.strings.text.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_an_id_and_ids_count_up() {
        let mut words = Interner::default();
        assert_eq!(words.intern("rain"), (0, true));
        assert_eq!(words.intern(""), (1, true));
        assert_eq!(words.intern("snow"), (2, true));
        assert_eq!(words.intern("rain"), (0, false));
        assert_eq!(words.get("snow"), Some(2));
        assert_eq!(words.get("sleet"), None);
        assert_eq!(words.resolve(0), "rain");
        assert_eq!(words.resolve(1), "");
        assert_eq!(words.try_resolve(2), Some("snow"));
        assert_eq!(words.try_resolve(3), None);
        assert_eq!(words.len(), 3);
    }

    #[test]
    fn ids_survive_growth() {
        let mut words = Interner::with_capacity(2, 4);
        let ids: Vec<u32> = (0..5000)
            .map(|i| words.intern(&format!("w{i}")).0)
            .collect();
        assert_eq!(ids, (0..5000).collect::<Vec<u32>>());
        for i in (0..5000).step_by(97) {
            assert_eq!(words.get(&format!("w{i}")), Some(i));
            assert_eq!(words.resolve(i), format!("w{i}"));
        }
    }
}
