//! The page as a model reads it: the accessibility tree as indented text lines of roles, names,
//! values and states, each interactive element tagged with a ref, bounded in characters.
//!
//! ```text
//! - heading "Sign in" [level=1]
//! - textbox "User name" [ref=e1] value="alice"
//! - checkbox "Remember me" [ref=e2] [checked]
//! - button "Sign in" [ref=e3]
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::refs::RefTable;
use crate::redact::SecretRedactor;

/// Roles a model can act on; these lines carry a ref.
const INTERACTIVE_ROLES: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];

/// Roles that only group others: without a name they add a level and no information.
const TRANSPARENT_ROLES: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "GenericContainer",
    "group",
];

/// Deeper levels are drawn at this indentation, so a deep page cannot spend the budget on spaces.
const MAX_INDENT: usize = 24;

/// A rendered snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// The text tree.
    pub(crate) text: String,
    /// Whether the text was cut at the character limit.
    pub(crate) truncated: bool,
    /// How many refs it hands out.
    pub(crate) refs: usize,
}

/// Renders the nodes of `Accessibility.getFullAXTree`, assigning refs through `refs` (whose
/// previous snapshot stops being valid). At most `max_chars` characters; names and values are
/// cut at `max_text` characters once `redactor`'s secrets are taken out of them (a cut could
/// leave part of a secret that the dispatcher, redacting the result afterwards, would not find).
pub(crate) fn render(
    nodes: &[Value],
    refs: &mut RefTable,
    max_chars: usize,
    max_text: usize,
    redactor: &SecretRedactor,
) -> Snapshot {
    refs.begin_snapshot();
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .filter_map(|node| Some((node.get("nodeId")?.as_str()?, node)))
        .collect();
    let mut text = String::new();
    let mut truncated = false;
    let mut ref_count = 0;
    let roots = nodes.iter().filter(|node| node.get("parentId").is_none());
    // (node, depth, the name of the nearest named ancestor): an explicit stack, because page
    // trees can be deeper than a task's stack allows for recursion.
    let mut stack: Vec<(&Value, usize, String)> =
        roots.rev().map(|node| (node, 0, String::new())).collect();
    while let Some((node, depth, parent_name)) = stack.pop() {
        let role = string_at(node, "role");
        let name = clean(&redactor.redact_str(string_at(node, "name")), max_text);
        let ignored = node
            .get("ignored")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut child_depth = depth;
        let mut child_parent_name = parent_name.clone();
        let line = if ignored || role == "RootWebArea" || role == "InlineTextBox" {
            None
        } else if role == "StaticText" {
            (!name.is_empty() && name != parent_name).then(|| format!("text {}", quote(&name)))
        } else if name.is_empty() && TRANSPARENT_ROLES.contains(&role) || role == "LineBreak" {
            None
        } else {
            child_depth = depth + 1;
            child_parent_name = name.clone();
            let mut line = role.to_string();
            if !name.is_empty() {
                let _ = write!(line, " {}", quote(&name));
            }
            let node_id = node.get("backendDOMNodeId").and_then(Value::as_i64);
            if let (true, Some(node_id)) = (INTERACTIVE_ROLES.contains(&role), node_id) {
                let _ = write!(line, " [ref={}]", refs.assign(node_id));
                ref_count += 1;
            }
            let value = clean(&redactor.redact_str(string_at(node, "value")), max_text);
            if !value.is_empty() && value != name {
                let _ = write!(line, " value={}", quote(&value));
            }
            states(node, &mut line);
            Some(line)
        };
        if let Some(line) = line {
            let indent = depth.min(MAX_INDENT) * 2;
            if text.len() + indent + line.len() + 3 > max_chars {
                truncated = true;
                break;
            }
            let _ = writeln!(text, "{:indent$}- {line}", "");
        }
        if role == "InlineTextBox" || role == "StaticText" {
            continue;
        }
        let children = node.get("childIds").and_then(Value::as_array);
        for child in children.into_iter().flatten().rev() {
            if let Some(child) = child.as_str().and_then(|id| by_id.get(id)) {
                stack.push((child, child_depth, child_parent_name.clone()));
            }
        }
    }
    Snapshot {
        text,
        truncated,
        refs: ref_count,
    }
}

/// `node[field].value` as a string (numbers and booleans written out).
fn string_at<'a>(node: &'a Value, field: &str) -> &'a str {
    match node.get(field).and_then(|value| value.get("value")) {
        Some(Value::String(text)) => text,
        _ => "",
    }
}

/// Whitespace collapsed and the text cut at `max` characters (with `…` when cut).
pub(crate) fn clean(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, word) in text.split_whitespace().enumerate() {
        if count > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > max * 4 {
            break;
        }
    }
    match out.char_indices().nth(max) {
        Some((end, _)) => {
            out.truncate(end);
            out.push('…');
            out
        }
        None => out,
    }
}

/// `text` as a JSON string literal.
pub(crate) fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// Appends the widget states worth a model's attention: `[checked]`, `[disabled]`,
/// `[expanded]`, `[level=2]`...
fn states(node: &Value, line: &mut String) {
    let Some(properties) = node.get("properties").and_then(Value::as_array) else {
        return;
    };
    for property in properties {
        let name = property.get("name").and_then(Value::as_str).unwrap_or("");
        let value = property.get("value").and_then(|value| value.get("value"));
        match (name, value) {
            ("checked" | "pressed", Some(Value::String(mixed))) if mixed == "mixed" => {
                let _ = write!(line, " [{name}=mixed]");
            }
            (
                "checked" | "pressed" | "selected" | "disabled" | "required" | "readonly"
                | "focused" | "expanded" | "modal" | "invalid",
                Some(Value::Bool(true)),
            ) => {
                let _ = write!(line, " [{name}]");
            }
            ("checked" | "pressed" | "selected" | "expanded", Some(Value::String(truth)))
                if truth == "true" =>
            {
                let _ = write!(line, " [{name}]");
            }
            ("level", Some(Value::Number(level))) => {
                let _ = write!(line, " [level={level}]");
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(id: &str, parent: Option<&str>, role: &str, name: &str, children: &[&str]) -> Value {
        let mut node = json!({
            "nodeId": id, "ignored": false,
            "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": name},
            "childIds": children,
            "backendDOMNodeId": id.parse::<i64>().unwrap() + 100,
        });
        if let Some(parent) = parent {
            node["parentId"] = json!(parent);
        }
        node
    }

    #[test]
    fn renders_roles_names_states_and_refs_for_interactive_nodes_only() {
        let mut checkbox = node("4", Some("2"), "checkbox", "Remember me", &[]);
        checkbox["properties"] =
            json!([{"name": "checked", "value": {"type": "tristate", "value": "true"}}]);
        let mut textbox = node("5", Some("2"), "textbox", "User", &[]);
        textbox["value"] = json!({"type": "string", "value": "alice"});
        let nodes = vec![
            node("1", None, "RootWebArea", "Login", &["2"]),
            node("2", Some("1"), "generic", "", &["3", "4", "5", "6"]),
            node("3", Some("2"), "heading", "Sign in", &["7"]),
            checkbox,
            textbox,
            node("6", Some("2"), "button", "Go", &[]),
            node("7", Some("3"), "StaticText", "Sign in", &[]),
        ];
        let mut refs = RefTable::default();
        let snapshot = render(&nodes, &mut refs, 10_000, 200, &SecretRedactor::default());
        assert_eq!(
            snapshot.text,
            "- heading \"Sign in\"\n\
             - checkbox \"Remember me\" [ref=e1] [checked]\n\
             - textbox \"User\" [ref=e2] value=\"alice\"\n\
             - button \"Go\" [ref=e3]\n"
        );
        assert_eq!(snapshot.refs, 3);
        assert_eq!(refs.resolve("e3").unwrap(), 106);
        let cut = render(&nodes, &mut refs, 70, 200, &SecretRedactor::default());
        assert!(
            cut.truncated && cut.text.lines().count() == 2,
            "{}",
            cut.text
        );
    }

    #[test]
    fn names_are_collapsed_and_cut_at_a_char_boundary() {
        assert_eq!(clean("  a \n b  ", 10), "a b");
        assert_eq!(clean("ééééé", 3), "ééé…");
    }
}
