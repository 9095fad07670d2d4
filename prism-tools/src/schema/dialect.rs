//! [`Dialect`]: the schema language a provider's tool list speaks.

use std::fmt;

/// The dialect a tool's canonical parameter schema is [lowered](super::lower) to.
///
/// | dialect | field it fills | what lowering does |
/// | --- | --- | --- |
/// | `OpenAiChat { strict }` | Chat Completions `function.parameters` | strict: the Structured Outputs subset (closed objects, every property required, optional ones nullable, `anyOf` only, supported keywords only) |
/// | `OpenAiResponses { strict }` | Responses `parameters` | the same rules; the request must send `strict` explicitly, because it defaults to `true` there |
/// | `Anthropic { strict }` | Messages `input_schema` | strict: closed objects, `oneOf` as `anyOf`, unsupported constraints written into the description as Anthropic's SDK does; optional properties stay optional |
/// | `GeminiParameters` | `parameters` (OpenAPI 3.0 subset) | references inlined, one `type` with `nullable`, string enums, unsupported keywords removed |
/// | `GeminiJsonSchema` | `parametersJsonSchema` | JSON Schema with Gemini's keyword list; references kept |
/// | `Mcp` | MCP `inputSchema` | root `type: object`; otherwise the canonical schema |
/// | `NoRef` | any consumer without `$ref` support | every local `$ref` inlined |
///
/// A strict dialect whose schema cannot be strict (an open map, a tuple, a schema accepting any
/// value) is lowered non-strict instead, and says why: see
/// [`LoweredSchema::non_strict_reason`](super::LoweredSchema::non_strict_reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// OpenAI Chat Completions function parameters.
    OpenAiChat {
        /// Ask for Structured Outputs (`strict: true`).
        strict: bool,
    },
    /// OpenAI Responses function tool parameters.
    OpenAiResponses {
        /// Ask for strict mode; the request always states it (the API defaults to `true`).
        strict: bool,
    },
    /// Anthropic Messages tool `input_schema`.
    Anthropic {
        /// Ask for strict tool use (`strict: true`).
        strict: bool,
    },
    /// Gemini `FunctionDeclaration.parameters`: the OpenAPI 3.0 schema subset.
    GeminiParameters,
    /// Gemini `FunctionDeclaration.parametersJsonSchema`: JSON Schema.
    GeminiJsonSchema,
    /// Model Context Protocol `inputSchema`.
    Mcp,
    /// JSON Schema without references, for consumers that cannot resolve `$ref`.
    NoRef,
}

impl Dialect {
    /// Every dialect, strict variants included, in a stable order (for tests and tables).
    pub const ALL: [Dialect; 10] = [
        Dialect::OpenAiChat { strict: false },
        Dialect::OpenAiChat { strict: true },
        Dialect::OpenAiResponses { strict: false },
        Dialect::OpenAiResponses { strict: true },
        Dialect::Anthropic { strict: false },
        Dialect::Anthropic { strict: true },
        Dialect::GeminiParameters,
        Dialect::GeminiJsonSchema,
        Dialect::Mcp,
        Dialect::NoRef,
    ];

    /// Whether strict mode is asked for.
    pub fn wants_strict(self) -> bool {
        matches!(
            self,
            Dialect::OpenAiChat { strict: true }
                | Dialect::OpenAiResponses { strict: true }
                | Dialect::Anthropic { strict: true }
        )
    }

    /// A short, stable, snake_case name: `openai_chat_strict`, `gemini_parameters`, ….
    pub fn name(self) -> &'static str {
        match self {
            Dialect::OpenAiChat { strict: false } => "openai_chat",
            Dialect::OpenAiChat { strict: true } => "openai_chat_strict",
            Dialect::OpenAiResponses { strict: false } => "openai_responses",
            Dialect::OpenAiResponses { strict: true } => "openai_responses_strict",
            Dialect::Anthropic { strict: false } => "anthropic",
            Dialect::Anthropic { strict: true } => "anthropic_strict",
            Dialect::GeminiParameters => "gemini_parameters",
            Dialect::GeminiJsonSchema => "gemini_json_schema",
            Dialect::Mcp => "mcp",
            Dialect::NoRef => "no_ref",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_distinct_and_strictness_matches_them() {
        let names: HashSet<_> = Dialect::ALL.iter().map(|dialect| dialect.name()).collect();
        assert_eq!(names.len(), Dialect::ALL.len());
        for dialect in Dialect::ALL {
            assert_eq!(dialect.wants_strict(), dialect.name().ends_with("_strict"));
            assert_eq!(dialect.to_string(), dialect.name());
        }
    }
}
