//! The type names of other languages' dialects (`dict`, `float`, `String`…) and their JSON Schema
//! names.

use serde_json::Value;

/// The standard form of a `type` value: `Some(Some(v))` to set it, `Some(None)` to drop it,
/// `None` when it is not a string or a list of strings.
pub(super) fn standard_type(found: &Value) -> Option<Option<Value>> {
    match found {
        Value::String(name) => Some(standard_name(name).map(|name| Value::from(name.as_str()))),
        Value::Array(names) => {
            let mut standard: Vec<Value> = Vec::with_capacity(names.len());
            for name in names {
                let name = name.as_str()?;
                let Some(name) = standard_name(name) else {
                    return Some(None);
                };
                let name = Value::from(name.as_str());
                if !standard.contains(&name) {
                    standard.push(name);
                }
            }
            Some(Some(Value::Array(standard)))
        }
        _ => None,
    }
}

/// The JSON Schema name for a dialect's type name; `None` for "no constraint". Names not in
/// the table come back unchanged.
pub(super) fn standard_name(name: &str) -> Option<String> {
    let lower = name.trim().to_ascii_lowercase();
    let standard = match lower.as_str() {
        "" | "any" => return None,
        "dict" | "dictionary" | "map" | "hashmap" | "object" => "object",
        "float" | "double" | "decimal" | "number" => "number",
        "int" | "long" | "integer" => "integer",
        "tuple" | "list" | "arraylist" | "array" => "array",
        "bool" | "boolean" => "boolean",
        "str" | "string" | "char" => "string",
        "none" | "null" => "null",
        _ => return Some(name.to_owned()),
    };
    Some(standard.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_json_schema_names_in_any_case_and_unknown_ones_stay() {
        assert_eq!(standard_name(" HashMap ").as_deref(), Some("object"));
        assert_eq!(standard_name("Char").as_deref(), Some("string"));
        assert_eq!(standard_name("any"), None);
        assert_eq!(standard_name("Vec<u8>").as_deref(), Some("Vec<u8>"));
        assert_eq!(standard_type(&Value::from(3)), None);
    }
}
