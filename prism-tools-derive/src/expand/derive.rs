//! `#[derive(Tool)]`: a struct whose fields are the arguments, and whose `run` method is the body.
//!
//! The struct itself is the argument type, so it derives `Deserialize` and `JsonSchema` itself,
//! with `#[serde(deny_unknown_fields)]`. The derive adds a hidden tool type and an inherent
//! `definition()` to the struct. `run` is `async fn run(self, ctx: ToolExecutionContext)`
//! returning a `Result` (plus `state: State<S>` with `#[tool(state = S)]`): a derive cannot see
//! the method, so its shape is fixed.

use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Meta};

use super::tool_impl::{Body, CratePaths, Holds, ToolImpl, call_idents, state_param, tool_struct};
use super::{replace_self_in_keys, with_errors};
use crate::attr::{Site, ToolAttrs, skip_value};
use crate::check;
use crate::docs;
use crate::errors::Errors;

/// Expands `#[derive(Tool)]` on `item`.
pub fn expand(item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let input = match syn::parse2::<DeriveInput>(item) {
        Ok(input) => input,
        Err(error) => {
            errors.push(error);
            return errors.into_compile_errors();
        }
    };
    let mut key_tokens = Vec::new();
    for attr in input
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("tool"))
    {
        match &attr.meta {
            Meta::List(list) => key_tokens.push(list.tokens.clone()),
            Meta::Path(_) => {}
            Meta::NameValue(pair) => errors.at(pair, "write `#[tool(key = value, ...)]`"),
        }
    }
    let mut keys = ToolAttrs::parse(quote!(#(#key_tokens),*), Site::Struct, &mut errors);
    let ident = &input.ident;
    replace_self_in_keys(&syn::parse_quote!(#ident), &mut keys);
    if keys.name.is_none() {
        // A type is `GetWeather`; a tool is `get_weather`.
        keys.name = Some(LitStr::new(
            &ident.to_string().to_snake_case(),
            ident.span(),
        ));
    }
    let paths = CratePaths::new(keys.krate.as_ref());
    let identity = check::identity(&keys, &docs::collect(&input.attrs), ident, &mut errors);
    check_shape(&input, &mut errors);
    check_field_attrs(&input, &mut errors);

    let p = paths.private();
    let vis = &input.vis;
    let parameter = keys
        .state
        .as_ref()
        .map(|state| quote!(state: impl ::core::convert::Into<::std::sync::Arc<#state>>));
    if !errors.is_empty() {
        let fallback = quote! {
            impl #ident {
                #[allow(dead_code)]
                #vis fn definition(#parameter) -> #p::ToolDefinition {
                    ::core::unreachable!("`#[derive(Tool)]` reported errors, so this crate does not compile")
                }
            }
        };
        return with_errors(errors, fallback);
    }

    let (args, ctx) = call_idents();
    let state = state_param();
    let mut predicates = Vec::new();
    let (holds, extraction, state_arg) = match &keys.state {
        Some(state_ty) => {
            predicates.push(quote_spanned!(state_ty.span()=> #state_ty: #p::FromState<#state>));
            (
                Holds::Shared,
                Some(quote! {
                    let state = #p::State::<#state_ty>::from_state(&self.__state);
                }),
                Some(quote!(, state)),
            )
        }
        None => (Holds::Nothing, None, None),
    };
    let run = quote_spanned!(ident.span()=> <#ident>::run);
    let args_ty = quote_spanned!(ident.span()=> #p::WholeArguments<#state, #ident>);
    predicates.push(quote!(#args_ty: #p::ToolArguments));
    let tool_impl = ToolImpl {
        paths: &paths,
        tool_ty: quote!(__PrismTool),
        predicates,
        identity: &identity,
        keys: &keys,
        args_ty: args_ty.clone(),
        output_schema: None,
        parameters_fn: syn::parse_quote!(derived_parameters),
        reads_context: true,
        body: Body::Call(quote! {
            async move {
                #extraction
                #p::run_derived(<Self as #p::Tool>::NAME, #run(#args.0, #ctx #state_arg)).await
            }
        }),
    }
    .to_tokens();
    let tool_struct = tool_struct(&syn::parse_quote!(__PrismTool), &[], holds);
    let tool_value = holds.instantiate(
        &quote!(__PrismTool),
        quote!(::core::convert::Into::into(state)),
    );
    quote! {
        const _: () = {
            #tool_struct
            #tool_impl

            impl #ident {
                /// The tool's definition, ready to register.
                #vis fn definition(#parameter) -> #p::ToolDefinition {
                    #p::definition(#tool_value)
                }
            }
        };
    }
}

/// `#[tool]` is a helper of the derive, so the compiler accepts it on a field too, where it
/// would mean nothing: it is refused there, pointing at the struct it belongs on. (An enum or a
/// union is refused whole by [`check_shape`].)
fn check_field_attrs(input: &DeriveInput, errors: &mut Errors) {
    let Data::Struct(data) = &input.data else {
        return;
    };
    let ident = &input.ident;
    for field in &data.fields {
        for attr in field
            .attrs
            .iter()
            .filter(|attr| attr.path().is_ident("tool"))
        {
            errors.at(
                attr,
                format_args!(
                    "`#[tool]` on a field means nothing: the tool's keys go on the struct `{ident}`, after `#[derive(Tool)]`; an argument is described by its doc comment, and its JSON is shaped by `#[serde(...)]` or `#[schemars(...)]`"
                ),
            );
        }
    }
}

/// A non-generic struct with named fields that denies unknown fields.
fn check_shape(input: &DeriveInput, errors: &mut Errors) {
    let ident: &Ident = &input.ident;
    match &input.data {
        Data::Struct(data) if matches!(data.fields, Fields::Named(_)) => {}
        // serde reads a unit struct only from `null`, and arguments are always an object.
        Data::Struct(data) if matches!(data.fields, Fields::Unit) => {
            errors.at(
                ident,
                format!(
                    "`#[derive(Tool)]` needs braces on a tool without arguments: write `struct {ident} {{}}`, which reads the `{{}}` the model sends (a unit struct reads only `null`)"
                ),
            );
            return;
        }
        _ => {
            errors.at(
                ident,
                "`#[derive(Tool)]` needs a struct with named fields: the fields are the arguments the model fills in",
            );
            return;
        }
    }
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        errors.at(
            &input.generics,
            "`#[derive(Tool)]` cannot expand a generic struct: its schema needs concrete types; implement `prism::Tool` by hand for a generic tool",
        );
    }
    let denies_unknown = input
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("serde"))
        .any(|attr| {
            let mut found = false;
            // serde reports malformed attributes itself.
            let _ = attr.parse_nested_meta(|meta| {
                found |= meta.path.is_ident("deny_unknown_fields");
                skip_value(&meta)
            });
            found
        });
    if !denies_unknown {
        errors.at(
            ident,
            "add `#[serde(deny_unknown_fields)]` to this struct: the schema then tells the model `additionalProperties: false`, and a misspelt argument fails the call instead of being ignored",
        );
    }
}
