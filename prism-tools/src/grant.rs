//! [`ToolGrant`]: which tools a run (or a turn) may use.
//!
//! A grant is not a [`ToolFilter`](crate::ToolFilter). A filter's empty allow list means "no
//! restriction"; a grant's empty list means "no tools". Keeping two types makes it impossible to
//! build one from the other by accident and widen a run.

use std::collections::HashSet;
use std::sync::Arc;

/// The tools a run or turn is allowed to call.
///
/// ```
/// use prism::registry::ToolGrant;
///
/// assert!(ToolGrant::All.allows("anything"));
/// assert!(!ToolGrant::none().allows("anything"));
/// let only = ToolGrant::only(["search", "fetch"]);
/// assert!(only.allows("search") && !only.allows("delete"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ToolGrant {
    /// Every tool the host registered.
    #[default]
    All,
    /// Exactly these names; an empty set means none.
    Only(Arc<HashSet<Arc<str>>>),
}

impl ToolGrant {
    /// A grant of exactly these names.
    pub fn only<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Self::Only(Arc::new(
            names
                .into_iter()
                .map(|name| Arc::from(name.as_ref()))
                .collect(),
        ))
    }

    /// A grant of no tools.
    pub fn none() -> Self {
        Self::Only(Arc::default())
    }

    /// True when `name` is granted.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(names) => names.contains(name),
        }
    }

    /// The names granted by both `self` and `other`: never wider than either.
    pub fn intersect(&self, other: &ToolGrant) -> ToolGrant {
        match (self, other) {
            (Self::All, grant) | (grant, Self::All) => grant.clone(),
            (Self::Only(left), Self::Only(right)) => Self::Only(Arc::new(
                left.iter()
                    .filter(|name| right.contains(*name))
                    .cloned()
                    .collect(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersection_never_widens() {
        let a = ToolGrant::only(["x", "y"]);
        let b = ToolGrant::only(["y", "z"]);
        assert_eq!(a.intersect(&b), ToolGrant::only(["y"]));
        assert_eq!(ToolGrant::All.intersect(&a), a);
        assert_eq!(a.intersect(&ToolGrant::none()), ToolGrant::none());
    }
}
