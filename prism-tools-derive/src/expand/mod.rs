//! Generation: turns a checked tool into tokens. Runs only when parsing and checking found no
//! error; each form has its own file, and all of them end in [`tool_impl`].

pub mod derive;
pub mod fn_tool;
pub mod function;
pub mod impl_block;
pub mod tool_impl;

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::Type;
use syn::parse::Parse;

use crate::attr::{Effect, ToolAttrs};
use crate::errors::Errors;

/// The collected errors followed by `item`, which still compiles on its own so that the user
/// sees the real mistakes and nothing that follows from them.
pub fn with_errors(errors: Errors, item: TokenStream) -> TokenStream {
    let errors = errors.into_compile_errors();
    quote!(#errors #item)
}

/// The keys' expressions end up in the generated `Tool` impl, where `Self` is the hidden tool
/// type: `description = Self::HELP` means the user's type, `self_ty`.
pub fn replace_self_in_keys(self_ty: &Type, keys: &mut ToolAttrs) {
    if let Some(description) = &mut keys.description {
        replace_self(self_ty, description);
    }
    if let Some(Effect::Policy(policy)) = &mut keys.effect {
        replace_self(self_ty, policy);
    }
}

/// Replaces `Self` in a type or an expression by `self_ty`: `Self::X` becomes `<Type>::X`, any
/// other `Self` becomes `Type`. It works on tokens, so `Self` inside a macro call such as
/// `format!("{}", Self::NAME)` is replaced too. When the result does not parse as the same kind
/// of node (a struct literal of a generic type, say), the original is kept, so the compiler
/// reports it as written.
pub fn replace_self<T: Parse + ToTokens>(self_ty: &Type, node: &mut T) {
    if let Ok(replaced) = syn::parse2(replace_self_in_tokens(self_ty, node.to_token_stream())) {
        *node = replaced;
    }
}

fn replace_self_in_tokens(self_ty: &Type, tokens: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            TokenTree::Ident(ident) if ident == "Self" => {
                let before_path =
                    matches!(iter.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                if before_path {
                    out.extend(quote_spanned!(ident.span()=> <#self_ty>));
                } else {
                    out.extend(self_ty.to_token_stream());
                }
            }
            TokenTree::Group(group) => {
                let mut replaced = proc_macro2::Group::new(
                    group.delimiter(),
                    replace_self_in_tokens(self_ty, group.stream()),
                );
                replaced.set_span(group.span());
                out.push(TokenTree::Group(replaced));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}
