//! [`DialectReport`]: what the normaliser changed, one [`Rewrite`] per keyword, for the host to
//! log or review.

use std::fmt;

use serde_json::Value;

/// One change made by [`normalize_dialect`](super::normalize_dialect).
#[derive(Clone, Debug, PartialEq)]
pub struct Rewrite {
    /// JSON pointer to the changed keyword.
    pub pointer: String,
    /// Its value before, if it existed.
    pub before: Option<Value>,
    /// Its value after, if it still exists.
    pub after: Option<Value>,
}

impl fmt::Display for Rewrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |value: &Option<Value>| match value {
            Some(value) => value.to_string(),
            None => "(absent)".to_owned(),
        };
        write!(
            f,
            "{}: {} -> {}",
            self.pointer,
            show(&self.before),
            show(&self.after)
        )
    }
}

/// What [`normalize_dialect`](super::normalize_dialect) rewrote: each schema's own keywords, then
/// its subschemas.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DialectReport {
    /// Every change.
    pub rewrites: Vec<Rewrite>,
}

impl DialectReport {
    /// True when the schema was already standard.
    pub fn is_empty(&self) -> bool {
        self.rewrites.is_empty()
    }
}

impl fmt::Display for DialectReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, rewrite) in self.rewrites.iter().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{rewrite}")?;
        }
        Ok(())
    }
}
