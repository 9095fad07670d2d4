//! [`ValidationLimits`]: bounds on the schemas a validator compiles and the arguments it checks.
//!
//! A schema engine is a small interpreter, and a schema is a program: a deep, wide or
//! self-referencing one can make it use unbounded stack, memory or time. Tool schemas can come
//! from places the host does not fully control (an MCP server's catalogue, a plug-in), so every
//! schema is measured before it is compiled, and every argument value before it is checked.
//! Each bound can be lowered or raised, but never past a fixed hard ceiling, and never to zero.

use std::fmt;

use serde_json::Value;

use super::error::{ArgumentError, SchemaError, SchemaErrorKind};
use crate::limits::Widest;
use crate::schema::keywords::push_segment;

/// Object keys never accepted in arguments or schemas: in JavaScript they reach an object's
/// prototype, and arguments and schemas are often handed on to JavaScript tools or services.
pub const FORBIDDEN_KEYS: [&str; 3] = ["__proto__", "constructor", "prototype"];

/// True for the [`FORBIDDEN_KEYS`]. A `match` on the literals (kept equal to the constant)
/// compiles to a length switch, cheaper than three comparisons per key.
#[inline]
fn is_forbidden_key(key: &str) -> bool {
    matches!(key, "__proto__" | "constructor" | "prototype")
}

/// Bounds enforced before a schema is compiled or arguments are checked.
///
/// | bound | default | hard ceiling |
/// | --- | --- | --- |
/// | schema size (bytes of compact JSON) | 256 KiB | 4 MiB |
/// | schema depth (nested arrays and objects) | 64 | 256 |
/// | schema keywords (object members, all levels) | 10,000 | 100,000 |
/// | references (`$ref`, `$dynamicRef`, `$recursiveRef`) | 128 | 1,024 |
/// | compiled schemas kept in the cache | 256 | 4,096 |
/// | argument size (bytes, counted as [`Limits`](crate::Limits) does) | 1 MiB | 16 MiB |
/// | argument depth | 64 | 128 |
/// | violations (or schema problems) listed in one error | 16 | 128 |
///
/// Two more bounds are fixed: references and in-place applicators may not fan out to more than
/// 100,000 subschemas applied to one value, and a compiled `pattern` may not exceed 1 MiB.
///
/// ```
/// use prism::validation::ValidationLimits;
///
/// let limits = ValidationLimits::default().with_max_schema_bytes(64 * 1024).unwrap();
/// assert_eq!(limits.max_schema_bytes(), 64 * 1024);
/// assert!(ValidationLimits::default().with_max_refs(0).is_err());
/// assert!(ValidationLimits::default().with_max_refs(1_000_000).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ValidationLimits {
    max_schema_bytes: usize,
    max_schema_depth: usize,
    max_schema_keywords: usize,
    max_refs: usize,
    max_cached_schemas: usize,
    max_argument_bytes: usize,
    max_argument_depth: usize,
    max_violations: usize,
}

/// A limit was set to zero or above its hard ceiling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitError {
    /// The limit's name, e.g. `"max_schema_bytes"`.
    pub limit: &'static str,
    /// The value refused.
    pub value: usize,
    /// The largest accepted value.
    pub ceiling: usize,
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} must be between 1 and {}, not {}",
            self.limit, self.ceiling, self.value
        )
    }
}

impl std::error::Error for LimitError {}

macro_rules! limits {
    ($($field:ident, $setter:ident, default = $default:expr, ceiling = $ceiling:expr, $doc:literal;)*) => {
        impl Default for ValidationLimits {
            fn default() -> Self {
                Self { $($field: $default),* }
            }
        }

        impl ValidationLimits {
            /// The hard ceilings: the largest value each limit accepts.
            pub const CEILINGS: ValidationLimits = ValidationLimits { $($field: $ceiling),* };

            $(
                #[doc = concat!("The ", $doc, ".")]
                pub fn $field(&self) -> usize {
                    self.$field
                }

                #[doc = concat!("Sets the ", $doc, "; refuses zero and values above the hard ceiling.")]
                pub fn $setter(mut self, value: usize) -> Result<Self, LimitError> {
                    if value == 0 || value > Self::CEILINGS.$field {
                        return Err(LimitError {
                            limit: stringify!($field),
                            value,
                            ceiling: Self::CEILINGS.$field,
                        });
                    }
                    self.$field = value;
                    Ok(self)
                }
            )*
        }
    };
}

limits! {
    max_schema_bytes, with_max_schema_bytes, default = 256 * 1024, ceiling = 4 * 1024 * 1024,
        "largest schema, in bytes of compact JSON";
    max_schema_depth, with_max_schema_depth, default = 64, ceiling = 256,
        "deepest nesting of arrays and objects in a schema";
    max_schema_keywords, with_max_schema_keywords, default = 10_000, ceiling = 100_000,
        "most object members in a schema, counted at every level";
    max_refs, with_max_refs, default = 128, ceiling = 1024,
        "most references in a schema";
    max_cached_schemas, with_max_cached_schemas, default = 256, ceiling = 4096,
        "number of compiled schemas the cache keeps";
    max_argument_bytes, with_max_argument_bytes, default = 1024 * 1024, ceiling = 16 * 1024 * 1024,
        "largest argument value, in bytes";
    max_argument_depth, with_max_argument_depth, default = 64, ceiling = 128,
        "deepest nesting of arrays and objects in an argument value";
    max_violations, with_max_violations, default = 16, ceiling = 128,
        "most violations (or schema problems) listed in one error";
}

impl ValidationLimits {
    /// Checks the shape of argument values in one walk: size, depth and
    /// [forbidden keys](FORBIDDEN_KEYS). The size is the length of the compact JSON serde_json
    /// writes, as the dispatcher's [`Limits`](crate::Limits) count it: the walk adds up an upper
    /// bound, and only a value whose bound is over the limit is counted exactly.
    ///
    /// ```
    /// use prism::validation::{ArgumentError, ValidationLimits};
    /// use serde_json::json;
    ///
    /// let limits = ValidationLimits::default();
    /// assert!(limits.check_arguments(&json!({"a": [1, 2]})).is_ok());
    /// let error = limits.check_arguments(&json!({"a": {"__proto__": {}}})).unwrap_err();
    /// assert_eq!(error, ArgumentError::ForbiddenKey { path: "/a".into(), key: "__proto__".into() });
    /// ```
    pub fn check_arguments(&self, value: &Value) -> Result<(), ArgumentError> {
        let mut bound = Widest::default();
        self.walk_arguments(value, 0, &mut bound)
            .map_err(|refusal| refusal.into_error(self))?;
        // Depth was checked by the walk, so only the byte count can refuse here.
        bound
            .settle(value, self.max_argument_bytes, self.max_argument_depth)
            .map_err(|_| ArgumentError::TooLarge {
                limit: self.max_argument_bytes,
            })
    }

    fn walk_arguments(
        &self,
        value: &Value,
        depth: usize,
        bound: &mut Widest,
    ) -> Result<(), ArgumentRefusal> {
        match value {
            Value::Array(items) => {
                if depth >= self.max_argument_depth {
                    return Err(ArgumentRefusal::TooDeep);
                }
                bound.add_container(value);
                for (index, item) in items.iter().enumerate() {
                    self.walk_arguments(item, depth + 1, bound)
                        .map_err(|refusal| refusal.under(&index.to_string()))?;
                }
            }
            Value::Object(map) => {
                if depth >= self.max_argument_depth {
                    return Err(ArgumentRefusal::TooDeep);
                }
                bound.add_container(value);
                for (key, item) in map {
                    if is_forbidden_key(key) {
                        return Err(ArgumentRefusal::ForbiddenKey {
                            key: key.clone(),
                            reversed_path: Vec::new(),
                        });
                    }
                    bound.add_key(key);
                    self.walk_arguments(item, depth + 1, bound)
                        .map_err(|refusal| refusal.under(key))?;
                }
            }
            scalar => bound.add_scalar(scalar),
        }
        Ok(())
    }

    /// Checks a schema's depth, keyword count and keys, without recursing past the depth bound
    /// (so even a schema nested ten thousand levels deep is refused in bounded stack). The error
    /// points at the first place over a bound, or at the first of the [`FORBIDDEN_KEYS`], which
    /// are refused wherever they are keys: property names, keywords, definition names, data.
    /// Schema engines call it before compiling.
    ///
    /// ```
    /// use prism::validation::{SchemaErrorKind, ValidationLimits};
    /// use serde_json::json;
    ///
    /// let limits = ValidationLimits::default().with_max_schema_depth(2).unwrap();
    /// assert!(limits.check_schema_shape(&json!({"items": {}})).is_ok());
    /// let error = limits.check_schema_shape(&json!({"items": {"items": {}}})).unwrap_err();
    /// assert_eq!((error.kind, error.pointer.as_str()), (SchemaErrorKind::TooDeep, "/items/items"));
    /// let error = limits.check_schema_shape(&json!({"$defs": {"__proto__": {}}})).unwrap_err();
    /// assert_eq!((error.kind, error.pointer.as_str()), (SchemaErrorKind::ForbiddenKey, "/$defs/__proto__"));
    /// ```
    pub fn check_schema_shape(&self, schema: &Value) -> Result<(), SchemaError> {
        let mut keywords = 0;
        self.walk_schema(schema, 1, &mut keywords)
            .map_err(|(kind, reversed_path)| {
                let mut pointer = String::new();
                for segment in reversed_path.iter().rev() {
                    push_segment(&mut pointer, segment);
                }
                let message = match kind {
                    SchemaErrorKind::TooDeep => {
                        format!("nests deeper than {} levels", self.max_schema_depth)
                    }
                    SchemaErrorKind::ForbiddenKey => format!(
                        "the key {:?} is not accepted in schemas",
                        reversed_path.first().map_or("", String::as_str)
                    ),
                    _ => format!(
                        "has more than {} keywords and properties",
                        self.max_schema_keywords
                    ),
                };
                SchemaError::new(kind, pointer, message)
            })
    }

    fn walk_schema(
        &self,
        value: &Value,
        depth: usize,
        keywords: &mut usize,
    ) -> Result<(), (SchemaErrorKind, Vec<String>)> {
        match value {
            Value::Object(map) => {
                *keywords += map.len();
                if *keywords > self.max_schema_keywords {
                    return Err((SchemaErrorKind::TooManyKeywords, Vec::new()));
                }
            }
            Value::Array(_) => {}
            _ => return Ok(()),
        }
        if depth > self.max_schema_depth {
            return Err((SchemaErrorKind::TooDeep, Vec::new()));
        }
        // Path segments are only made into strings on the way back from an error.
        let mut below = |item: &Value, segment: &dyn Fn() -> String| {
            self.walk_schema(item, depth + 1, keywords)
                .map_err(|(kind, mut path)| {
                    path.push(segment());
                    (kind, path)
                })
        };
        match value {
            Value::Object(map) => map.iter().try_for_each(|(key, item)| {
                if is_forbidden_key(key) {
                    return Err((SchemaErrorKind::ForbiddenKey, vec![key.clone()]));
                }
                below(item, &|| key.clone())
            }),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .try_for_each(|(index, item)| below(item, &|| index.to_string())),
            _ => Ok(()),
        }
    }
}

/// Why an argument walk stopped; the path is collected on the way back up.
enum ArgumentRefusal {
    TooDeep,
    ForbiddenKey {
        key: String,
        reversed_path: Vec<String>,
    },
}

impl ArgumentRefusal {
    fn under(self, key: &str) -> Self {
        match self {
            Self::ForbiddenKey {
                key: forbidden,
                mut reversed_path,
            } => {
                reversed_path.push(key.to_owned());
                Self::ForbiddenKey {
                    key: forbidden,
                    reversed_path,
                }
            }
            other => other,
        }
    }

    fn into_error(self, limits: &ValidationLimits) -> ArgumentError {
        match self {
            Self::TooDeep => ArgumentError::TooDeep {
                limit: limits.max_argument_depth,
            },
            Self::ForbiddenKey { key, reversed_path } => {
                let mut path = String::new();
                for segment in reversed_path.iter().rev() {
                    push_segment(&mut path, segment);
                }
                ArgumentError::ForbiddenKey { path, key }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn forbidden_keys_are_found_at_any_depth_but_not_in_values() {
        let limits = ValidationLimits::default();
        assert!(
            limits
                .check_arguments(&json!({"a": ["constructor"]}))
                .is_ok()
        );
        let error = limits
            .check_arguments(&json!({"a": [{"b/c": {"prototype": 1}}]}))
            .unwrap_err();
        assert_eq!(
            error,
            ArgumentError::ForbiddenKey {
                path: "/a/0/b~1c".into(),
                key: "prototype".into()
            }
        );
    }

    #[test]
    fn every_forbidden_key_is_refused() {
        for key in FORBIDDEN_KEYS {
            let value = Value::Object(serde_json::Map::from_iter([(key.to_owned(), json!(1))]));
            assert!(
                ValidationLimits::default().check_arguments(&value).is_err(),
                "{key}"
            );
        }
    }

    #[test]
    fn schema_shape_reports_the_pointer() {
        let limits = ValidationLimits::default()
            .with_max_schema_depth(3)
            .unwrap();
        let schema = json!({"properties": {"a": {"items": {}}}});
        let error = limits.check_schema_shape(&schema).unwrap_err();
        assert_eq!(error.kind, SchemaErrorKind::TooDeep);
        assert_eq!(error.pointer, "/properties/a/items");
    }
}
