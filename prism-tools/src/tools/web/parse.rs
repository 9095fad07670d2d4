//! A page's HTML as a tree, built within a time limit.
//!
//! Building the tree takes time growing with the square of how deep elements nest: each block
//! element's start tag makes the parser walk the open elements, and a hostile page of a few
//! megabytes of nested `<div>`s would keep a thread busy for hours. The page is fed to the parser
//! in pieces, and a page still unfinished when the limit passes is given up on as not readable.
//! An ordinary page is parsed in milliseconds, the largest in well under a second.

use std::time::{Duration, Instant};

use dom_query::Document;
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::TreeBuilderOpts;
use html5ever::{ParseOpts, parse_document};

use super::error::{WebError, WebErrorKind};

/// How long building one page's tree may take.
const PARSE_LIMIT: Duration = Duration::from_secs(10);

/// How much of the page the parser takes between two looks at the clock. A piece costs at most
/// its tags times the elements open, so the limit is overrun by a fraction of a second at worst.
const PIECE_BYTES: usize = 16 * 1024;

/// `html` as a tree, or `not_readable` when building it takes longer than the limit.
pub(crate) fn parse_page(html: &str) -> Result<Document, WebError> {
    parse_within(html, PARSE_LIMIT)
}

/// The error of a parse whose thread failed. Not the join error's text: a panic's message could
/// quote the page, and the redactor has not seen it.
pub(crate) fn parser_failed(error: &tokio::task::JoinError) -> WebError {
    let how = if error.is_panic() {
        "panicked"
    } else {
        "was stopped"
    };
    WebError::new(
        WebErrorKind::NotReadable,
        format!("reading the page failed: the parser {how}"),
    )
}

fn parse_within(html: &str, limit: Duration) -> Result<Document, WebError> {
    let started = Instant::now();
    // As `Document::from` parses: scripting off, so `<noscript>` content is a tree too.
    let options = ParseOpts {
        tree_builder: TreeBuilderOpts {
            scripting_enabled: false,
            ..TreeBuilderOpts::default()
        },
        ..ParseOpts::default()
    };
    let mut parser = parse_document(Document::default(), options);
    let mut rest = html;
    while !rest.is_empty() {
        if started.elapsed() > limit {
            return Err(WebError::new(
                WebErrorKind::NotReadable,
                format!(
                    "the page could not be parsed within {limit:?} (its elements nest too deep)"
                ),
            ));
        }
        // A piece ends at a character boundary; a piece shorter than one character cannot be.
        let end = match rest.floor_char_boundary(PIECE_BYTES) {
            0 => rest.ceil_char_boundary(1),
            end => end,
        };
        let (piece, tail) = rest.split_at(end);
        parser.process(StrTendril::from_slice(piece));
        rest = tail;
    }
    Ok(parser.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_fed_in_pieces_is_the_page_parsed_whole() {
        let body = "<p>caf\u{e9} \u{1f30a} <b>bold</b></p>".repeat(4_000);
        let html = format!("<html><head><title>T</title></head><body>{body}</body></html>");
        assert!(html.len() > 4 * PIECE_BYTES);
        let pieces = parse_page(&html).unwrap();
        assert_eq!(pieces.html(), Document::from(html.as_str()).html());
    }

    /// Nested `<div>`s cost the parser time growing with the square of their depth: this page
    /// would take minutes, and is given up on at the limit.
    #[test]
    fn a_page_that_takes_too_long_to_parse_is_not_readable() {
        let depth = 200_000;
        let html = format!(
            "<body>{}x{}</body>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let Err(error) = parse_within(&html, Duration::from_millis(200)) else {
            panic!("a page of {depth} nested divs was parsed within 200ms");
        };
        assert_eq!(error.kind(), WebErrorKind::NotReadable);
        assert!(error.message().contains("nest too deep"), "{error}");
    }
}
