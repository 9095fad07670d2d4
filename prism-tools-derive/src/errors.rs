//! Collects every mistake found in one macro input, each with its own span, so a user fixes them
//! all from one compiler run instead of one per run.

use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// The errors found so far. Parsing and checking push into it and keep going; generation only
/// runs when it stayed empty.
#[derive(Default)]
pub struct Errors {
    found: Vec<syn::Error>,
}

impl Errors {
    /// Records `message` at the span of `tokens`.
    pub fn at(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.found.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error that already carries its span.
    pub fn push(&mut self, error: syn::Error) {
        self.found.push(error);
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// Every error as a `compile_error!` invocation at its span.
    pub fn into_compile_errors(self) -> TokenStream {
        self.found
            .into_iter()
            .map(|error| error.to_compile_error())
            .collect()
    }
}
