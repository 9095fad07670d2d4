//! [`ActivatedTools`]: the tool names a session's `search_tools` calls turned up.
//!
//! Activated tools are disclosed on every later turn of the session, on top of that turn's
//! ranked tools, so a model that found a tool once keeps seeing it. Activation is only a name:
//! it grants nothing (dispatch still checks the registry, the filters and the grant on every
//! call) and a name that is not in a turn's input list is simply ignored, so a stored session
//! stays harmless after the host removes a tool.
//!
//! The list is bounded ([`MAX_ACTIVATED_TOOLS`]): past the cap the oldest name is evicted, and
//! activating a name again makes it the newest. It serialises as a JSON array of names, oldest
//! first, for the session state; reading one back applies the same bound and drops repeats.
//!
//! [`SharedActivatedTools`] is the handle a session and its `search_tools` tool share: the tool
//! writes into it when it runs, the session reads it when it plans the next turn and persists it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::limits::MAX_ACTIVATED_TOOLS;

/// Activated tool names, oldest first, at most [`MAX_ACTIVATED_TOOLS`].
///
/// ```
/// use prism::search::ActivatedTools;
///
/// let mut activated = ActivatedTools::new();
/// activated.activate("send_email");
/// activated.activate("weather");
/// activated.activate("send_email"); // now the newest
/// assert_eq!(activated.names().collect::<Vec<_>>(), ["weather", "send_email"]);
///
/// let state = serde_json::to_string(&activated).unwrap();
/// assert_eq!(state, r#"["weather","send_email"]"#);
/// let restored: ActivatedTools = serde_json::from_str(&state).unwrap();
/// assert_eq!(restored, activated);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActivatedTools {
    names: VecDeque<Arc<str>>,
}

impl ActivatedTools {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks `name` active (the newest), evicting the oldest name past the cap.
    pub fn activate(&mut self, name: impl Into<Arc<str>>) {
        let name = name.into();
        if let Some(at) = self.names.iter().position(|known| *known == name) {
            self.names.remove(at);
        }
        if self.names.len() == MAX_ACTIVATED_TOOLS {
            self.names.pop_front();
        }
        self.names.push_back(name);
    }

    /// True when `name` is active.
    pub fn contains(&self, name: &str) -> bool {
        self.names.iter().any(|known| &**known == name)
    }

    /// The names, oldest first.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.names.iter().map(|name| &**name)
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Forgets every name.
    pub fn clear(&mut self) {
        self.names.clear();
    }
}

impl<S: Into<Arc<str>>> FromIterator<S> for ActivatedTools {
    /// Activates the names in order: later repeats move a name to the newest place, and only
    /// the newest [`MAX_ACTIVATED_TOOLS`] are kept.
    fn from_iter<I: IntoIterator<Item = S>>(names: I) -> Self {
        let mut activated = Self::new();
        for name in names {
            activated.activate(name);
        }
        activated
    }
}

impl Serialize for ActivatedTools {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        serializer.collect_seq(self.names())
    }
}

impl<'de> Deserialize<'de> for ActivatedTools {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(deserializer)?;
        Ok(names.into_iter().collect())
    }
}

/// A session's [`ActivatedTools`], shared with the `search_tools` tool it discloses.
///
/// Clones share one list. The lock is held only for a copy or an update, never across an await.
///
/// ```
/// use prism::search::SharedActivatedTools;
///
/// let session = SharedActivatedTools::default();
/// let tool_side = session.clone();
/// tool_side.activate_all(["weather"]);
/// assert!(session.snapshot().contains("weather"));
/// session.clear();
/// assert!(tool_side.snapshot().is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct SharedActivatedTools {
    inner: Arc<Mutex<ActivatedTools>>,
}

impl SharedActivatedTools {
    /// A handle over `activated` (a restored session state, say).
    pub fn new(activated: ActivatedTools) -> Self {
        Self {
            inner: Arc::new(Mutex::new(activated)),
        }
    }

    /// Activates `names` in order.
    pub fn activate_all<I, S>(&self, names: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<Arc<str>>,
    {
        let mut activated = self.lock();
        for name in names {
            activated.activate(name);
        }
    }

    /// A copy of the current list, to disclose from or to persist.
    pub fn snapshot(&self) -> ActivatedTools {
        self.lock().clone()
    }

    /// Replaces the list (when a session is resumed from stored state).
    pub fn replace(&self, activated: ActivatedTools) {
        *self.lock() = activated;
    }

    /// Forgets every name.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> MutexGuard<'_, ActivatedTools> {
        // The list is valid after any panic (every update is a single push or pop), so a
        // poisoned lock is still safe to use.
        self.inner
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_name_is_evicted_at_the_cap() {
        let mut activated: ActivatedTools = (0..MAX_ACTIVATED_TOOLS)
            .map(|i| format!("tool_{i}"))
            .collect();
        assert_eq!(activated.len(), 128);
        activated.activate("tool_0"); // refreshed: tool_1 is now the oldest
        activated.activate("new");
        assert_eq!(activated.len(), 128);
        assert!(!activated.contains("tool_1"));
        assert!(activated.contains("tool_0") && activated.contains("new"));
        assert_eq!(activated.names().next(), Some("tool_2"));
        assert_eq!(activated.names().last(), Some("new"));
    }

    #[test]
    fn stored_state_is_bounded_and_deduplicated_when_read() {
        let names: Vec<String> = (0..200).map(|i| format!("t{}", i % 150)).collect();
        let json = serde_json::to_string(&names).unwrap();
        let restored: ActivatedTools = serde_json::from_str(&json).unwrap();
        assert_eq!(restored.len(), 128);
        // t0..t49 were repeated last, so they are the newest.
        assert_eq!(restored.names().last(), Some("t49"));
        assert!(restored.contains("t0") && !restored.contains("t50"));
    }

    #[test]
    fn clear_forgets_everything() {
        let mut activated: ActivatedTools = ["a", "b"].into_iter().collect();
        activated.clear();
        assert!(activated.is_empty());
        assert_eq!(serde_json::to_string(&activated).unwrap(), "[]");
    }
}
