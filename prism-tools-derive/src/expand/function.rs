//! `#[tool]` on a free function.
//!
//! The function is emitted unchanged (minus the parameter attributes the macro consumed), so it
//! stays callable as written. Beside it goes a braced struct with the *same name*: a function
//! lives in the value namespace and a braced struct only in the type namespace, so the two do not
//! clash, and `add::definition()` finds the struct wherever `add` is in scope, including inside
//! another function's body. Everything else (the argument struct, the private type that
//! implements `Tool`) hides inside `definition`, where the argument and output types may be
//! private to the module without leaking through a public impl.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::{Attribute, FnArg, Item, ItemFn};

use super::fn_tool::{self, Invocation};
use super::tool_impl::{CratePaths, Holds, definition_fn, respan, tool_struct};
use super::with_errors;
use crate::attr::{Site, ToolAttrs};
use crate::check;
use crate::errors::Errors;
use crate::param::strip_consumed_attrs;
use crate::parse::ToolFn;

/// Expands `#[tool(args)] item`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let function = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(function)) => function,
        Ok(Item::Struct(item)) => {
            errors.at(
                &item.ident,
                "`#[tool]` goes on a function; for a struct whose fields are the arguments, write `#[derive(Tool)]` first and put `#[tool(...)]` after it",
            );
            return with_errors(errors, item.into_token_stream());
        }
        Ok(Item::Impl(item)) => {
            errors.at(
                item.impl_token,
                "`#[tool]` goes on a function; on an impl block, write `#[tools]` and mark each tool method with `#[tool]`",
            );
            return with_errors(errors, item.into_token_stream());
        }
        Ok(other) => {
            errors.at(&other, "`#[tool]` goes on a function (`fn` or `async fn`)");
            return with_errors(errors, other.into_token_stream());
        }
        Err(error) => {
            errors.push(error);
            return with_errors(errors, item);
        }
    };

    let keys = ToolAttrs::parse(args, Site::Function, &mut errors);
    let paths = CratePaths::new(keys.krate.as_ref());
    let tool = ToolFn::parse(
        keys,
        &function.attrs,
        &function.sig,
        Site::Function,
        None,
        &mut errors,
    );
    let identity = check::identity(&tool.keys, &tool.docs, &tool.ident, &mut errors);
    let state_type = match tool.keys.state {
        Some(_) => check::StateType::Given,
        None => check::StateType::FromParameter,
    };
    let state = tool
        .keys
        .state
        .clone()
        .or(check::params(&tool.params, state_type, &mut errors));
    let emitted = strip(&function);

    if !errors.is_empty() {
        // Keep the function and a `definition` of the right shape, so that the only errors the
        // user sees are the ones above, not "cannot find `add`" at every call site.
        let fallback = (!tool.has_receiver).then(|| fallback(&paths, &function, state.is_some()));
        return with_errors(errors, quote!(#emitted #fallback));
    }

    let p = paths.private();
    let ident = &function.sig.ident;
    let vis = &function.vis;
    let holds = if state.is_some() {
        Holds::Shared
    } else {
        Holds::Nothing
    };
    let tool_impl = fn_tool::expand(
        &paths,
        &tool,
        &identity,
        quote!(#ident),
        &Invocation {
            path: quote!(#ident),
            receiver: None,
            holds,
        },
        &fn_tool::args_struct_ident(0),
    );
    let parameter = state
        .as_ref()
        .map(|ty| quote!(state: impl ::core::convert::Into<::std::sync::Arc<#ty>>));
    let tool_struct = tool_struct(ident, &[], holds);
    // A type that does not qualify is reported here, where the tool is instantiated: at the
    // function's name.
    let shared = quote!(::core::convert::Into::into(state));
    let tool_value = respan(holds.instantiate(&quote!(#ident), shared), ident.span());
    let definition = definition_fn(&paths, fn_tool::has_extractors(&tool), ident.span());
    let instantiate = quote_spanned!(ident.span()=> #definition(#tool_value));
    let struct_doc = format!(
        "The tool `{}`, made from the function `{ident}` by `#[tool]`: `{ident}::definition` returns its definition.",
        identity.name
    );
    let forwarded = forwarded_attrs(&function.attrs);
    quote! {
        #emitted

        #(#forwarded)*
        #[doc = #struct_doc]
        #[allow(non_camel_case_types)]
        #vis struct #ident {}

        #(#forwarded)*
        // Calling a `#[deprecated]` tool function is the tool's own business, not a use.
        #[allow(deprecated)]
        impl #ident {
            /// The tool's definition, ready to register.
            #vis fn definition(#parameter) -> #p::ToolDefinition {
                // The type implementing `Tool` lives in here, private, under the function's
                // name: the argument and output types may be private to the module, and
                // diagnostics name the tool.
                #[allow(non_camel_case_types)]
                #tool_struct
                #tool_impl
                #instantiate
            }
        }
    }
}

/// The function without the parameter attributes only the macro understands.
fn strip(function: &ItemFn) -> ItemFn {
    let mut emitted = function.clone();
    for input in &mut emitted.sig.inputs {
        if let FnArg::Typed(typed) = input {
            strip_consumed_attrs(typed);
        }
    }
    emitted
}

/// `#[cfg]` and `#[allow]` of the function, repeated on what is generated beside it: a function
/// compiled out takes its tool with it.
pub fn forwarded_attrs(attrs: &[Attribute]) -> Vec<&Attribute> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg") || attr.path().is_ident("allow"))
        .collect()
}

fn fallback(paths: &CratePaths, function: &ItemFn, stateful: bool) -> TokenStream {
    let p = paths.private();
    let ident = &function.sig.ident;
    let vis = &function.vis;
    let parameter = stateful.then(|| quote!(_state: impl ::core::marker::Sized));
    let forwarded = forwarded_attrs(&function.attrs);
    quote! {
        #(#forwarded)*
        #[allow(non_camel_case_types)]
        #vis struct #ident {}

        #(#forwarded)*
        impl #ident {
            #[allow(dead_code)]
            #vis fn definition(#parameter) -> #p::ToolDefinition {
                ::core::unreachable!("`#[tool]` reported errors, so this crate does not compile")
            }
        }
    }
}
