//! Procedural macros for Prism: `#[tool]`, `#[tools]` and `#[derive(Tool)]`.
//!
//! Use them through the `prism` crate, which re-exports them with the runtime they need and
//! documents them with examples. This crate only holds the compile-time side.
//!
//! Each macro runs in three steps, one module each, and reports every mistake of one input in
//! one compiler run:
//!
//! | step | module | does |
//! | --- | --- | --- |
//! | parse | `attr`, `docs`, `param`, `parse` | reads keys, doc comments, parameters, the signature |
//! | check | `check` | judges the name, the description and the parameters together |
//! | generate | `expand` | emits the argument struct, type assertions and the `Tool` impl |
//!
//! Errors go into one `errors::Errors` and never stop the first two steps early. When there
//! is any, the macro emits them beside the user's item (with the attributes it consumed removed)
//! so that nothing else fails because of them.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod attr;
mod check;
mod docs;
mod errors;
mod expand;
mod param;
mod parse;

use proc_macro::TokenStream;

/// Turns a function into a tool. See the `prism` crate's documentation.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::function::expand(args.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an impl block into tools sharing one `Arc<Self>`. See the
/// `prism` crate's documentation.
#[proc_macro_attribute]
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::impl_block::expand(args.into(), item.into()).into()
}

/// Makes a struct whose fields are the arguments into a tool whose body is its `run` method.
/// See the `prism` crate's documentation.
#[proc_macro_derive(Tool, attributes(tool))]
pub fn derive_tool(item: TokenStream) -> TokenStream {
    expand::derive::expand(item.into()).into()
}
