//! Generation: turns a checked tool into tokens. Runs only when parsing and checking found no
//! error; each form has its own file, and all of them end in [`tool_impl`].

pub mod derive;
pub mod fn_tool;
pub mod function;
pub mod impl_block;
pub mod tool_impl;

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::{Expr, Type};

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
        replace_self_in_expr(self_ty, description);
    }
    if let Some(Effect::Policy(policy)) = &mut keys.effect {
        replace_self_in_expr(self_ty, policy);
    }
}

/// Replaces `Self` in an expression by `self_ty`: `Self::X` becomes `<Type>::X` and
/// `<Self as Trait>` becomes `<Type as Trait>`. It works on tokens, so `Self` inside a macro
/// call such as `format!("{}", Self::NAME)` is replaced too.
fn replace_self_in_expr(self_ty: &Type, expr: &mut Expr) {
    let tokens = replace_self_in_tokens(self_ty, expr.to_token_stream());
    // The replacement is an expression whenever the original was; keep the original otherwise,
    // so the compiler reports it as written.
    if let Ok(replaced) = syn::parse2(tokens) {
        *expr = replaced;
    }
}

fn replace_self_in_tokens(self_ty: &Type, tokens: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            TokenTree::Ident(ident) if ident == "Self" => {
                let next = iter.peek();
                let before_path = matches!(next, Some(TokenTree::Punct(p)) if p.as_char() == ':');
                let before_as = matches!(next, Some(TokenTree::Ident(i)) if i == "as");
                if before_path {
                    out.extend(quote_spanned!(ident.span()=> <#self_ty>));
                } else if before_as {
                    out.extend(self_ty.to_token_stream());
                } else {
                    out.push(TokenTree::Ident(ident));
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
