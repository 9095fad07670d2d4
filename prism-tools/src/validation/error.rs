//! What argument validation reports: the model's mistakes ([`ArgumentError`], each schema
//! violation a [`Violation`]) apart from the host's ([`SchemaError`], [`ToolSchemaError`]).
//!
//! The split matters to whoever reads the result. A violation goes back to the model as
//! `validation_failed` so it can correct its call; a schema error is a bug in the host's tool
//! definition that no retry can fix, so it carries its own code (`invalid_tool_schema`) and the
//! JSON pointer of the offending keyword, and surfaces when the tool is registered or the
//! dispatcher is built.

use std::fmt;

use crate::call::ErrorCode;
use crate::error::Refusal;

/// One way the arguments break the schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending part of the arguments (`""` for the whole object).
    pub instance_path: String,
    /// The schema keyword that failed, e.g. `"required"` or `"type"`.
    pub keyword: String,
    /// What is wrong, without echoing argument values.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at {}: {}",
            display_pointer(&self.instance_path),
            self.message
        )
    }
}

/// Why arguments were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgumentError {
    /// The arguments break the schema. `violations` lists every violation found, up to the
    /// validator's bound; `omitted` says how many more there were.
    Invalid {
        /// The violations, in the order the validator found them.
        violations: Vec<Violation>,
        /// Violations found beyond the bound and left out.
        omitted: usize,
    },
    /// An object key that is never accepted (`__proto__`, `constructor`, `prototype`): such
    /// keys pollute prototypes in JavaScript hosts that a tool may pass the arguments on to.
    ForbiddenKey {
        /// JSON pointer to the object holding the key.
        path: String,
        /// The key.
        key: String,
    },
    /// The arguments are larger than the validator accepts.
    TooLarge {
        /// The bound, in bytes of compact JSON.
        limit: usize,
    },
    /// The arguments nest deeper than the validator accepts.
    TooDeep {
        /// The bound, in levels of arrays and objects.
        limit: usize,
    },
    /// The schema itself is unusable: the host's bug, not the model's.
    Schema(SchemaError),
}

impl ArgumentError {
    /// The refusal the dispatcher reports for a call of `tool`: `validation_failed` for the
    /// model's mistakes, `invalid_tool_schema` for the host's.
    pub fn to_refusal(&self, tool: &str) -> Refusal {
        match self {
            Self::Schema(error) => Refusal {
                code: Some(ErrorCode::InvalidToolSchema),
                message: format!(
                    "Tool {tool} cannot be called: its parameter schema is invalid ({error})"
                ),
            },
            other => Refusal::new(format!("Invalid arguments for tool {tool}: {other}")),
        }
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid {
                violations,
                omitted,
            } => {
                let total = violations.len() + omitted;
                let plural = if total == 1 { "" } else { "s" };
                write!(f, "{total} schema violation{plural}")?;
                for violation in violations {
                    write!(f, "\n- {violation}")?;
                }
                if *omitted > 0 {
                    write!(f, "\n- and {omitted} more")?;
                }
                Ok(())
            }
            Self::ForbiddenKey { path, key } => write!(
                f,
                "the key {key:?} is not accepted in arguments (at {})",
                display_pointer(path)
            ),
            Self::TooLarge { limit } => write!(f, "the arguments exceed {limit} bytes"),
            Self::TooDeep { limit } => write!(f, "the arguments nest deeper than {limit} levels"),
            Self::Schema(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for ArgumentError {}

/// What is wrong with a schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaErrorKind {
    /// Larger than the byte limit.
    TooLarge,
    /// Nested deeper than the depth limit.
    TooDeep,
    /// More object members than the keyword limit.
    TooManyKeywords,
    /// More references than the reference limit.
    TooManyRefs,
    /// A reference (or `$schema`) that leaves the document: it would need a network or file
    /// access, which the validator never performs.
    RemoteRef,
    /// A reference inside the document that points nowhere.
    UnresolvableRef,
    /// References that loop without consuming any input, so validation would never end.
    RefCycle,
    /// The schema does not compile (it breaks its meta-schema, has a bad regular expression…).
    Invalid,
    /// One of the [`FORBIDDEN_KEYS`](super::FORBIDDEN_KEYS) is a key somewhere in the schema (a
    /// property name, a keyword, a definition name…).
    ForbiddenKey,
}

impl SchemaErrorKind {
    /// A short stable name, e.g. `"remote_ref"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TooLarge => "too_large",
            Self::TooDeep => "too_deep",
            Self::TooManyKeywords => "too_many_keywords",
            Self::TooManyRefs => "too_many_refs",
            Self::RemoteRef => "remote_ref",
            Self::UnresolvableRef => "unresolvable_ref",
            Self::RefCycle => "ref_cycle",
            Self::Invalid => "invalid",
            Self::ForbiddenKey => "forbidden_key",
        }
    }
}

/// A schema the validator refuses to use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// What kind of problem.
    pub kind: SchemaErrorKind,
    /// JSON pointer to the offending keyword in the schema (`""` for the whole schema).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl SchemaError {
    /// An error of `kind` at `pointer`.
    pub fn new(
        kind: SchemaErrorKind,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}: {}",
            self.kind.as_str(),
            display_pointer(&self.pointer),
            self.message
        )
    }
}

impl std::error::Error for SchemaError {}

/// A validator refused the schema of a registered tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSchemaError {
    /// The tool's name.
    pub tool: String,
    /// What is wrong with its schema.
    pub error: SchemaError,
}

impl fmt::Display for ToolSchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool {}: {}", self.tool, self.error)
    }
}

impl std::error::Error for ToolSchemaError {}

/// A JSON pointer as people read it: the empty pointer is "the root".
fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the root"
    } else {
        pointer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_lists_every_violation_and_the_rest() {
        let error = ArgumentError::Invalid {
            violations: vec![
                Violation {
                    instance_path: "/a".into(),
                    keyword: "type".into(),
                    message: "not an integer".into(),
                },
                Violation {
                    instance_path: String::new(),
                    keyword: "required".into(),
                    message: "\"b\" is required".into(),
                },
            ],
            omitted: 3,
        };
        assert_eq!(
            error.to_string(),
            "5 schema violations\n- at /a: not an integer\n- at the root: \"b\" is required\n- and 3 more"
        );
        assert_eq!(error.to_refusal("add").code, None);
    }

    #[test]
    fn schema_errors_carry_their_own_code() {
        let error = ArgumentError::Schema(SchemaError::new(
            SchemaErrorKind::RemoteRef,
            "/properties/a/$ref",
            "https://example.com/s.json leaves the document",
        ));
        let refusal = error.to_refusal("add");
        assert_eq!(refusal.code, Some(ErrorCode::InvalidToolSchema));
        assert!(refusal.message.contains("remote_ref at /properties/a/$ref"));
    }
}
