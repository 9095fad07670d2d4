//! The generated `search_tools` tool: how a model asks for more tools in search mode.
//!
//! Each search-mode turn carries a fresh `search_tools` definition from
//! [`ToolSearch::disclose`](super::ToolSearch::disclose). Its schema never changes (so the
//! request stays cacheable); its handler is bound to that turn's input list, so a search can
//! only ever return tools the turn could have disclosed.
//!
//! A call returns plain text, one inert line per tool, best first:
//!
//! ```text
//! send_email: Sends an email message. [matched: email, send]
//! ```
//!
//! Lines carry no schema and no body: a description is cut to its first line and
//! [`SHORT_DESCRIPTION_BYTES`], control characters become spaces, so a tool's description cannot
//! forge extra result lines. The returned tools are then activated in the session's
//! [`SharedActivatedTools`], and the next turn discloses them.
//!
//! # Wiring it into a run
//!
//! The names reach the run through the shared handle, not through the result value: the run
//! keeps one [`SharedActivatedTools`] per session, passes it to every `disclose`, persists
//! [`SharedActivatedTools::snapshot`] in the session state, restores it with
//! [`SharedActivatedTools::replace`], and resets it with [`SharedActivatedTools::clear`]. The
//! tool writes into the handle only when its body runs, that is after every dispatch guard has
//! passed, so a refused call activates nothing.
//!
//! The `search_tools` definition is not in the host's registry. The run layer makes it
//! dispatchable for the turn that disclosed it only, by carrying it in that turn's
//! [`ToolScope`](crate::ToolScope) (every dispatch guard after the lookup still applies), and
//! refuses a host tool of the same name at start, with [`check_reserved_name`].

use std::sync::{Arc, LazyLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::context::ToolExecutionContext;
use crate::definition::{NotPrepared, Prepared, ToolDefinition, ToolFuture, ToolHandler};
use crate::error::ToolError;
use crate::tool::decode_arguments;

use super::activated::SharedActivatedTools;
use super::limits::{MAX_TOP_K, cut_at_char_boundary};
use super::reserved_name::SEARCH_TOOLS_NAME;
use super::tool_search::{Eligible, SearchResults, ToolSearch};

/// The most bytes of a description a result line shows.
pub const SHORT_DESCRIPTION_BYTES: usize = 160;

const DESCRIPTION: &str = "Find more tools by describing what you need to do. Returns one line \
per matching tool: its name, a short description and the words that matched. Tools found become \
part of your tool list from the next turn on.";

/// The arguments of `search_tools`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchToolsArgs {
    /// What the tool should do, in a few words.
    query: String,
    /// How many tools to return at most (default: the turn's top-k).
    #[schemars(range(min = 1, max = 64))]
    k: Option<u32>,
}

static PARAMETERS: LazyLock<Value> =
    LazyLock::new(crate::schema::parameters_for::<SearchToolsArgs>);

/// The `search_tools` definition bound to one turn's input list.
pub(crate) fn search_tools_definition(
    search: ToolSearch,
    eligible: Eligible,
    activated: SharedActivatedTools,
) -> ToolDefinition {
    ToolDefinition::builder(SEARCH_TOOLS_NAME)
        .description(DESCRIPTION)
        .parameters(PARAMETERS.clone())
        .annotations(crate::definition::ToolAnnotations {
            read_only: Some(true),
            ..Default::default()
        })
        .handler(SearchToolsHandler {
            search,
            eligible: Arc::new(eligible),
            activated,
        })
}

struct SearchToolsHandler {
    search: ToolSearch,
    eligible: Arc<Eligible>,
    activated: SharedActivatedTools,
}

impl ToolHandler for SearchToolsHandler {
    fn prepare(
        &self,
        arguments: &Value,
        _ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        let args: SearchToolsArgs = decode_arguments(SEARCH_TOOLS_NAME, arguments)?;
        let k = args.k.map_or(self.search.limits().top_k(), |k| k as usize);
        let k = k.clamp(1, MAX_TOP_K);
        let (search, eligible, activated) = (
            self.search.clone(),
            Arc::clone(&self.eligible),
            self.activated.clone(),
        );
        Ok(ToolFuture::new(async move {
            let results = search
                .search_eligible(&args.query, k, &eligible)
                .map_err(|reason| {
                    ToolError::with_code(
                        "tool_search_failed",
                        format!("Tool search failed: {reason}"),
                    )
                })?;
            activated.activate_all(
                results
                    .hits()
                    .iter()
                    .map(|hit| Arc::clone(hit.tool.name_arc())),
            );
            Ok(Value::String(render(
                &results,
                search.limits().max_query_bytes(),
            )))
        })
        .into())
    }
}

/// The result text: a note when the query was cut, then one line per hit.
fn render(results: &SearchResults, max_query_bytes: usize) -> String {
    let mut lines = Vec::with_capacity(results.hits().len() + 1);
    if results.query_truncated() {
        lines.push(format!(
            "Note: the query was cut to its first {max_query_bytes} bytes."
        ));
    }
    if results.hits().is_empty() {
        lines.push("No tools matched the query.".to_owned());
    }
    for hit in results.hits() {
        // Names come from the host, but a line must stay one line whatever they hold.
        let mut line = one_line(hit.tool.name());
        line.push(':');
        if let Some(description) = hit.tool.description() {
            line.push(' ');
            line.push_str(&short_description(description));
        }
        if !hit.matched.is_empty() {
            line.push_str(" [matched: ");
            line.push_str(&hit.matched.join(", "));
            line.push(']');
        }
        lines.push(line);
    }
    lines.join("\n")
}

/// The first line of a description, at most [`SHORT_DESCRIPTION_BYTES`], on one line.
fn short_description(description: &str) -> String {
    let first_line = description.trim().lines().next().unwrap_or_default();
    let (cut, truncated) = cut_at_char_boundary(first_line, SHORT_DESCRIPTION_BYTES);
    let mut short = one_line(cut);
    if truncated {
        short.push('…');
    }
    short
}

/// `text` with every control character and line or paragraph separator made a space.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2028}' | '\u{2029}' => ' ',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_descriptions_stay_on_one_bounded_line() {
        assert_eq!(
            short_description("  Sends mail.\nSecond line"),
            "Sends mail."
        );
        assert_eq!(short_description("a\tb\u{85}c\u{2028}d"), "a b c d");
        assert_eq!(one_line("evil\nname"), "evil name");
        let long = "é".repeat(200);
        let short = short_description(&long);
        assert_eq!(short, format!("{}…", "é".repeat(80)));
    }

    #[test]
    fn the_schema_names_query_and_k() {
        assert_eq!(PARAMETERS["required"], serde_json::json!(["query"]));
        assert_eq!(PARAMETERS["properties"]["k"]["maximum"], 64);
        assert_eq!(PARAMETERS["additionalProperties"], false);
    }
}
