//! [`lower`]: a canonical parameter schema in a provider's dialect.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::anthropic::AnthropicStrict;
use super::dialect::Dialect;
use super::gemini::GeminiSchemaRules;
use super::gemini_json::GeminiJsonRules;
use super::lowered::{LoweredSchema, Report};
use super::lowering_error::{LoweringError, LoweringErrorKind};
use super::openai::{OpenAiStrict, openai_limits};
use super::references::{find_recursion, resolve_local};
use super::restore::NullMeansAbsent;
use super::strict::{StrictPolicy, StrictRules};
use super::walk::{MAX_SCHEMA_NESTING, NodeRules, Stop, Walk, check_input, merges_cleanly};

/// Lowers the canonical parameter `schema` of a tool to `dialect`.
///
/// The result is the schema to send, the strict flag to send with it, every change made (see
/// [`Downgrade`](super::Downgrade)), and what [`restore_arguments`](LoweredSchema::restore_arguments)
/// needs to turn a strict call back into canonical arguments. A pure function: the same input
/// always gives the same output, and nothing is cached here (see [`LoweringCache`](super::LoweringCache)).
///
/// The root must describe an object (`type: object`, or no `type`, which is then added and
/// reported); an empty schema or `true` becomes an object without properties. A root `$ref` is
/// replaced by its target. Strict dialects fall back to non-strict, with
/// [`non_strict_reason`](LoweredSchema::non_strict_reason), when the schema has no strict form.
///
/// # Errors
///
/// [`LoweringError`] with the JSON pointer of the offending schema: a root that is not an
/// object, a malformed keyword, a reference that does not resolve (or is recursive, for the
/// dialects that inline references), or a schema over the size and depth bounds (1 MiB of
/// compact JSON, 100 levels of JSON, 50 levels of subschemas and 100,000 schema objects after
/// inlining). Never panics, whatever the input.
///
/// ```
/// use prism::schema::{Dialect, DowngradeAction, lower};
/// use serde_json::json;
///
/// let canonical = json!({
///     "type": "object",
///     "properties": {"unit": {"type": ["string", "null"], "enum": ["c", "f", null]}},
/// });
/// let gemini = lower(&canonical, Dialect::GeminiParameters).unwrap();
/// assert_eq!(
///     gemini.schema()["properties"]["unit"],
///     json!({"type": "string", "enum": ["c", "f"], "nullable": true})
/// );
/// assert!(gemini.downgrades().iter().all(|d| matches!(d.action, DowngradeAction::Rewritten(_))));
/// ```
pub fn lower(schema: &Value, dialect: Dialect) -> Result<LoweredSchema, LoweringError> {
    check_input(schema)?;
    let mut report = Report::default();
    let root = root_object(schema, &mut report)?;
    let root = root.as_ref();
    match dialect {
        Dialect::OpenAiChat { strict } | Dialect::OpenAiResponses { strict } => {
            if strict {
                strict_or_fallback::<OpenAiStrict>(root, dialect, report, openai_limits)
            } else {
                walked(root, dialect, report, false, &mut Unchanged)
            }
        }
        Dialect::Anthropic { strict: true } => {
            strict_or_fallback::<AnthropicStrict>(root, dialect, report, |schema| {
                find_recursion(schema, MAX_SCHEMA_NESTING)
                    .map(|why| format!("{why}, which Anthropic's strict mode does not support"))
            })
        }
        Dialect::GeminiParameters => walked(root, dialect, report, true, &mut GeminiSchemaRules),
        Dialect::GeminiJsonSchema => walked(root, dialect, report, false, &mut GeminiJsonRules),
        Dialect::NoRef => walked(root, dialect, report, true, &mut Unchanged),
        Dialect::Anthropic { strict: false } | Dialect::Mcp => {
            walked(root, dialect, report, false, &mut Unchanged)
        }
    }
}

/// The rules of the dialects that send the canonical schema as it is.
struct Unchanged;

impl NodeRules for Unchanged {
    fn rewrite(&mut self, _: &mut Value, _: &str, _: &mut Walk<'_>) -> Result<(), Stop> {
        Ok(())
    }
}

/// One walk with `rules`; never strict.
fn walked(
    root: &Value,
    dialect: Dialect,
    report: Report,
    inline: bool,
    rules: &mut dyn NodeRules,
) -> Result<LoweredSchema, LoweringError> {
    let mut walk = Walk::new(root, inline);
    walk.report = report;
    let schema = walk.run(rules).map_err(|stop| match stop {
        Stop::Error(error) => error,
        // Only strict rules stop this way.
        Stop::NotStrict(reason) => {
            LoweringError::new("", LoweringErrorKind::Unsupported { what: reason })
        }
    })?;
    Ok(LoweredSchema {
        dialect,
        schema,
        strict: false,
        downgrades: walk.report.into_downgrades(),
        non_strict_reason: None,
        nulls: NullMeansAbsent::default(),
    })
}

/// The strict walk under `P`, or, when the schema has no strict form (or `precheck` finds a
/// reason against it), the canonical schema sent non-strict with the reason.
fn strict_or_fallback<P: StrictPolicy>(
    root: &Value,
    dialect: Dialect,
    report: Report,
    precheck: fn(&Value) -> Option<String>,
) -> Result<LoweredSchema, LoweringError> {
    let fallback = |report: Report, reason: String| {
        let mut lowered = walked(root, dialect, report, false, &mut Unchanged)?;
        lowered.non_strict_reason = Some(reason);
        Ok(lowered)
    };
    if let Some(reason) = precheck(root) {
        return fallback(report, reason);
    }
    let mut walk = Walk::new(root, false);
    walk.report = report.clone();
    match walk.run(&mut StrictRules::<P>::default()) {
        Ok(mut schema) => {
            if schema.get("anyOf").is_some() {
                return fallback(
                    report,
                    "the root is a union (`anyOf`), which strict mode does not allow".to_owned(),
                );
            }
            let nulls = NullMeansAbsent::collect(&mut schema);
            Ok(LoweredSchema {
                dialect,
                schema,
                strict: true,
                downgrades: walk.report.into_downgrades(),
                non_strict_reason: None,
                nulls,
            })
        }
        Err(Stop::NotStrict(reason)) => fallback(report, reason),
        Err(Stop::Error(error)) => Err(error),
    }
}

/// The canonical schema with an object root: `type: object` added where missing, a root `$ref`
/// replaced by its target; an error for any other root.
fn root_object<'a>(
    schema: &'a Value,
    report: &mut Report,
) -> Result<Cow<'a, Value>, LoweringError> {
    let map = match schema {
        Value::Object(map) if map.is_empty() => None,
        Value::Object(map) => Some(map),
        Value::Bool(true) => None,
        _ => return Err(LoweringError::new("", LoweringErrorKind::NotAnObject)),
    };
    let Some(map) = map else {
        report.rewritten(
            "",
            "type",
            "`object` with no properties, for a schema accepting anything",
        );
        return Ok(Cow::Owned(json!({"type": "object", "properties": {}})));
    };
    let mut root = Cow::Borrowed(map);
    if let Some(reference) = map.get("$ref") {
        let reference = reference
            .as_str()
            .ok_or_else(|| LoweringError::invalid("", "$ref", "a string"))?;
        let (Value::Object(target), _) = resolve_local(schema, reference).ok_or_else(|| {
            LoweringError::new(
                "",
                LoweringErrorKind::UnresolvableReference {
                    reference: reference.to_owned(),
                },
            )
        })?
        else {
            return Err(LoweringError::new("", LoweringErrorKind::NotAnObject));
        };
        let mut merged: Map<String, Value> = target.clone();
        let mut siblings: Map<String, Value> = map
            .iter()
            .filter(|(keyword, _)| *keyword != "$ref")
            .map(|(keyword, value)| (keyword.clone(), value.clone()))
            .collect();
        // Both lists of required names apply: their union is one list that says the same.
        if let Some(Value::Array(own)) = merged.get_mut("required")
            && let Some(Value::Array(beside)) = siblings.get("required")
        {
            for name in beside {
                if !own.contains(name) {
                    own.push(name.clone());
                }
            }
            siblings.remove("required");
        }
        // The root must stay one object schema (no `allOf` around it): keywords that would
        // change each other's meaning in it cannot be merged, and the schema is refused.
        if !merges_cleanly(&merged, &siblings) {
            return Err(LoweringError::new(
                "",
                LoweringErrorKind::Unsupported {
                    what: "keywords beside the root `$ref` that its target also constrains"
                        .to_owned(),
                },
            ));
        }
        merged.extend(siblings);
        report.rewritten("", "$ref", "the root's target inlined at the root");
        root = Cow::Owned(merged);
    }
    match root.get("type") {
        Some(Value::String(name)) if name == "object" => {}
        None => {
            let mut with_type = Map::with_capacity(root.len() + 1);
            with_type.insert("type".to_owned(), json!("object"));
            with_type.extend(
                root.iter()
                    .map(|(keyword, value)| (keyword.clone(), value.clone())),
            );
            report.rewritten("", "type", "`object` added at the root");
            root = Cow::Owned(with_type);
        }
        Some(Value::Array(names)) if names.iter().any(|name| name == "object") => {
            root.to_mut().insert("type".to_owned(), json!("object"));
            report.rewritten(
                "",
                "type",
                "only `object` kept at the root: arguments are an object",
            );
        }
        _ => return Err(LoweringError::new("", LoweringErrorKind::NotAnObject)),
    }
    Ok(match root {
        Cow::Borrowed(_) => Cow::Borrowed(schema),
        Cow::Owned(map) => Cow::Owned(Value::Object(map)),
    })
}
