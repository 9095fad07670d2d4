//! A whole HTML page as the model reads it: its title, and its body as markdown or plain text,
//! cut at a character boundary.

use schemars::JsonSchema;
use serde::Deserialize;

use super::error::WebError;
use super::parse::parse_page;
use crate::redact::SecretRedactor;

/// How page text is handed to the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TextFormat {
    /// Markdown: headings, lists, links and emphasis kept.
    #[default]
    Markdown,
    /// Plain text, one block per line.
    Text,
}

impl TextFormat {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TextFormat::Markdown => "markdown",
            TextFormat::Text => "text",
        }
    }
}

/// Elements whose text is never page content.
const HIDDEN: &str = "script, style, noscript, template, head";
/// The same, by name.
const HIDDEN_TAGS: [&str; 5] = ["script", "style", "noscript", "template", "head"];

/// The page's title and its body in `format`, from one parse; `not_readable` when the page
/// cannot be parsed in time (see `parse.rs`).
pub(crate) fn read_html(
    html: &str,
    format: TextFormat,
) -> Result<(Option<String>, String), WebError> {
    let document = parse_page(html)?;
    let title = collapse_spaces(&document.select("title").first().text());
    let title = (!title.is_empty()).then_some(title);
    Ok((title, html_to(html, document, format)))
}

/// How deep elements may nest for a page to be converted as `format` asks or searched for its
/// article. The converters and the article extractor recurse once per level (a deep enough page
/// overflows the stack, which aborts the process) or take time growing with its square; a
/// deeper page is read as flat text instead, and has no readable article.
pub(crate) const MAX_NESTING: usize = 256;

/// The page's body in `format`: `document` is `html` parsed.
fn html_to(html: &str, document: dom_query::Document, format: TextFormat) -> String {
    if deeper_than(&document, MAX_NESTING) {
        return flat_text(&document);
    }
    match format {
        TextFormat::Markdown => htmd::HtmlToMarkdown::builder()
            .skip_tags(HIDDEN_TAGS.to_vec())
            .build()
            .convert(html)
            .unwrap_or_else(|_| body_text(document)),
        TextFormat::Text => body_text(document),
    }
}

/// The body's text, hidden elements left out: `document` is the page parsed once.
fn body_text(document: dom_query::Document) -> String {
    document.select(HIDDEN).remove();
    tidy_lines(&document.select("body").text())
}

/// Whether elements of `document` nest deeper than `limit`, found without recursion.
pub(crate) fn deeper_than(document: &dom_query::Document, limit: usize) -> bool {
    let mut stack = vec![(document.root(), 0)];
    while let Some((node, depth)) = stack.pop() {
        if depth > limit {
            return true;
        }
        if let Some(next) = node.next_sibling() {
            stack.push((next, depth));
        }
        if let Some(child) = node.first_child() {
            stack.push((child, depth + 1));
        }
    }
    false
}

/// Every text of `document` outside hidden elements, in document order, one per line, found
/// without recursion and in time linear in the page.
fn flat_text(document: &dom_query::Document) -> String {
    let mut text = String::new();
    let mut stack = vec![document.root()];
    while let Some(node) = stack.pop() {
        if let Some(next) = node.next_sibling() {
            stack.push(next);
        }
        if node.is_text() {
            text.push_str(&node.text());
            text.push('\n');
            continue;
        }
        let skipped = node
            .node_name()
            .is_some_and(|name| HIDDEN_TAGS.contains(&name.as_ref()));
        if !skipped && let Some(child) = node.first_child() {
            stack.push(child);
        }
    }
    tidy_lines(&text)
}

/// Lines trimmed, runs of blank lines cut to one.
pub(crate) fn tidy_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = true;
    for line in text.lines() {
        let line = collapse_spaces(line);
        if line.is_empty() {
            if !blank {
                out.push('\n');
            }
            blank = true;
            continue;
        }
        out.push_str(&line);
        out.push('\n');
        blank = false;
    }
    out.trim_end().to_owned()
}

fn collapse_spaces(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Characters kept of a page's title and of each other piece of its metadata: no real one is
/// longer, and a hostile page could otherwise put its whole body there, past `max_chars`.
pub(crate) const MAX_METADATA_CHARS: usize = 1_000;

/// `text` with `redactor`'s secrets taken out, then cut to at most `max_chars` characters (never
/// inside one), and whether it was cut. Redacted first: a cut could leave part of a secret that
/// the dispatcher, redacting the result afterwards, would no longer find.
pub(crate) fn redacted_cut(
    mut text: String,
    max_chars: usize,
    redactor: &SecretRedactor,
) -> (String, bool) {
    redactor.redact_string(&mut text);
    cut_chars(text, max_chars)
}

/// `text` cut to at most `max_chars` characters (never inside one), and whether it was cut.
fn cut_chars(mut text: String, max_chars: usize) -> (String, bool) {
    match text.char_indices().nth(max_chars) {
        Some((byte, _)) => {
            text.truncate(byte);
            (text, true)
        }
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutting_never_splits_a_character() {
        let (cut, truncated) = cut_chars("héllo wörld".into(), 7);
        assert_eq!((cut.as_str(), truncated), ("héllo w", true));
        let (whole, truncated) = cut_chars("日本語".into(), 3);
        assert_eq!((whole.as_str(), truncated), ("日本語", false));
    }

    #[test]
    fn text_leaves_scripts_and_styles_out() {
        let page = "<html><head><title> A  page </title><style>p{}</style></head><body><h1>Head</h1>\
                    <script>var secret = 1;</script><p>First   para.</p><p>Second.</p></body></html>";
        let (title, text) = read_html(page, TextFormat::Text).unwrap();
        assert_eq!(title.as_deref(), Some("A page"));
        assert!(!text.contains("secret") && !text.contains("p{}"), "{text}");
        assert!(text.contains("First para."), "{text}");
        let (_, markdown) = read_html(page, TextFormat::Markdown).unwrap();
        assert!(
            markdown.contains("# Head") && !markdown.contains("secret"),
            "{markdown}"
        );
    }
}
