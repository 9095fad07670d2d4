//! Vertex's streamed function-call arguments (`partialArgs`), put back together by JSON path.
//!
//! With `streamFunctionCallArguments`, Vertex sends a call's arguments as values at paths
//! (`$.recipe.ingredients[3].name`), a long string in several pieces (each but the last marked
//! `willContinue`). The builder writes each value where its path says, creating the objects and
//! arrays on the way, and appends string pieces to the string they continue.

use serde_json::{Map, Value};

use super::wire_types::PartialArg;

/// One step of a JSON path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A call's arguments as they arrive.
#[derive(Debug, Default)]
pub(super) struct ArgsBuilder {
    root: Map<String, Value>,
    /// The path of a string whose next piece is still to come.
    open_string: Option<String>,
    /// Why the pieces could not be assembled; later pieces are ignored.
    error: Option<String>,
}

impl ArgsBuilder {
    /// Writes one piece.
    pub(super) fn apply(&mut self, arg: &PartialArg<'_>) {
        if self.error.is_some() {
            return;
        }
        let path: &str = &arg.json_path;
        let continues = self.open_string.as_deref() == Some(path);
        self.open_string = None;
        let value = if let Some(text) = &arg.string_value {
            if arg.will_continue {
                self.open_string = Some(path.to_owned());
            }
            if continues {
                match self.slot(path) {
                    Ok(Value::String(existing)) => {
                        existing.push_str(text);
                        return;
                    }
                    Ok(_) => Value::String(text.as_ref().to_owned()),
                    Err(error) => {
                        self.error = Some(error);
                        return;
                    }
                }
            } else {
                Value::String(text.as_ref().to_owned())
            }
        } else if let Some(number) = &arg.number_value {
            Value::Number(number.clone())
        } else if let Some(flag) = arg.bool_value {
            Value::Bool(flag)
        } else if arg.null_value.is_some() {
            Value::Null
        } else {
            // A path with no value: the model began it and will fill it later.
            return;
        };
        match self.slot(path) {
            Ok(slot) => *slot = value,
            Err(error) => self.error = Some(error),
        }
    }

    /// The arguments, or why they could not be put together.
    pub(super) fn finish(self) -> Result<Value, String> {
        match self.error {
            Some(error) => Err(error),
            None => Ok(Value::Object(self.root)),
        }
    }

    /// The value at `path`, created (as `null`) with its parents when missing.
    fn slot(&mut self, path: &str) -> Result<&mut Value, String> {
        let steps = parse_path(path)?;
        let Some((first, rest)) = steps.split_first() else {
            return Err(format!(
                "argument path `{}` names the whole object",
                Shown(path)
            ));
        };
        let Step::Key(key) = first else {
            return Err(format!(
                "argument path `{}` indexes the arguments object",
                Shown(path)
            ));
        };
        let mut node = self.root.entry(key.clone()).or_insert(Value::Null);
        for step in rest {
            node = match step {
                Step::Key(key) => {
                    if node.is_null() {
                        *node = Value::Object(Map::new());
                    }
                    match node {
                        Value::Object(map) => map.entry(key.clone()).or_insert(Value::Null),
                        _ => return Err(conflict(path)),
                    }
                }
                Step::Index(index) => {
                    if node.is_null() {
                        *node = Value::Array(Vec::new());
                    }
                    match node {
                        Value::Array(items) => {
                            // The model's number, not a length: a far index must not allocate.
                            if *index >= items.len().saturating_add(MAX_INDEX_GAP) {
                                return Err(format!(
                                    "argument path `{}` skips more than {MAX_INDEX_GAP} array items",
                                    Shown(path)
                                ));
                            }
                            if items.len() <= *index {
                                items.resize(index + 1, Value::Null);
                            }
                            &mut items[*index]
                        }
                        _ => return Err(conflict(path)),
                    }
                }
            };
        }
        Ok(node)
    }
}

/// How far past an array's end one path may reach (the items between are `null` until filled).
const MAX_INDEX_GAP: usize = 1024;

/// The most steps one path may take. Arguments nested deeper could not have been sent as JSON
/// text (serde_json refuses more than 128 levels), and a value built that deep from the model's
/// path would overflow the stack when it is written out or dropped.
const MAX_PATH_STEPS: usize = 100;

/// A path as an error quotes it: its start, so that a model's endless path makes no endless
/// message.
struct Shown<'a>(&'a str);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.0;
        let end = path.floor_char_boundary(SHOWN_BYTES);
        f.write_str(&path[..end])?;
        if end < path.len() {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// How much of a path an error quotes.
const SHOWN_BYTES: usize = 60;

fn conflict(path: &str) -> String {
    format!(
        "argument path `{}` runs through a value that is not an object or array",
        Shown(path)
    )
}

/// `$.a.b[2]['c d']` as steps.
fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let bad = || format!("argument path `{}` is not a JSON path", Shown(path));
    let rest = path.strip_prefix('$').ok_or_else(bad)?;
    let mut steps = Vec::new();
    let mut chars = rest.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '.' => {
                let start = at + 1;
                let mut end = rest.len();
                while let Some(&(next, c)) = chars.peek() {
                    if c == '.' || c == '[' {
                        end = next;
                        break;
                    }
                    chars.next();
                }
                if start == end {
                    return Err(bad());
                }
                steps.push(Step::Key(rest[start..end].to_owned()));
            }
            '[' => {
                let close = rest[at..].find(']').ok_or_else(bad)? + at;
                let inside = &rest[at + 1..close];
                let step = match inside.as_bytes() {
                    // The quotes are ASCII, so cutting one off each end keeps char boundaries.
                    [open @ (b'\'' | b'"'), .., close] if open == close => {
                        Step::Key(inside[1..inside.len() - 1].to_owned())
                    }
                    _ => Step::Index(inside.parse().map_err(|_| bad())?),
                };
                steps.push(step);
                while chars.peek().is_some_and(|&(next, _)| next <= close) {
                    chars.next();
                }
            }
            _ => return Err(bad()),
        }
        if steps.len() > MAX_PATH_STEPS {
            return Err(format!(
                "argument path `{}` is nested more than {MAX_PATH_STEPS} levels deep",
                Shown(path)
            ));
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::borrow::Cow;

    fn string(path: &'static str, text: &'static str, will_continue: bool) -> PartialArg<'static> {
        PartialArg {
            json_path: Cow::Borrowed(path),
            string_value: Some(Cow::Borrowed(text)),
            number_value: None,
            bool_value: None,
            null_value: None,
            will_continue,
        }
    }

    #[test]
    fn paths_parse_with_keys_indexes_and_quoted_keys() {
        assert_eq!(
            parse_path("$.a[2]['c d'].e").unwrap(),
            vec![
                Step::Key("a".into()),
                Step::Index(2),
                Step::Key("c d".into()),
                Step::Key("e".into())
            ]
        );
        assert!(parse_path("a.b").is_err());
        assert!(parse_path("$.a[x]").is_err());
        assert!(parse_path("$..a").is_err());
    }

    #[test]
    fn pieces_build_nested_values_and_continue_strings() {
        let mut builder = ArgsBuilder::default();
        builder.apply(&string("$.r.items[0].name", "Lasa", true));
        builder.apply(&string("$.r.items[0].name", "gna", true));
        builder.apply(&string("$.r.items[0].name", "", false));
        builder.apply(&string("$.r.items[1]", "x", false));
        builder.apply(&string("$.r.items[1]", "y", false));
        assert_eq!(
            builder.finish().unwrap(),
            json!({"r": {"items": [{"name": "Lasagna"}, "y"]}})
        );
    }

    #[test]
    fn a_path_through_a_string_is_an_error() {
        let mut builder = ArgsBuilder::default();
        builder.apply(&string("$.a", "x", false));
        builder.apply(&string("$.a.b", "y", false));
        assert!(builder.finish().unwrap_err().contains("`$.a.b`"));
    }

    /// The model writes the paths: a path of any length gets an error of bounded length.
    #[test]
    fn an_error_quotes_only_the_start_of_a_long_path() {
        let long = format!("$.a.{}", "é".repeat(50_000));
        let mut through_string = ArgsBuilder::default();
        through_string.apply(&string("$.a", "x", false));
        through_string.apply(&string(Box::leak(long.into_boxed_str()), "y", false));
        let unparsable = format!("$.a{}!", "[0]".repeat(50));
        let mut bad_path = ArgsBuilder::default();
        bad_path.apply(&string(Box::leak(unparsable.into_boxed_str()), "y", false));
        for error in [through_string.finish(), bad_path.finish()] {
            let error = error.unwrap_err();
            assert!(error.len() < 200, "{} bytes: {error:.300}", error.len());
            assert!(error.contains("$.a"), "{error}");
        }
    }
}
