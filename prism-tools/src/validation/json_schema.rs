//! [`JsonSchemaEngine`]: JSON Schema on the `jsonschema` crate, closed to the outside world.
//!
//! The crate is built without its network and file features and every compilation uses its
//! offline retriever, so no schema can make the process open a URL or a file; on top of that,
//! [references](super::references) are checked before compilation and anything leaving the
//! document is refused with the pointer of its keyword. The draft follows `$schema` (2020-12 when
//! absent; 2019-09 and 7 honoured), detected by the crate rather than forced, so a meta-schema's
//! vocabulary is respected.
//!
//! `format` is an annotation by default, as draft 2020-12 specifies: `"format": "email"` accepts
//! any string. [`with_format_assertion(true)`](JsonSchemaEngine::with_format_assertion) makes
//! known formats assertions (IDN hostnames and e-mails included); unknown formats are ignored.
//!
//! `pattern` uses a backtracking engine only where a pattern needs one, with a backtrack limit
//! of one million steps and a 1 MiB bound on a compiled pattern: a pattern over the bound does
//! not compile, and a match that exceeds the step limit counts as a violation.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{PatternOptions, ValidationError};
use serde_json::Value;

use super::cache::{ContentKey, SchemaCache};
use super::engine::SchemaEngine;
use super::error::{ArgumentError, SchemaError, SchemaErrorKind};
use super::limits::ValidationLimits;
use super::meta_schema::meta_schema_error;
use super::references::check_references;
use super::violations::{ListingCost, MESSAGE_LIMIT, collect};
use crate::redact::SecretRedactor;

/// Backtracking steps one `pattern` match may take.
const PATTERN_BACKTRACK_LIMIT: usize = 1_000_000;
/// Bound on a compiled `pattern`, in bytes.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// A schema compiled by [`JsonSchemaEngine`]. Cheap to clone.
#[derive(Clone)]
pub struct CompiledSchema {
    validator: Arc<jsonschema::Validator>,
    cost: ListingCost,
}

impl CompiledSchema {
    /// True when `value` matches the schema (no limit checks, no error details).
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("draft", &self.validator.draft())
            .finish()
    }
}

/// Validates arguments with JSON Schema, within [`ValidationLimits`]. Clones share the cache.
///
/// - No schema can make the process open a URL or a file: references must stay inside the
///   schema (or name a bundled draft meta-schema), and anything else is refused as
///   [`RemoteRef`](super::SchemaErrorKind::RemoteRef) with the pointer of its keyword.
/// - Draft 2020-12 unless `$schema` names 2019-09 or 7 (detected, not forced, so a meta-schema's
///   vocabulary is respected).
/// - `format` annotates by default, as draft 2020-12 specifies;
///   [`with_format_assertion(true)`](Self::with_format_assertion) asserts the known formats.
/// - `pattern`: 1 MiB per compiled pattern, one million backtracking steps per match (a match
///   over the limit is a violation).
/// - Refused arguments get every violation listed, up to
///   [`max_violations`](ValidationLimits::max_violations), while the arguments are small for
///   the schema (their values times its keywords at most 262,144). Past that, listing could
///   cost seconds (an `anyOf` error holds every branch's errors), so the refusal names only the
///   first violation, or, when the schema has `anyOf` or `oneOf`, none.
/// - A schema that breaks its meta-schema is refused with every offending keyword (up to
///   [`max_violations`](ValidationLimits::max_violations)), each with its pointer and a hint
///   that names [`normalize_tool`](super::normalize_tool) where normalising fixes it.
///
/// ```
/// use prism::validation::{ArgumentError, JsonSchemaEngine, SchemaEngine};
/// use serde_json::json;
///
/// let validator = JsonSchemaEngine::new();
/// let schema = json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}, "days": {"type": "integer", "maximum": 14}},
///     "required": ["city"]
/// });
/// assert!(validator.validate(&schema, &json!({"city": "Paris", "days": 3})).is_ok());
///
/// let Err(ArgumentError::Invalid { violations, .. }) =
///     validator.validate(&schema, &json!({"days": 30}))
/// else {
///     panic!("expected violations")
/// };
/// let paths: Vec<_> = violations.iter().map(|v| (v.instance_path.as_str(), v.keyword.as_str())).collect();
/// assert_eq!(paths, [("", "required"), ("/days", "maximum")]);
/// ```
#[derive(Clone)]
pub struct JsonSchemaEngine {
    limits: ValidationLimits,
    assert_formats: bool,
    cache: Arc<SchemaCache<Result<CompiledSchema, SchemaError>>>,
    /// Secrets taken out of the schema's text an error quotes before the quote is cut to its
    /// bound, for schemas whose text is not the host's own (see
    /// [`with_redactor`](Self::with_redactor)).
    redactor: SecretRedactor,
}

impl Default for JsonSchemaEngine {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonSchemaEngine {
    /// A validator with the default limits, `format` as an annotation.
    pub fn new() -> Self {
        Self::with(ValidationLimits::default(), false)
    }

    fn with(limits: ValidationLimits, assert_formats: bool) -> Self {
        // The limit is at least 1 by construction of `ValidationLimits`.
        let capacity = NonZeroUsize::new(limits.max_cached_schemas()).unwrap_or(NonZeroUsize::MIN);
        Self {
            limits,
            assert_formats,
            cache: Arc::new(SchemaCache::new(capacity)),
            redactor: SecretRedactor::default(),
        }
    }

    /// The same validator, with a new, empty cache, whose errors take `redactor`'s secrets out
    /// of the text they quote before cutting it to its bound. A schema the host did not write
    /// (a remote tool's) may hold a credential; the errors quote the schema's text (a `const`,
    /// a `pattern`), and a cut through a credential would leave a part of it no redactor run
    /// afterwards can find.
    #[cfg(feature = "mcp")]
    pub(crate) fn with_redactor(self, redactor: SecretRedactor) -> Self {
        Self {
            redactor,
            ..Self::with(self.limits, self.assert_formats)
        }
    }

    /// The same validator with other limits (and a new, empty cache).
    pub fn with_limits(self, limits: ValidationLimits) -> Self {
        Self::with(limits, self.assert_formats)
    }

    /// The same validator with `format` asserted (`true`) or annotating only (`false`, the
    /// default), and a new, empty cache.
    pub fn with_format_assertion(self, assert: bool) -> Self {
        Self::with(self.limits, assert)
    }

    /// The limits in force.
    pub fn limits(&self) -> &ValidationLimits {
        &self.limits
    }

    /// True when `format` is asserted.
    pub fn asserts_formats(&self) -> bool {
        self.assert_formats
    }

    /// How many compiled schemas the cache holds.
    pub fn cached_schemas(&self) -> usize {
        self.cache.len()
    }

    /// Every violation of a value `is_valid` refused, up to the limit. Kept out of line so that
    /// the valid path, inlined into callers, stays small.
    #[cold]
    #[inline(never)]
    fn violations(&self, compiled: &CompiledSchema, value: &Value) -> ArgumentError {
        let max = self.limits.max_violations();
        collect(
            &compiled.validator,
            compiled.cost,
            value,
            max,
            &self.redactor,
        )
    }

    fn compile_uncached(&self, schema: &Value) -> Result<CompiledSchema, SchemaError> {
        check_references(schema, self.limits.max_refs())?;
        let patterns = PatternOptions::fancy_regex()
            .backtrack_limit(PATTERN_BACKTRACK_LIMIT)
            .size_limit(PATTERN_SIZE_LIMIT)
            .dfa_size_limit(PATTERN_SIZE_LIMIT);
        // Every draft's meta-schema is at hand: the crate only loads those of the schema's own
        // draft, so a reference to another draft's would be refused as unresolvable.
        let validator = jsonschema::options()
            .offline()
            .with_registry(&referencing::SPECIFICATIONS)
            .should_validate_formats(self.assert_formats)
            .with_pattern_options(patterns)
            .build(schema)
            .map_err(|error| {
                let max = self.limits.max_violations();
                meta_schema_error(schema, max, MESSAGE_LIMIT, &self.redactor)
                    .unwrap_or_else(|| compile_error(&error, &self.redactor))
            })?;
        Ok(CompiledSchema {
            validator: Arc::new(validator),
            cost: ListingCost::of(schema),
        })
    }
}

impl SchemaEngine for JsonSchemaEngine {
    type Compiled = CompiledSchema;

    fn compile(&self, schema: &Value) -> Result<CompiledSchema, SchemaError> {
        self.limits.check_schema_shape(schema)?;
        let max_bytes = self.limits.max_schema_bytes();
        let key = ContentKey::of(schema, max_bytes).ok_or_else(|| {
            SchemaError::new(
                SchemaErrorKind::TooLarge,
                "",
                format!("the schema is larger than {max_bytes} bytes"),
            )
        })?;
        self.cache
            .get_or_insert_with(key, || self.compile_uncached(schema))
    }

    // Small enough to inline into the adapter (which is generic, so this crosses crates). The
    // engine is reached through `CompiledSchema::is_valid`, one call that keeps its body out of
    // the caller's frame, and the error details through another, off the valid path.
    #[inline]
    fn check(&self, compiled: &CompiledSchema, value: &Value) -> Result<(), ArgumentError> {
        self.limits.check_arguments(value)?;
        if compiled.is_valid(value) {
            Ok(())
        } else {
            Err(self.violations(compiled, value))
        }
    }

    fn validate(&self, schema: &Value, value: &Value) -> Result<(), ArgumentError> {
        let compiled = self.compile(schema).map_err(ArgumentError::Schema)?;
        self.check(&compiled, value)
    }
}

impl fmt::Debug for JsonSchemaEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonSchemaEngine")
            .field("limits", &self.limits)
            .field("assert_formats", &self.assert_formats)
            .field("cached_schemas", &self.cache.len())
            .finish()
    }
}

/// A compilation failure as a host error. A schema that breaks its meta-schema is reported at
/// the offending place in the schema (the meta-validation's instance path). The message quotes
/// the schema: `redactor`'s secrets are taken out of it before it is cut.
fn compile_error(error: &ValidationError<'_>, redactor: &SecretRedactor) -> SchemaError {
    let mut message = error.to_string();
    redactor.redact_and_truncate(&mut message, MESSAGE_LIMIT);
    let (kind, pointer) = match error.kind() {
        ValidationErrorKind::Referencing(inner) => {
            let kind = if inner.to_string().contains("Retrieval is disabled") {
                SchemaErrorKind::RemoteRef
            } else {
                SchemaErrorKind::UnresolvableRef
            };
            (kind, error.schema_path().as_str())
        }
        _ if !error.instance_path().as_str().is_empty() => {
            (SchemaErrorKind::Invalid, error.instance_path().as_str())
        }
        _ => (SchemaErrorKind::Invalid, error.schema_path().as_str()),
    };
    SchemaError::new(kind, pointer, message)
}
