//! [`ToolRegistry`]: the tools a host made active.
//!
//! Reads never lock: the registry keeps an immutable snapshot behind an atomic pointer and a write
//! swaps in a new one (copy-on-write). Dispatch reads the snapshot in a few nanoseconds however
//! many threads dispatch at once; registration and removal, which are rare, copy the map.
//!
//! Each change also counts one more generation, which the MCP server waits on to tell its
//! clients that the tool list changed; dispatch never reads it.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use indexmap::IndexMap;
use tokio::sync::Notify;

use crate::definition::ToolDefinition;

type NameMap = IndexMap<Arc<str>, ToolDefinition, foldhash::fast::RandomState>;

/// What `register` does when a name is already taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DuplicatePolicy {
    /// The new tool replaces the old one and keeps its position in [`ToolRegistry::list`].
    #[default]
    Replace,
    /// Registration fails with [`DuplicateTool`].
    Error,
}

/// `register` refused a name that is already taken (strict registries only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateTool(pub String);

impl fmt::Display for DuplicateTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Duplicate tool: {}", self.0)
    }
}

impl std::error::Error for DuplicateTool {}

/// `resolve` found no tool of that name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownTool(pub String);

impl fmt::Display for UnknownTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Unknown tool: {}", self.0)
    }
}

impl std::error::Error for UnknownTool {}

/// A tool that declares no parameter schema (see
/// [`ToolDefinition::declares_parameters`]) where one is required: registered in the registry of a
/// secure dispatcher, present when one is built, called through one, or checked by a validator
/// that rejects such tools. Every one of those checks reports this error, naming the tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingParameterSchema(pub String);

impl MissingParameterSchema {
    /// One error for each of `tools` that declares no parameter schema, in their order.
    pub(crate) fn among<'a>(tools: impl IntoIterator<Item = &'a ToolDefinition>) -> Vec<Self> {
        tools
            .into_iter()
            .filter(|tool| !tool.declares_parameters())
            .map(|tool| Self(tool.name().to_owned()))
            .collect()
    }
}

impl fmt::Display for MissingParameterSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tool {} declares no parameter schema (`{{}}` and `true` constrain nothing), and this \
             dispatcher runs only tools that declare one",
            self.0
        )
    }
}

impl std::error::Error for MissingParameterSchema {}

/// [`ToolRegistry::register`] refused a tool; the registry is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The registry refuses duplicate names and this one is taken.
    Duplicate(DuplicateTool),
    /// The registry belongs to a secure dispatcher and the tool declares no parameter schema.
    MissingSchema(MissingParameterSchema),
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate(error) => error.fmt(f),
            Self::MissingSchema(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for RegistryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Duplicate(error) => Some(error),
            Self::MissingSchema(error) => Some(error),
        }
    }
}

/// An immutable view of a registry at one moment, in insertion order.
#[derive(Clone, Default)]
pub struct RegistrySnapshot {
    tools: NameMap,
}

impl RegistrySnapshot {
    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.tools.get(name)
    }

    /// The tools in insertion order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.tools.values()
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// A snapshot holding exactly `tools`, in their order (a later duplicate name replaces an
    /// earlier one in place).
    pub fn from_tools(tools: impl IntoIterator<Item = ToolDefinition>) -> Self {
        let mut snapshot = Self::default();
        for tool in tools {
            snapshot.tools.insert(Arc::clone(tool.name_arc()), tool);
        }
        snapshot
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl fmt::Debug for RegistrySnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

struct Shared {
    policy: DuplicatePolicy,
    snapshot: ArcSwap<RegistrySnapshot>,
    changes: Arc<RegistryChanges>,
    /// Serialises writers, and holds the rule they check a new tool against.
    writer: Mutex<Admission>,
}

/// What a registry requires of a tool before it admits it. Read only by writers, under their
/// lock, so dispatch (which reads the snapshot) never looks at it.
#[derive(Default)]
struct Admission {
    /// Set once a secure dispatcher reads this registry; never unset.
    parameters_required: bool,
}

/// How many times a registry's tools changed (a tool registered or removed), and a way to wait
/// for the next change. Several changes in quick succession may be seen as one: a waiter learns
/// that the tools changed since the generation it saw, not how often.
#[derive(Debug, Default)]
// Read only by the MCP server, which tells its clients.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) struct RegistryChanges {
    generation: AtomicU64,
    changed: Notify,
}

#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
impl RegistryChanges {
    /// The generation now. Read it before reading the tools, so a change made in between is
    /// announced by [`after`](Self::after) rather than missed.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Returns the generation once it is no longer `seen`: at once when the tools changed since.
    pub(crate) async fn after(&self, seen: u64) -> u64 {
        loop {
            let changed = self.changed.notified();
            // `notify_waiters` reaches a `Notified` from its creation on, so a change between
            // here and the await below still wakes it.
            let now = self.generation();
            if now != seen {
                return now;
            }
            changed.await;
        }
    }

    /// Counts one change, after the new snapshot is in place, and wakes every waiter.
    fn count(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.changed.notify_waiters();
    }
}

/// The host-active tools. Clones share one registry; [`register`](Self::register) and
/// [`remove`](Self::remove) change it for every clone, and an MCP server serving it tells its
/// connected clients that the tool list changed.
///
/// ```
/// use prism::{ToolDefinition, ToolRegistry};
/// use serde_json::Value;
///
/// let tool = |name: &str| ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null));
/// let registry = ToolRegistry::strict();
/// registry.register(tool("a")).unwrap();
/// assert_eq!(registry.register(tool("a")).unwrap_err().to_string(), "Duplicate tool: a");
/// assert_eq!(registry.resolve("b").unwrap_err().to_string(), "Unknown tool: b");
/// ```
#[derive(Clone)]
pub struct ToolRegistry {
    shared: Arc<Shared>,
}

impl ToolRegistry {
    /// An empty registry where a new tool replaces an old one of the same name.
    pub fn new() -> Self {
        Self::with_policy(DuplicatePolicy::Replace)
    }

    /// An empty registry that refuses duplicate names.
    pub fn strict() -> Self {
        Self::with_policy(DuplicatePolicy::Error)
    }

    /// An empty registry with the given policy.
    pub fn with_policy(policy: DuplicatePolicy) -> Self {
        Self {
            shared: Arc::new(Shared {
                policy,
                snapshot: ArcSwap::from_pointee(RegistrySnapshot::default()),
                changes: Arc::default(),
                writer: Mutex::new(Admission::default()),
            }),
        }
    }

    /// The duplicate policy.
    pub fn policy(&self) -> DuplicatePolicy {
        self.shared.policy
    }

    /// Adds a tool. A replaced tool keeps its position in [`list`](Self::list). Refused when the
    /// name is taken in a strict registry, and when the registry belongs to a secure dispatcher
    /// (see [`requires_parameters`](Self::requires_parameters)) and the tool declares no
    /// parameter schema.
    pub fn register(&self, tool: ToolDefinition) -> Result<(), RegistryError> {
        let writer = self.lock_writer();
        if writer.parameters_required && !tool.declares_parameters() {
            return Err(RegistryError::MissingSchema(MissingParameterSchema(
                tool.name().to_owned(),
            )));
        }
        let current = self.shared.snapshot.load();
        if self.shared.policy == DuplicatePolicy::Error && current.tools.contains_key(tool.name()) {
            return Err(RegistryError::Duplicate(DuplicateTool(
                tool.name().to_owned(),
            )));
        }
        let mut next = RegistrySnapshot::clone(&current);
        next.tools.insert(Arc::clone(tool.name_arc()), tool);
        self.shared.snapshot.store(Arc::new(next));
        self.shared.changes.count();
        Ok(())
    }

    /// Removes the tool called `name` and returns it, or `None` when no tool has that name. The
    /// other tools keep their order. Like [`register`](Self::register) this swaps in a new
    /// snapshot: a [`snapshot`](Self::snapshot) taken before still holds the tool, and a run that
    /// started before pinned its definitions but still consults the live registry, so its calls
    /// to the removed tool are `unknown_tool`.
    ///
    /// ```
    /// use prism::{ToolDefinition, ToolRegistry};
    /// use serde_json::Value;
    ///
    /// let tool = |name: &str| ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null));
    /// let registry = ToolRegistry::from_iter([tool("a"), tool("b")]);
    /// let before = registry.snapshot();
    /// assert_eq!(registry.remove("a").map(|tool| tool.name().to_owned()).as_deref(), Some("a"));
    /// assert!(registry.remove("a").is_none());
    /// assert!(!registry.contains("a") && before.get("a").is_some());
    /// ```
    pub fn remove(&self, name: &str) -> Option<ToolDefinition> {
        let _writer = self.lock_writer();
        let current = self.shared.snapshot.load();
        if !current.tools.contains_key(name) {
            return None;
        }
        let mut next = RegistrySnapshot::clone(&current);
        let removed = next.tools.shift_remove(name);
        self.shared.snapshot.store(Arc::new(next));
        self.shared.changes.count();
        removed
    }

    /// True once a secure dispatcher reads this registry: from then on, through every clone,
    /// [`register`](Self::register) refuses tools that declare no parameter schema.
    pub fn requires_parameters(&self) -> bool {
        self.lock_writer().parameters_required
    }

    /// Makes this registry refuse, from now on, tools that declare no parameter schema. Fails
    /// without changing anything when tools registered now declare none, naming them. The check
    /// and the change happen under the writers' lock, so no registration slips in between.
    pub(crate) fn require_parameters(&self) -> Result<(), Vec<MissingParameterSchema>> {
        let mut writer = self.lock_writer();
        let missing = MissingParameterSchema::among(self.shared.snapshot.load().iter());
        if !missing.is_empty() {
            return Err(missing);
        }
        writer.parameters_required = true;
        Ok(())
    }

    fn lock_writer(&self) -> std::sync::MutexGuard<'_, Admission> {
        // A writer never panics between two statements that leave the rule half-set.
        self.shared
            .writer
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// The tool called `name`, if registered.
    pub fn get(&self, name: &str) -> Option<ToolDefinition> {
        self.shared.snapshot.load().get(name).cloned()
    }

    /// The tool called `name`, or `Unknown tool: <name>`.
    pub fn resolve(&self, name: &str) -> Result<ToolDefinition, UnknownTool> {
        self.get(name).ok_or_else(|| UnknownTool(name.to_owned()))
    }

    /// Every tool, in insertion order.
    pub fn list(&self) -> Vec<ToolDefinition> {
        self.shared.snapshot.load().iter().cloned().collect()
    }

    /// True when a tool of that name is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.shared.snapshot.load().get(name).is_some()
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.shared.snapshot.load().len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The current snapshot; later registrations do not change it.
    pub fn snapshot(&self) -> Arc<RegistrySnapshot> {
        self.shared.snapshot.load_full()
    }

    /// The current snapshot, borrowed without taking a lock or a reference count. Meant for a
    /// short synchronous section: dispatch looks a tool up and runs its guards under it, and lets
    /// it go before the first await.
    pub(crate) fn borrow_snapshot(&self) -> arc_swap::Guard<Arc<RegistrySnapshot>> {
        self.shared.snapshot.load()
    }

    /// The count of this registry's changes, shared by every clone.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn changes(&self) -> &Arc<RegistryChanges> {
        &self.shared.changes
    }
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("policy", &self.shared.policy)
            .field("requires_parameters", &self.requires_parameters())
            .field("tools", &*self.shared.snapshot.load())
            .finish()
    }
}

/// Builds a replacing registry; a later tool of the same name replaces an earlier one.
impl FromIterator<ToolDefinition> for ToolRegistry {
    fn from_iter<I: IntoIterator<Item = ToolDefinition>>(tools: I) -> Self {
        let registry = Self::new();
        registry
            .shared
            .snapshot
            .store(Arc::new(RegistrySnapshot::from_tools(tools)));
        registry
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::Value;

    use super::*;

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null))
    }

    #[test]
    fn registering_and_removing_count_changes_and_refusals_do_not() {
        let registry = ToolRegistry::strict();
        let changes = Arc::clone(registry.changes());
        let start = changes.generation();
        registry.register(tool("a")).unwrap();
        assert_eq!(changes.generation(), start + 1);
        assert!(registry.register(tool("a")).is_err());
        assert!(registry.remove("b").is_none());
        assert_eq!(changes.generation(), start + 1, "nothing changed");
        registry.clone().remove("a").unwrap();
        assert_eq!(
            changes.generation(),
            start + 2,
            "a clone changes the same registry"
        );
    }

    #[tokio::test]
    async fn a_waiter_wakes_on_the_next_change_or_at_once_after_one() {
        let registry = ToolRegistry::new();
        let changes = Arc::clone(registry.changes());
        let seen = changes.generation();
        let waiting = tokio::spawn({
            let changes = Arc::clone(&changes);
            async move { changes.after(seen).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        registry.register(tool("a")).unwrap();
        let now = tokio::time::timeout(Duration::from_secs(30), waiting)
            .await
            .expect("the change wakes the waiter")
            .unwrap();
        assert_eq!(now, seen + 1);
        // A change the waiter did not see yet is reported without waiting.
        registry.register(tool("b")).unwrap();
        registry.register(tool("c")).unwrap();
        let later = tokio::time::timeout(Duration::from_secs(30), changes.after(now))
            .await
            .expect("two changes since are seen at once");
        assert_eq!(later, now + 2, "coalesced into one wake-up");
    }
}
