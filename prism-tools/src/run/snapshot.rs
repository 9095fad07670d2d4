//! [`RunTools`]: the run's grant, resolved once against the registry.
//!
//! A run takes one snapshot of the registry at its start: every registered tool when the run sets
//! no `tool_names`, exactly the named ones otherwise (an empty list is no tools; an unregistered
//! name fails the run before anything is written). The snapshot keeps the registry's order, so the
//! order a host lists names in cannot change the schema bytes. A resumed session intersects its
//! stored grant with the live registry: tools registered since cannot widen it, tools removed
//! since drop out. Tools the dispatcher's own filters refuse are not among the host-active tools:
//! they are left out of every snapshot (a run naming one is not refused, as the name is
//! registered), so no turn describes a tool that dispatch would deny.

use std::collections::HashSet;
use std::sync::Arc;

use crate::definition::ToolDefinition;
use crate::grant::ToolGrant;
use crate::registry::{RegistrySnapshot, ToolRegistry};
use crate::run::RunError;

/// The tools one run may use, in registry order.
#[derive(Clone, Debug)]
pub(crate) struct RunTools {
    tools: Vec<ToolDefinition>,
    names: Vec<Arc<str>>,
    grant: ToolGrant,
    pinned: Arc<RegistrySnapshot>,
}

impl RunTools {
    /// Resolves `requested` (`None`: everything registered) against `registry`, never wider than
    /// `stored` (the grant a resumed session kept, if any), keeping only the tools `active`
    /// admits (the dispatcher's filters).
    pub(crate) fn snapshot(
        registry: &ToolRegistry,
        requested: Option<&[String]>,
        stored: Option<&[String]>,
        active: impl Fn(&str) -> bool,
    ) -> Result<Self, RunError> {
        let live = registry.snapshot();
        if let Some(requested) = requested {
            let mut unknown: Vec<String> = Vec::new();
            for name in requested {
                if live.get(name).is_none() && !unknown.contains(name) {
                    unknown.push(name.clone());
                }
            }
            if !unknown.is_empty() {
                return Err(RunError::UnknownTools { names: unknown });
            }
        }
        let requested: Option<HashSet<&str>> =
            requested.map(|names| names.iter().map(String::as_str).collect());
        let stored: Option<HashSet<&str>> =
            stored.map(|names| names.iter().map(String::as_str).collect());
        let tools: Vec<ToolDefinition> = live
            .iter()
            .filter(|tool| {
                requested
                    .as_ref()
                    .is_none_or(|set| set.contains(tool.name()))
            })
            .filter(|tool| stored.as_ref().is_none_or(|set| set.contains(tool.name())))
            .filter(|tool| active(tool.name()))
            .cloned()
            .collect();
        let names: Vec<Arc<str>> = tools
            .iter()
            .map(|tool| Arc::clone(tool.name_arc()))
            .collect();
        let grant = ToolGrant::only(names.iter());
        let pinned = Arc::new(RegistrySnapshot::from_tools(tools.iter().cloned()));
        Ok(Self {
            tools,
            names,
            grant,
            pinned,
        })
    }

    /// The granted tools, in registry order.
    pub(crate) fn tools(&self) -> &[ToolDefinition] {
        &self.tools
    }

    /// Their names, in the same order.
    pub(crate) fn names(&self) -> &[Arc<str>] {
        &self.names
    }

    /// The grant, for the dispatcher's per-call scope.
    pub(crate) fn grant(&self) -> &ToolGrant {
        &self.grant
    }

    /// The definitions dispatch resolves calls to for the whole run.
    pub(crate) fn pinned(&self) -> &Arc<RegistrySnapshot> {
        &self.pinned
    }

    /// The grant as stored in a session's state.
    pub(crate) fn stored_names(&self) -> Vec<String> {
        self.names.iter().map(|name| name.to_string()).collect()
    }

    /// The tools whose names are in `keep`, in snapshot order.
    pub(crate) fn subset(&self, keep: &HashSet<&str>) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .filter(|tool| keep.contains(tool.name()))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn registry(names: &[&str]) -> ToolRegistry {
        names
            .iter()
            .map(|name| ToolDefinition::builder(*name).run_sync(|_, _| Ok(Value::Null)))
            .collect()
    }

    fn any_tool(_: &str) -> bool {
        true
    }

    fn names(tools: &RunTools) -> Vec<&str> {
        tools.names().iter().map(|name| &**name).collect()
    }

    #[test]
    fn grants_follow_registry_order_and_fail_on_unknown_names() {
        let registry = registry(&["a", "b", "c"]);
        let all = RunTools::snapshot(&registry, None, None, any_tool).unwrap();
        assert_eq!(names(&all), ["a", "b", "c"]);
        let some =
            RunTools::snapshot(&registry, Some(&["c".into(), "a".into()]), None, any_tool).unwrap();
        assert_eq!(names(&some), ["a", "c"]);
        let none = RunTools::snapshot(&registry, Some(&[]), None, any_tool).unwrap();
        assert!(none.tools().is_empty() && !none.grant().allows("a"));
        let error = RunTools::snapshot(&registry, Some(&["a".into(), "zz".into()]), None, any_tool);
        assert_eq!(
            error.unwrap_err(),
            RunError::UnknownTools {
                names: vec!["zz".into()]
            }
        );
    }

    #[test]
    fn a_stored_grant_caps_the_live_registry() {
        let registry = registry(&["a", "b"]);
        let stored = ["a".to_owned(), "gone".to_owned()];
        registry
            .register(ToolDefinition::builder("new").run_sync(|_, _| Ok(Value::Null)))
            .unwrap();
        let resumed = RunTools::snapshot(&registry, None, Some(&stored), any_tool).unwrap();
        assert_eq!(names(&resumed), ["a"]);
    }
}
