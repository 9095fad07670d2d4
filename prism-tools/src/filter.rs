//! [`ToolFilter`] and [`filter_tools`]: exact allow/deny names.
//!
//! With several filters, a tool must be in every non-empty allow list and in no deny list. An
//! empty or absent allow list means "no allow restriction" (the opposite of an empty
//! [`ToolGrant`](crate::ToolGrant)). Filtering only ever removes tools from the list it is given.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::definition::ToolDefinition;

/// Exact tool names a scope allows and denies. Deny wins over allow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolFilter {
    /// Names allowed; empty or absent means no restriction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Names denied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// A filter allowing only these names.
    pub fn allow<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allow: Some(names.into_iter().map(Into::into).collect()),
            deny: Vec::new(),
        }
    }

    /// A filter denying these names.
    pub fn deny<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allow: None,
            deny: names.into_iter().map(Into::into).collect(),
        }
    }

    /// Adds denied names.
    pub fn and_deny<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny.extend(names.into_iter().map(Into::into));
        self
    }
}

/// Filters compiled once for per-call checks: every name any filter mentions maps to its verdict,
/// so a call costs one hash lookup however many filters there are. The name checked is already a
/// registered tool's, so flooding the map with colliding names is not possible and a fast hasher
/// is enough.
#[derive(Clone, Debug, Default)]
pub struct CompiledFilters {
    verdicts: HashMap<Arc<str>, bool, foldhash::fast::RandomState>,
    /// Some filter had a non-empty allow list, so a name no filter mentions is denied.
    restricted: bool,
}

impl CompiledFilters {
    /// Compiles `filters`.
    pub fn new<'a>(filters: impl IntoIterator<Item = &'a ToolFilter>) -> Self {
        let mut compiled = Self::default();
        for filter in filters {
            compiled.add(filter);
        }
        compiled
    }

    pub(crate) fn add(&mut self, filter: &ToolFilter) {
        if let Some(allow) = filter.allow.as_ref().filter(|allow| !allow.is_empty()) {
            let listed: HashSet<&str> = allow.iter().map(String::as_str).collect();
            for (name, allowed) in &mut self.verdicts {
                *allowed &= listed.contains(&**name);
            }
            // A name first mentioned here had the verdict of every unmentioned name so far.
            let unmentioned = !self.restricted;
            for name in allow {
                self.verdicts
                    .entry(Arc::from(name.as_str()))
                    .or_insert(unmentioned);
            }
            self.restricted = true;
        }
        for name in &filter.deny {
            self.verdicts.insert(Arc::from(name.as_str()), false);
        }
    }

    /// True when the filters let `name` through.
    pub fn allows(&self, name: &str) -> bool {
        self.verdicts.get(name).copied().unwrap_or(!self.restricted)
    }

    /// True when no filter restricts anything.
    pub fn is_empty(&self) -> bool {
        self.verdicts.is_empty()
    }
}

/// The tools of `tools` that every filter lets through, in their original order.
///
/// ```
/// use prism::ToolDefinition;
/// use prism::registry::{ToolFilter, filter_tools};
/// use serde_json::Value;
///
/// let tools: Vec<_> = ["read", "write", "delete"]
///     .into_iter()
///     .map(|name| ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null)))
///     .collect();
/// let kept = filter_tools(
///     &tools,
///     &[ToolFilter::allow(["read", "write"]), ToolFilter::deny(["write"])],
/// );
/// let names: Vec<_> = kept.iter().map(|tool| tool.name()).collect();
/// assert_eq!(names, ["read"]);
/// ```
pub fn filter_tools(tools: &[ToolDefinition], filters: &[ToolFilter]) -> Vec<ToolDefinition> {
    let compiled = CompiledFilters::new(filters);
    tools
        .iter()
        .filter(|tool| compiled.allows(tool.name()))
        .cloned()
        .collect()
}
