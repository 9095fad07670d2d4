//! Generation: turns a checked tool into tokens. Runs only when parsing and checking found no
//! error; each form has its own file, and all of them end in [`tool_impl`].

pub mod derive;
pub mod fn_tool;
pub mod function;
pub mod impl_block;
pub mod tool_impl;

use proc_macro2::TokenStream;
use quote::quote;

use crate::errors::Errors;

/// The collected errors followed by `item`, which still compiles on its own so that the user
/// sees the real mistakes and nothing that follows from them.
pub fn with_errors(errors: Errors, item: TokenStream) -> TokenStream {
    let errors = errors.into_compile_errors();
    quote!(#errors #item)
}
