//! The `format` values each provider accepts, and the ones schemars writes for Rust numbers.

/// The formats schemars writes for Rust integer and float types. They describe a Rust type, not
/// a JSON value; providers with a closed list of formats reject most of them.
pub(crate) fn is_rust_number_format(format: &str) -> bool {
    matches!(
        format,
        "int"
            | "int8"
            | "int16"
            | "int32"
            | "int64"
            | "int128"
            | "uint"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "uint128"
            | "float"
            | "double"
    )
}

/// OpenAI Structured Outputs: the string formats of its "supported schemas" list; no format is
/// accepted on numbers.
pub(crate) fn openai_strict_accepts(format: &str, on_string: bool) -> bool {
    on_string
        && matches!(
            format,
            "date-time"
                | "time"
                | "date"
                | "duration"
                | "email"
                | "hostname"
                | "ipv4"
                | "ipv6"
                | "uuid"
        )
}

/// Anthropic strict tool use: the string formats of `SupportedStringFormats` in Anthropic's
/// Python SDK (`lib/_parse/_transform.py`).
pub(crate) fn anthropic_strict_accepts(format: &str, on_string: bool) -> bool {
    on_string
        && matches!(
            format,
            "date-time"
                | "time"
                | "date"
                | "duration"
                | "email"
                | "hostname"
                | "uri"
                | "ipv4"
                | "ipv6"
                | "uuid"
        )
}

/// Gemini `parameters` (the `Schema` message): `float`/`double` on numbers, `int32`/`int64` on
/// integers, `enum`/`date-time` on strings.
pub(crate) fn gemini_schema_accepts(format: &str, json_type: Option<&str>) -> bool {
    match json_type {
        Some("number") => matches!(format, "float" | "double"),
        Some("integer") => matches!(format, "int32" | "int64"),
        Some("string") => matches!(format, "enum" | "date-time"),
        _ => false,
    }
}

/// Gemini `parametersJsonSchema`: the JSON Schema string formats and the OpenAPI number formats
/// that describe a JSON value (`int32`, `int64`, `float`, `double`); schemars' other Rust integer
/// formats are stripped.
pub(crate) fn gemini_json_accepts(format: &str) -> bool {
    !is_rust_number_format(format) || matches!(format, "int32" | "int64" | "float" | "double")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_lists() {
        assert!(is_rust_number_format("uint32") && !is_rust_number_format("email"));
        assert!(openai_strict_accepts("uuid", true) && !openai_strict_accepts("uuid", false));
        assert!(!openai_strict_accepts("uri", true) && anthropic_strict_accepts("uri", true));
        assert!(gemini_schema_accepts("int64", Some("integer")));
        assert!(!gemini_schema_accepts("uint32", Some("integer")));
        assert!(!gemini_schema_accepts("email", Some("string")));
        assert!(gemini_json_accepts("email") && gemini_json_accepts("double"));
        assert!(!gemini_json_accepts("uint8"));
    }
}
