//! [`LoweringError`]: a canonical schema that cannot be lowered, and where.

use std::fmt;

/// Why a schema could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoweringErrorKind {
    /// Tool parameters must be a JSON object; the root schema describes something else.
    NotAnObject,
    /// A keyword's value has the wrong JSON type (`properties` not an object, `required` not a
    /// list of strings, `$ref` not a string, …).
    InvalidKeyword {
        /// The keyword.
        keyword: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A `$ref` that does not point into this document (`https://…`, an anchor), or points at
    /// nothing, in a dialect that must inline it.
    UnresolvableReference {
        /// The reference as written.
        reference: String,
    },
    /// A reference that leads back to itself, in a dialect without references: a recursive
    /// type cannot be inlined. Lower it to a dialect that keeps `$ref` (OpenAI, Anthropic,
    /// [`GeminiJsonSchema`](super::Dialect::GeminiJsonSchema), MCP) instead.
    RecursiveReference {
        /// The reference as written.
        reference: String,
    },
    /// The schema, or what inlining made of it, nests deeper than the bound.
    TooDeep {
        /// The bound.
        max_depth: usize,
    },
    /// The schema, or what inlining made of it, is larger than the bound.
    TooLarge {
        /// The bound.
        limit: usize,
        /// What it counts: `bytes` of compact JSON, or `schema objects` after inlining.
        unit: &'static str,
    },
    /// A construct the dialect has no way to express (a `false` schema where Gemini needs a
    /// type, say).
    Unsupported {
        /// What it is.
        what: String,
    },
}

/// A schema that cannot be lowered: the kind of problem and the JSON pointer (into the
/// canonical schema) of the schema object where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweringError {
    /// Where, as a JSON pointer into the canonical schema (`""` is the root).
    pub pointer: String,
    /// What.
    pub kind: LoweringErrorKind,
}

impl LoweringError {
    pub(crate) fn new(pointer: &str, kind: LoweringErrorKind) -> Self {
        Self {
            pointer: pointer.to_owned(),
            kind,
        }
    }

    pub(crate) fn invalid(pointer: &str, keyword: &str, expected: &'static str) -> Self {
        Self::new(
            pointer,
            LoweringErrorKind::InvalidKeyword {
                keyword: keyword.to_owned(),
                expected,
            },
        )
    }
}

impl fmt::Display for LoweringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "the root"
        } else {
            &self.pointer
        };
        match &self.kind {
            LoweringErrorKind::NotAnObject => write!(
                f,
                "tool parameters must be an object schema (`type: object`), and {at} is not"
            ),
            LoweringErrorKind::InvalidKeyword { keyword, expected } => {
                write!(f, "`{keyword}` at {at} must be {expected}")
            }
            LoweringErrorKind::UnresolvableReference { reference } => write!(
                f,
                "`$ref: {reference}` at {at} does not resolve inside the schema"
            ),
            LoweringErrorKind::RecursiveReference { reference } => write!(
                f,
                "`$ref: {reference}` at {at} is recursive and cannot be inlined; \
                 use a dialect that keeps references"
            ),
            LoweringErrorKind::TooDeep { max_depth } => {
                write!(f, "the schema nests deeper than {max_depth} levels at {at}")
            }
            LoweringErrorKind::TooLarge { limit, unit } => {
                write!(f, "the schema has more than {limit} {unit} at {at}")
            }
            LoweringErrorKind::Unsupported { what } => {
                write!(f, "{what} at {at} cannot be expressed in this dialect")
            }
        }
    }
}

impl std::error::Error for LoweringError {}
