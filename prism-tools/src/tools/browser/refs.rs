//! Element references (`e12`) handed out by snapshots: each names one DOM node, and only the
//! refs of a context's latest snapshot can be acted on.

use std::collections::HashMap;

use super::error::{BrowserError, BrowserErrorKind};

/// The refs of one browser context. A node keeps its ref across snapshots while it stays in the
/// page, so a model that re-reads the page sees the same names; a ref not in the latest snapshot
/// is stale, and one never handed out is unknown.
#[derive(Debug, Default)]
pub(crate) struct RefTable {
    /// Every ref handed out, by DOM node.
    by_node: HashMap<i64, u64>,
    /// The latest snapshot's refs.
    latest: HashMap<u64, i64>,
    issued: u64,
}

impl RefTable {
    /// Starts a new snapshot: the previous one's refs stop being valid.
    pub(crate) fn begin_snapshot(&mut self) {
        self.latest.clear();
    }

    /// The ref of the DOM node `backend_node`, valid until the next snapshot.
    pub(crate) fn assign(&mut self, backend_node: i64) -> String {
        let issued = &mut self.issued;
        let number = *self.by_node.entry(backend_node).or_insert_with(|| {
            *issued += 1;
            *issued
        });
        self.latest.insert(number, backend_node);
        format!("e{number}")
    }

    /// Forgets every ref (the page's document changed, so its nodes are gone).
    pub(crate) fn forget_nodes(&mut self) {
        self.by_node.clear();
        self.latest.clear();
    }

    /// The DOM node `reference` names in the latest snapshot.
    pub(crate) fn resolve(&self, reference: &str) -> Result<i64, BrowserError> {
        let number = reference
            .strip_prefix('e')
            .and_then(|digits| digits.parse::<u64>().ok())
            .ok_or_else(|| {
                BrowserError::new(
                    BrowserErrorKind::UnknownRef,
                    format!(
                        "`{reference}` is not an element ref (refs look like `e12`); \
                         call browser_snapshot and use a ref from it"
                    ),
                )
            })?;
        if let Some(node) = self.latest.get(&number) {
            return Ok(*node);
        }
        if number >= 1 && number <= self.issued {
            return Err(stale(reference));
        }
        Err(BrowserError::new(
            BrowserErrorKind::UnknownRef,
            format!(
                "`{reference}` was never handed out; call browser_snapshot and use a ref from it"
            ),
        ))
    }
}

/// The error for a ref whose element is no longer in the page or not in the latest snapshot.
pub(crate) fn stale(reference: &str) -> BrowserError {
    BrowserError::new(
        BrowserErrorKind::StaleRef,
        format!(
            "`{reference}` is stale: the page changed since the snapshot it came from; \
             call browser_snapshot again and use a ref from the new snapshot"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_keeps_its_ref_and_only_the_latest_snapshot_counts() {
        let mut refs = RefTable::default();
        refs.begin_snapshot();
        assert_eq!(refs.assign(40), "e1");
        assert_eq!(refs.assign(41), "e2");
        refs.begin_snapshot();
        assert_eq!(refs.assign(41), "e2");
        assert_eq!(refs.assign(42), "e3");
        assert_eq!(refs.resolve("e2").unwrap(), 41);
        assert_eq!(
            refs.resolve("e1").unwrap_err().kind(),
            BrowserErrorKind::StaleRef
        );
        assert_eq!(
            refs.resolve("e9").unwrap_err().kind(),
            BrowserErrorKind::UnknownRef
        );
        assert_eq!(
            refs.resolve("button").unwrap_err().kind(),
            BrowserErrorKind::UnknownRef
        );
        refs.forget_nodes();
        refs.begin_snapshot();
        assert_eq!(refs.assign(41), "e4");
        assert_eq!(
            refs.resolve("e2").unwrap_err().kind(),
            BrowserErrorKind::StaleRef
        );
    }
}
