//! Tool names as each provider accepts them, mapped reversibly per request.
//!
//! A registered name may use the MCP character set (`billing.refund`), which OpenAI and
//! Anthropic refuse. [`ToolNames`] gives each registered name the name the model sees (its
//! *wire* name) and maps it back: the host, the dispatcher and the ledger keep the registered
//! name; everything sent to the model, error texts included ([`ToolNames::rewrite_text`]), uses
//! the wire name.
//!
//! The rules, from each provider's API reference:
//!
//! | rule | characters | length | source |
//! | --- | --- | --- | --- |
//! | [`NameRule::OpenAi`] | `a-z A-Z 0-9 _ -` | 1 to 64 | Chat Completions and Responses `function.name` |
//! | [`NameRule::Anthropic`] | `a-z A-Z 0-9 _ -` | 1 to 128 | Messages `tools[].name`: `^[a-zA-Z0-9_-]{1,128}$` |
//! | [`NameRule::Gemini`] | a letter or `_` first, then `a-z A-Z 0-9 _ . : -` | 1 to 128 | `FunctionDeclaration.name` (the current REST reference; some SDK docs still say 64) |
//!
//! ## The mapping
//!
//! A name the rule accepts is its own wire name. Another is made valid by replacing each
//! character the rule refuses with `_` (and, for Gemini, putting `_` before a first character
//! that is not a letter): `billing.refund` becomes `billing_refund`. When that name is too long,
//! or is already another tool's name or wire name, it is cut and given a suffix of 8 hex digits
//! of the SHA-256 of the registered name (`billing_refund_d1ee04c7`), so the result depends only on
//! the name, never on the order tools were registered in. Names the rule accepts are placed
//! first and never change; the others are placed in sorted order. Two tools therefore never
//! share a wire name: a collision the suffix cannot resolve (in practice never) is a
//! [`NameError`] naming both tools.
//!
//! ```
//! use prism::provider::names::{NameRule, ToolNames};
//!
//! let names = ToolNames::new(NameRule::OpenAi, ["billing.refund", "billing_refund"]).unwrap();
//! assert_eq!(names.wire("billing_refund"), Some("billing_refund"));
//! assert_eq!(names.wire("billing.refund"), Some("billing_refund_d1ee04c7"));
//! assert_eq!(names.registered("billing_refund_d1ee04c7"), Some("billing.refund"));
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use aho_corasick::{AhoCorasick, MatchKind};
use sha2::{Digest, Sha256};

/// A provider's rule for tool names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameRule {
    /// OpenAI: `[a-zA-Z0-9_-]{1,64}`.
    OpenAi,
    /// Anthropic: `^[a-zA-Z0-9_-]{1,128}$`.
    Anthropic,
    /// Gemini: a letter or underscore, then `[a-zA-Z0-9_.:-]`, at most 128 in all.
    Gemini,
}

impl NameRule {
    /// The longest name accepted.
    pub fn max_len(self) -> usize {
        match self {
            NameRule::OpenAi => 64,
            NameRule::Anthropic | NameRule::Gemini => 128,
        }
    }

    /// Whether the rule accepts `name` as it is.
    ///
    /// ```
    /// use prism::provider::names::NameRule;
    ///
    /// assert!(NameRule::OpenAi.is_valid("get_weather"));
    /// assert!(!NameRule::OpenAi.is_valid("billing.refund"));
    /// assert!(NameRule::Gemini.is_valid("billing.refund"));
    /// assert!(!NameRule::Gemini.is_valid("3d_print"));
    /// ```
    pub fn is_valid(self, name: &str) -> bool {
        !name.is_empty()
            && name.len() <= self.max_len()
            && name
                .chars()
                .enumerate()
                .all(|(index, c)| self.accepts(index, c))
    }

    /// Whether `c` may stand at position `index` of a name.
    fn accepts(self, index: usize, c: char) -> bool {
        match self {
            NameRule::OpenAi | NameRule::Anthropic => {
                c.is_ascii_alphanumeric() || c == '_' || c == '-'
            }
            NameRule::Gemini if index == 0 => c.is_ascii_alphabetic() || c == '_',
            NameRule::Gemini => c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'),
        }
    }

    /// `name` with every refused character replaced by `_` (Gemini: `_` put before a refused
    /// first character that is otherwise accepted, so `3d` becomes `_3d`, not `_d`).
    fn sanitize(self, name: &str) -> String {
        let mut out = String::with_capacity(name.len() + 1);
        for (index, c) in name.chars().enumerate() {
            if self.accepts(index, c) {
                out.push(c);
            } else if index == 0 && self.accepts(1, c) {
                out.push('_');
                out.push(c);
            } else {
                out.push('_');
            }
        }
        out
    }
}

/// Two registered names that would reach the model as one, or an empty name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameError {
    /// The registered name that could not be placed.
    pub name: String,
    /// The registered name already holding the wire name (`None` for an empty name).
    pub holder: Option<String>,
    /// The wire name both would have had.
    pub wire: String,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.holder {
            Some(holder) => write!(
                f,
                "tools `{}` and `{holder}` would both reach the model as `{}`; rename one",
                self.name, self.wire
            ),
            None => f.write_str("a tool name cannot be empty"),
        }
    }
}

impl std::error::Error for NameError {}

/// The wire names of one request's tools, both ways.
///
/// ```
/// use prism::provider::names::{NameRule, ToolNames};
///
/// let names = ToolNames::new(NameRule::OpenAi, ["billing.refund", "get_weather"]).unwrap();
/// assert_eq!(names.wire("billing.refund"), Some("billing_refund"));
/// assert_eq!(names.wire("get_weather"), Some("get_weather"));
/// assert_eq!(names.registered("billing_refund"), Some("billing.refund"));
/// assert_eq!(
///     names.rewrite_text("unknown tool `billing.refund`; try get_weather"),
///     "unknown tool `billing_refund`; try get_weather"
/// );
/// ```
#[derive(Clone, Debug)]
pub struct ToolNames {
    rule: NameRule,
    /// (registered, wire), in the order the names were given.
    pairs: Vec<(String, String)>,
    by_registered: HashMap<String, usize>,
    by_wire: HashMap<String, usize>,
    rewriter: NameRewriter,
}

impl ToolNames {
    /// Maps each registered name (duplicates are ignored) to its wire name under `rule`.
    ///
    /// # Errors
    ///
    /// An empty name, or two names the mapping cannot keep apart (see the module docs).
    pub fn new<I, S>(rule: NameRule, registered: I) -> Result<Self, NameError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut names: Vec<String> = Vec::new();
        let mut by_registered = HashMap::new();
        for name in registered {
            let name = name.as_ref();
            if name.is_empty() {
                return Err(NameError {
                    name: String::new(),
                    holder: None,
                    wire: String::new(),
                });
            }
            if !by_registered.contains_key(name) {
                by_registered.insert(name.to_owned(), names.len());
                names.push(name.to_owned());
            }
        }
        let mut wires: Vec<Option<String>> = vec![None; names.len()];
        let mut by_wire: HashMap<String, usize> = HashMap::new();
        // Valid names first: they never change, so a mapped name must step around them.
        for (index, name) in names.iter().enumerate() {
            if rule.is_valid(name) {
                by_wire.insert(name.clone(), index);
                wires[index] = Some(name.clone());
            }
        }
        let mut pending: Vec<usize> = (0..names.len())
            .filter(|&index| wires[index].is_none())
            .collect();
        pending.sort_by(|&a, &b| names[a].cmp(&names[b]));
        for index in pending {
            let name = &names[index];
            let wire = made_valid(rule, name, |wire| by_wire.contains_key(wire));
            if let Some(&holder) = by_wire.get(&wire) {
                return Err(NameError {
                    name: name.clone(),
                    holder: Some(names[holder].clone()),
                    wire,
                });
            }
            by_wire.insert(wire.clone(), index);
            wires[index] = Some(wire);
        }
        let pairs: Vec<(String, String)> = names
            .into_iter()
            .zip(wires)
            .map(|(name, wire)| {
                let wire = wire.unwrap_or_else(|| name.clone());
                (name, wire)
            })
            .collect();
        let rewriter = NameRewriter::new(pairs.clone());
        Ok(Self {
            rule,
            pairs,
            by_registered,
            by_wire,
            rewriter,
        })
    }

    /// The rule the names follow.
    pub fn rule(&self) -> NameRule {
        self.rule
    }

    /// The name the model sees for the registered name `registered`.
    pub fn wire(&self, registered: &str) -> Option<&str> {
        let index = *self.by_registered.get(registered)?;
        Some(&self.pairs[index].1)
    }

    /// The registered name of the wire name `wire` (what a model's call names).
    pub fn registered(&self, wire: &str) -> Option<&str> {
        let index = *self.by_wire.get(wire)?;
        Some(&self.pairs[index].0)
    }

    /// Every (registered, wire) pair, in the order the names were given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs
            .iter()
            .map(|(name, wire)| (name.as_str(), wire.as_str()))
    }

    /// How many tools are named.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when no tool is named.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// `text` (an error message, a result sent back to the model) with every registered name
    /// that has another wire name replaced by it; see [`NameRewriter::rewrite`].
    pub fn rewrite_text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.rewriter.rewrite(text)
    }
}

/// Replaces registered tool names by the names the model saw, in text sent back to the model.
#[derive(Clone, Debug, Default)]
pub struct NameRewriter {
    /// (registered, wire) pairs; the finder's pattern ids index it.
    pairs: Vec<(String, String)>,
    /// Every registered name, when some wire name differs from its registered one.
    finder: Option<AhoCorasick>,
}

impl NameRewriter {
    /// A rewriter of these (registered, wire) pairs.
    pub fn new(pairs: Vec<(String, String)>) -> Self {
        let finder = if pairs.iter().any(|(name, wire)| name != wire) {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(pairs.iter().map(|(name, _)| name.as_str()))
                .ok()
        } else {
            None
        };
        Self { pairs, finder }
    }

    /// `text` with every registered name that has another wire name replaced by it. A name
    /// counts only as a whole word: not inside a longer identifier (letters, digits, `_`, `-` on
    /// either side), and the longest registered name wins (`billing.refund.v2` is not read as
    /// `billing.refund`).
    pub fn rewrite<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Some(finder) = &self.finder else {
            return Cow::Borrowed(text);
        };
        let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
        let mut out = String::new();
        let mut copied = 0;
        for found in finder.find_iter(text) {
            let (name, wire) = &self.pairs[found.pattern().as_usize()];
            let before = text[..found.start()].chars().next_back();
            let after = text[found.end()..].chars().next();
            if name == wire || before.is_some_and(is_word) || after.is_some_and(is_word) {
                continue;
            }
            out.push_str(&text[copied..found.start()]);
            out.push_str(wire);
            copied = found.end();
        }
        if copied == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }
}

/// `plain` cut to leave room for `_` and 8 hex digits of the SHA-256 of `registered`.
/// The name a tool outside a request's table is sent under (a past call to a tool this turn
/// does not offer): itself when `rule` accepts it; otherwise made valid as the table's names
/// are, suffixed when the plain form is too long or is a name the table uses (`taken`).
pub(crate) fn unlisted_wire(rule: NameRule, name: &str, taken: impl Fn(&str) -> bool) -> String {
    if rule.is_valid(name) {
        return name.to_owned();
    }
    made_valid(rule, name, taken)
}

/// `name`, which `rule` refuses, made valid: each refused character replaced, suffixed when
/// that is too long or `taken`.
fn made_valid(rule: NameRule, name: &str, taken: impl Fn(&str) -> bool) -> String {
    let plain = rule.sanitize(name);
    if !plain.is_empty() && plain.len() <= rule.max_len() && !taken(&plain) {
        plain
    } else {
        with_suffix(rule, &plain, name)
    }
}

fn with_suffix(rule: NameRule, plain: &str, registered: &str) -> String {
    let digest = Sha256::digest(registered.as_bytes());
    let suffix: String = digest[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let room = rule.max_len() - suffix.len() - 1;
    // `plain` is ASCII (every refused character became `_`), so any cut is a char boundary.
    let cut = &plain[..plain.len().min(room)];
    format!("{cut}_{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: [NameRule; 3] = [NameRule::OpenAi, NameRule::Anthropic, NameRule::Gemini];

    #[test]
    fn valid_names_are_unchanged_and_others_readable() {
        let names =
            ToolNames::new(NameRule::OpenAi, ["get_weather", "billing.refund", "a b/c"]).unwrap();
        assert_eq!(names.wire("get_weather"), Some("get_weather"));
        assert_eq!(names.wire("billing.refund"), Some("billing_refund"));
        assert_eq!(names.wire("a b/c"), Some("a_b_c"));
        let gemini = ToolNames::new(
            NameRule::Gemini,
            ["billing.refund", "3d.print", "-x", "ns:tool"],
        )
        .unwrap();
        assert_eq!(gemini.wire("billing.refund"), Some("billing.refund"));
        assert_eq!(gemini.wire("3d.print"), Some("_3d.print"));
        assert_eq!(gemini.wire("-x"), Some("_-x"));
        assert_eq!(gemini.wire("ns:tool"), Some("ns:tool"));
        assert_eq!(names.wire("unknown"), None);
        assert_eq!(names.registered("billing.refund"), None);
    }

    #[test]
    fn collisions_get_a_stable_suffix_whatever_the_order() {
        let one = ToolNames::new(
            NameRule::OpenAi,
            ["billing_refund", "billing.refund", "billing refund"],
        )
        .unwrap();
        let two = ToolNames::new(
            NameRule::OpenAi,
            ["billing refund", "billing.refund", "billing_refund"],
        )
        .unwrap();
        assert_eq!(one.wire("billing_refund"), Some("billing_refund"));
        for name in ["billing.refund", "billing refund"] {
            let wire = one.wire(name).unwrap();
            assert_eq!(Some(wire), two.wire(name));
            assert!(
                wire.starts_with("billing_refund_") && wire.len() == "billing_refund_".len() + 8,
                "{wire}"
            );
            assert_eq!(one.registered(wire), Some(name));
        }
        assert_ne!(one.wire("billing.refund"), one.wire("billing refund"));
    }

    #[test]
    fn long_names_are_cut_to_the_limit_and_stay_distinct() {
        let long_a = format!("{}.a", "x".repeat(70));
        let long_b = format!("{}.b", "x".repeat(70));
        let names = ToolNames::new(NameRule::OpenAi, [&long_a, &long_b]).unwrap();
        let (a, b) = (names.wire(&long_a).unwrap(), names.wire(&long_b).unwrap());
        assert_eq!(a.len(), 64);
        assert!(NameRule::OpenAi.is_valid(a) && NameRule::OpenAi.is_valid(b));
        assert_ne!(a, b);
        // Anthropic's limit is higher: only the dot changes.
        let names = ToolNames::new(NameRule::Anthropic, [&long_a]).unwrap();
        assert_eq!(names.wire(&long_a), Some(long_a.replace('.', "_").as_str()));
    }

    #[test]
    fn every_mapping_round_trips_and_is_valid() {
        let registered = [
            "a", "a.b", "a_b", "a-b", "é", "ü", "0", ".", "x:y", "tool.v2", "tool_v2",
        ];
        for rule in RULES {
            let names = ToolNames::new(rule, registered).unwrap();
            assert_eq!(names.len(), registered.len());
            let mut wires = std::collections::HashSet::new();
            for (name, wire) in names.iter() {
                assert!(rule.is_valid(wire), "{rule:?}: {wire}");
                assert!(wires.insert(wire), "{rule:?}: {wire} twice");
                assert_eq!(names.registered(wire), Some(name));
            }
        }
    }

    #[test]
    fn empty_names_and_duplicates() {
        let error = ToolNames::new(NameRule::OpenAi, ["ok", ""]).unwrap_err();
        assert_eq!(error.to_string(), "a tool name cannot be empty");
        let names = ToolNames::new(NameRule::OpenAi, ["a.b", "a.b"]).unwrap();
        assert_eq!(names.len(), 1);
        assert!(!names.is_empty());
        let unresolvable = NameError {
            name: "a.b".into(),
            holder: Some("a_b".into()),
            wire: "a_b".into(),
        };
        assert!(unresolvable.to_string().contains("`a.b` and `a_b`"));
    }

    #[test]
    fn text_rewriting_replaces_whole_names_only() {
        let names = ToolNames::new(
            NameRule::OpenAi,
            ["billing.refund", "billing.refund.v2", "refund"],
        )
        .unwrap();
        assert_eq!(
            names.rewrite_text(
                "call billing.refund. Or billing.refund.v2, not xbilling.refund or billing.refund_x"
            ),
            "call billing_refund. Or billing_refund_v2, not xbilling.refund or billing.refund_x"
        );
        assert!(matches!(
            names.rewrite_text("nothing here"),
            Cow::Borrowed(_)
        ));
        let unchanged = ToolNames::new(NameRule::OpenAi, ["plain"]).unwrap();
        assert!(matches!(unchanged.rewrite_text("plain"), Cow::Borrowed(_)));
    }
}
