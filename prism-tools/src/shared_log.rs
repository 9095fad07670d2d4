//! [`SharedLog`]: an append-only list shared by clones, behind the in-memory event collectors.

use std::sync::{Arc, Mutex, MutexGuard};

/// A list that clones share; appends and reads take a short lock.
pub(crate) struct SharedLog<T>(Arc<Mutex<Vec<T>>>);

impl<T> SharedLog<T> {
    fn lock(&self) -> MutexGuard<'_, Vec<T>> {
        // Nothing panics while the lock is held; a poisoned lock still holds a consistent list.
        self.0.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// Appends an entry.
    pub(crate) fn push(&self, entry: T) {
        self.lock().push(entry);
    }

    /// Takes every entry, leaving the list empty.
    pub(crate) fn take(&self) -> Vec<T> {
        std::mem::take(&mut *self.lock())
    }

    /// How many entries.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

impl<T: Clone> SharedLog<T> {
    /// A copy of every entry so far.
    pub(crate) fn snapshot(&self) -> Vec<T> {
        self.lock().clone()
    }
}

impl<T> Clone for SharedLog<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> Default for SharedLog<T> {
    fn default() -> Self {
        Self(Arc::default())
    }
}
