//! Doc comments as descriptions.
//!
//! `/// text` reaches the macro as `#[doc = " text"]`, one attribute per line. Plain lines are
//! joined here, at compile time, so an empty description is caught before the program runs.
//! A line written as `#[doc = include_str!("…")]` is only known once the compiler expands it, so a
//! description containing one becomes a `concat!` of every line instead.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The description a set of doc attributes spells.
pub enum Docs {
    /// No doc attribute at all.
    Missing,
    /// Only literal lines, joined and trimmed (possibly empty).
    Text(String),
    /// At least one line is a macro call: an expression of type `&'static str`, untrimmed.
    Expression(TokenStream),
}

/// True for `#[doc = …]`, the form a doc comment takes (not `#[doc(hidden)]`).
pub fn is_doc_line(attr: &Attribute) -> bool {
    matches!(&attr.meta, Meta::NameValue(pair) if pair.path.is_ident("doc"))
}

/// Reads the doc lines among `attrs`.
pub fn collect(attrs: &[Attribute]) -> Docs {
    let lines: Vec<&Expr> = attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(pair) if pair.path.is_ident("doc") => Some(&pair.value),
            _ => None,
        })
        .collect();
    if lines.is_empty() {
        return Docs::Missing;
    }
    let literal_lines: Option<Vec<String>> = lines.iter().map(|line| literal(line)).collect();
    match literal_lines {
        Some(lines) => Docs::Text(join(lines.iter().map(String::as_str))),
        None => {
            let parts = lines.iter().enumerate().map(|(index, line)| {
                let separator = (index > 0).then(|| quote!("\n",));
                match literal(line) {
                    Some(text) => quote!(#separator #text,),
                    None => quote!(#separator #line,),
                }
            });
            Docs::Expression(quote!(::core::concat!(#(#parts)*)))
        }
    }
}

/// A line's text: for `/// text`, without the one space in front of it; for a `/** … */`
/// comment (one attribute of several lines), as rustdoc shows it.
fn literal(line: &Expr) -> Option<String> {
    match line {
        Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) => {
            let value = text.value();
            if value.contains('\n') {
                return Some(unblock(&value));
            }
            Some(value.strip_prefix(' ').map(str::to_owned).unwrap_or(value))
        }
        _ => None,
    }
}

fn join<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    lines.collect::<Vec<_>>().join("\n").trim().to_owned()
}

/// The text of a block doc comment as rustdoc shows it: without the `*` that starts each line
/// (when every line after the first has one), and without the indentation its lines share, so
/// that nested lists and code keep theirs relative to the text.
fn unblock(block: &str) -> String {
    let mut lines = block.lines();
    // The first line follows `/**`: its indentation is not shared with the others.
    let first = lines.next().unwrap_or_default().trim();
    let rest: Vec<&str> = lines.collect();
    let decorated = rest
        .iter()
        .filter(|line| !line.trim().is_empty())
        .all(|line| line.trim_start().starts_with('*'));
    let rest: Vec<&str> = rest
        .iter()
        .map(|line| match line.trim_start().strip_prefix('*') {
            Some(after) if decorated => after,
            _ => line,
        })
        .collect();
    // Only spaces and tabs count: slicing after them always falls between characters.
    let indent = |line: &str| {
        line.bytes()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count()
    };
    let shared = rest
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| indent(line))
        .min()
        .unwrap_or(0);
    // A first line of only `*` is the rest of an opening `/***` rule, not text.
    let first = if first.chars().all(|c| c == '*') {
        ""
    } else {
        first
    };
    let lines = std::iter::once(first).chain(rest.iter().map(|line| {
        if line.trim().is_empty() {
            ""
        } else {
            &line[shared..]
        }
    }));
    join(lines)
}

#[cfg(test)]
mod tests {
    use super::{Docs, collect};
    use syn::parse_quote;

    #[test]
    fn literal_lines_are_joined_and_trimmed() {
        let attrs = vec![
            parse_quote!(#[doc = " Adds two integers."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " Overflow wraps."]),
            parse_quote!(#[doc(hidden)]),
        ];
        match collect(&attrs) {
            Docs::Text(text) => assert_eq!(text, "Adds two integers.\n\nOverflow wraps."),
            _ => panic!("expected literal text"),
        }
    }

    #[test]
    fn a_block_comment_loses_its_decorations() {
        let attrs =
            vec![parse_quote!(#[doc = "*\n * Adds two numbers.\n *\n * Overflow wraps.\n "])];
        match collect(&attrs) {
            Docs::Text(text) => assert_eq!(text, "Adds two numbers.\n\nOverflow wraps."),
            _ => panic!("expected literal text"),
        }
        let plain = vec![parse_quote!(#[doc = "\n   Adds two numbers.\n   Overflow wraps.\n"])];
        match collect(&plain) {
            Docs::Text(text) => assert_eq!(text, "Adds two numbers.\nOverflow wraps."),
            _ => panic!("expected literal text"),
        }
    }

    #[test]
    fn a_block_comment_keeps_relative_indentation_and_unicode_spaces() {
        let attrs = vec![parse_quote!(#[doc = "\n    Sorts.\n      - stable\n  \u{3000} wide\n"])];
        match collect(&attrs) {
            Docs::Text(text) => assert_eq!(text, "Sorts.\n    - stable\n\u{3000} wide"),
            _ => panic!("expected literal text"),
        }
    }

    #[test]
    fn a_macro_line_makes_an_expression() {
        let attrs = vec![
            parse_quote!(#[doc = " Intro."]),
            parse_quote!(#[doc = include_str!("tool.md")]),
        ];
        match collect(&attrs) {
            Docs::Expression(tokens) => {
                let text = tokens.to_string();
                assert!(text.contains("concat"), "{text}");
                assert!(text.contains("include_str"), "{text}");
            }
            _ => panic!("expected an expression"),
        }
    }

    #[test]
    fn no_doc_attribute_is_missing() {
        let attrs = vec![parse_quote!(#[inline])];
        assert!(matches!(collect(&attrs), Docs::Missing));
    }
}
