//! `#[tools]` on an impl block: each `#[tool]` method becomes a tool over one shared `Arc<Self>`.
//!
//! The block is emitted with the `#[tool]` markers removed, so the methods stay ordinary
//! methods. A hidden `const _` block holds, per tool, an argument struct and a tool type holding
//! the `Arc<Self>`, plus one generated method (`tools`, or the `name` given to `#[tools]`) that
//! returns every definition. Two impl blocks of one type pick different names.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Attribute, FnArg, ImplItem, ItemImpl};

use super::fn_tool::{self, Invocation};
use super::tool_impl::{self, CratePaths, Holds};
use super::{replace_self, replace_self_in_keys, with_errors};
use crate::attr::{Site, ToolAttrs, ToolsAttrs};
use crate::check;
use crate::errors::Errors;
use crate::param::strip_consumed_attrs;
use crate::parse::ToolFn;

/// Expands `#[tools(args)] impl … { … }`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let mut block = match syn::parse2::<ItemImpl>(item.clone()) {
        Ok(block) => block,
        Err(_) => {
            errors.push(syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[tools]` goes on an impl block whose methods are marked `#[tool]`",
            ));
            return with_errors(errors, item);
        }
    };
    let keys = ToolsAttrs::parse(args, &mut errors);
    let paths = CratePaths::new(keys.krate.as_ref());
    let method_name = keys.name.unwrap_or_else(|| format_ident!("tools"));
    if let Some((_, path, _)) = &block.trait_ {
        errors.at(
            path,
            "`#[tools]` goes on an inherent impl block (`impl MyType { … }`), not on a trait implementation",
        );
    }
    if !block.generics.params.is_empty() || block.generics.where_clause.is_some() {
        errors.at(
            &block.generics,
            "`#[tools]` cannot expand a generic impl block: each tool needs a concrete `Self`; write the block for a concrete type, or implement `prism::Tool` by hand",
        );
    }

    let self_ty = (*block.self_ty).clone();
    let mut tools = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(position) = method.attrs.iter().position(is_tool_marker) else {
            continue;
        };
        let marker = method.attrs.remove(position);
        let mut tool_keys =
            ToolAttrs::parse(marker_args(&marker, &mut errors), Site::Method, &mut errors);
        replace_self_in_keys(&self_ty, &mut tool_keys);
        let mut tool = ToolFn::parse(
            tool_keys,
            &method.attrs,
            &method.sig,
            Site::Method,
            Some(&self_ty),
            &mut errors,
        );
        let identity = check::identity(&tool.keys, &tool.docs, &tool.ident, &mut errors);
        // The state is `Self`: a `State<T>` parameter is a part of it (`T: FromState<Self>`).
        check::params(&tool.params, check::StateType::Given, &mut errors);
        for input in &mut method.sig.inputs {
            if let FnArg::Typed(typed) = input {
                strip_consumed_attrs(typed);
            }
        }
        // The generated items sit outside the impl block, where `Self` means nothing.
        for param in &mut tool.params {
            replace_self(&self_ty, &mut param.ty);
        }
        if let crate::parse::Output::Value(ty) | crate::parse::Output::Result(ty) = &mut tool.output
        {
            replace_self(&self_ty, ty);
        }
        let cfgs = crate::attr::cfg_attrs(&method.attrs);
        tools.push((tool, identity, cfgs));
    }
    // The registry keeps one tool per name: a second one here would replace the first unseen.
    // Methods under different `#[cfg]`s may share a name (at most one is compiled).
    for (at, (tool, identity, cfgs)) in tools.iter().enumerate() {
        let cfg_text = quote!(#(#cfgs)*).to_string();
        if let Some((first, _, _)) = tools[..at].iter().find(|(_, earlier, earlier_cfgs)| {
            earlier.name == identity.name && quote!(#(#earlier_cfgs)*).to_string() == cfg_text
        }) {
            errors.at(
                &tool.ident,
                format!(
                    "two tools of this block are named `{}` (the first is `{}`): a registry keeps one tool per name, so give this one its own with `#[tool(name = \"…\")]`",
                    identity.name, first.ident
                ),
            );
        }
    }
    if tools.is_empty() && errors.is_empty() {
        errors.at(
            &block.self_ty,
            "this `#[tools]` impl block has no tool: mark the methods the model may call with `#[tool]`",
        );
    }

    let p = paths.private();
    if !errors.is_empty() {
        let fallback = quote! {
            impl #self_ty {
                #[allow(dead_code)]
                pub fn #method_name(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<#p::ToolDefinition> {
                    ::core::unreachable!("`#[tools]` reported errors, so this crate does not compile")
                }
            }
        };
        return with_errors(errors, quote!(#block #fallback));
    }

    let mut items = Vec::new();
    let mut constructors = Vec::new();
    let mut names = Vec::new();
    for (index, (tool, identity, cfgs)) in tools.iter().enumerate() {
        let tool_struct = format_ident!("__PrismTool{}", index);
        let method = &tool.ident;
        let tool_impl = fn_tool::expand(
            &paths,
            tool,
            identity,
            quote!(#tool_struct),
            &Invocation {
                path: quote!(<#self_ty>::#method),
                receiver: tool.has_receiver.then(|| quote!(#self_ty)),
                holds: Holds::Shared,
            },
            &fn_tool::args_struct_ident(index),
        );
        // A method compiled out by `#[cfg]` takes its tool with it.
        let definition = tool_impl::tool_struct(&tool_struct, cfgs, Holds::Shared);
        items.push(quote! {
            #definition
            #(#cfgs)*
            #[allow(deprecated)]
            const _: () = {
                #tool_impl
            };
        });
        let definition =
            tool_impl::definition_fn(&paths, fn_tool::has_extractors(tool), Span::call_site());
        constructors.push(quote! {
            #(#cfgs)*
            definitions.push(#definition(#tool_struct {
                __state: ::std::sync::Arc::clone(&self),
            }));
        });
        names.push(format!("`{}`", identity.name));
    }
    let doc = format!(
        "The definitions of the tools {} (generated by `#[tools]`). They share this `Arc`.",
        names.join(", ")
    );
    quote! {
        #block

        const _: () = {
            #(#items)*

            impl #self_ty {
                #[doc = #doc]
                #[allow(clippy::vec_init_then_push)]
                pub fn #method_name(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<#p::ToolDefinition> {
                    let mut definitions = ::std::vec::Vec::new();
                    #(#constructors)*
                    definitions
                }
            }
        };
    }
}

/// `#[tool]`, `#[tool(...)]` or `#[prism::tool(...)]`.
fn is_tool_marker(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "tool")
}

fn marker_args(attr: &Attribute, errors: &mut Errors) -> TokenStream {
    match &attr.meta {
        syn::Meta::Path(_) => TokenStream::new(),
        syn::Meta::List(list) => list.tokens.clone(),
        syn::Meta::NameValue(pair) => {
            errors.at(pair, "write `#[tool]` or `#[tool(key = value, ...)]`");
            TokenStream::new()
        }
    }
}
