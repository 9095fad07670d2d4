//! [`LoweredSchema`]: what a provider is sent, and the list of what was changed to get there.

use std::collections::HashSet;
use std::fmt;

use serde_json::Value;

use super::dialect::Dialect;
use super::restore::NullMeansAbsent;

/// What lowering did to one keyword of the canonical schema.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DowngradeAction {
    /// The keyword was dropped: the provider rejects or ignores it. What it constrained is no
    /// longer enforced by the provider (arguments are still validated against the canonical
    /// schema at dispatch, when a validator is configured).
    Removed,
    /// The keyword was dropped and written into the schema's `description` instead, so the model
    /// may still follow it (Anthropic's SDK does the same).
    MovedToDescription,
    /// The keyword was rewritten into an equivalent or looser form the provider accepts; the
    /// text says how (`oneOf` as `anyOf`, a type list as `nullable`, …).
    Rewritten(String),
}

impl fmt::Display for DowngradeAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DowngradeAction::Removed => f.write_str("removed"),
            DowngradeAction::MovedToDescription => f.write_str("moved into the description"),
            DowngradeAction::Rewritten(how) => write!(f, "rewritten: {how}"),
        }
    }
}

/// One change made while lowering: where (a JSON pointer into the *canonical* schema, `""` for
/// the root), which keyword, and what was done.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Downgrade {
    /// The schema object holding the keyword, as a JSON pointer into the canonical schema. A
    /// keyword under `$defs` is reported once, at its definition, however often it is inlined.
    pub pointer: String,
    /// The keyword changed (`format`, `oneOf`, `additionalProperties`, …).
    pub keyword: String,
    /// What was done.
    pub action: DowngradeAction,
}

impl fmt::Display for Downgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "the root"
        } else {
            &self.pointer
        };
        write!(f, "`{}` at {at}: {}", self.keyword, self.action)
    }
}

/// A parameter schema lowered to one [`Dialect`].
///
/// ```
/// use prism::schema::{Dialect, lower};
/// use serde_json::json;
///
/// let canonical = json!({
///     "type": "object",
///     "properties": {
///         "city": {"type": "string"},
///         "days": {"type": "integer", "format": "uint8", "minimum": 0}
///     },
///     "required": ["city"]
/// });
/// let lowered = lower(&canonical, Dialect::OpenAiChat { strict: true }).unwrap();
/// assert!(lowered.strict());
/// assert_eq!(lowered.schema()["required"], json!(["city", "days"]));
/// assert_eq!(lowered.schema()["properties"]["days"]["type"], json!(["integer", "null"]));
///
/// // The model must send `days`; `null` means it left it out.
/// let mut arguments = json!({"city": "Oslo", "days": null});
/// lowered.restore_arguments(&mut arguments);
/// assert_eq!(arguments, json!({"city": "Oslo"}));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LoweredSchema {
    pub(crate) dialect: Dialect,
    pub(crate) schema: Value,
    pub(crate) strict: bool,
    pub(crate) downgrades: Vec<Downgrade>,
    pub(crate) non_strict_reason: Option<String>,
    pub(crate) nulls: NullMeansAbsent,
}

impl LoweredSchema {
    /// The dialect this schema was lowered to.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The schema to send.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The strict flag to send with this tool. `false` both for a non-strict dialect and for a
    /// strict one that fell back (see [`non_strict_reason`](Self::non_strict_reason)). OpenAI
    /// Responses treats a missing flag as `true`, so always send it there.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Every change made to the canonical schema, in the order met.
    pub fn downgrades(&self) -> &[Downgrade] {
        &self.downgrades
    }

    /// Why a strict dialect was lowered non-strict for this tool (an open map, say); `None`
    /// when strict mode was not asked for or was granted.
    pub fn non_strict_reason(&self) -> Option<&str> {
        self.non_strict_reason.as_deref()
    }

    /// Turns arguments a strict model sent back into what the canonical schema describes: a
    /// `null` for a property that was optional (and made required and nullable only for strict
    /// mode) is removed, at any depth, through arrays and references. A `null` the canonical
    /// schema itself allowed (an `Option<T>` field, say) is kept. Arguments that do not match
    /// the lowered schema are left as they are, for validation to report.
    pub fn restore_arguments(&self, arguments: &mut Value) {
        self.nulls.restore(&self.schema, arguments);
    }
}

/// The downgrades of one lowering, each reported once.
#[derive(Clone, Default)]
pub(crate) struct Report {
    downgrades: Vec<Downgrade>,
    seen: HashSet<(String, String)>,
}

impl Report {
    /// Records `action` on `keyword` at `pointer`, unless that keyword there was already
    /// reported (an inlined definition is walked once per use).
    pub(crate) fn add(&mut self, pointer: &str, keyword: &str, action: DowngradeAction) {
        if self.seen.insert((pointer.to_owned(), keyword.to_owned())) {
            self.downgrades.push(Downgrade {
                pointer: pointer.to_owned(),
                keyword: keyword.to_owned(),
                action,
            });
        }
    }

    pub(crate) fn removed(&mut self, pointer: &str, keyword: &str) {
        self.add(pointer, keyword, DowngradeAction::Removed);
    }

    pub(crate) fn rewritten(&mut self, pointer: &str, keyword: &str, how: &str) {
        self.add(pointer, keyword, DowngradeAction::Rewritten(how.to_owned()));
    }

    pub(crate) fn into_downgrades(self) -> Vec<Downgrade> {
        self.downgrades
    }
}
