//! What a tool function (free or method) expands to inside its hidden `const _` block: the
//! argument struct, the requirements on the user's types, and the body of `call`.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

use super::tool_impl::{Body, CratePaths, Holds, ToolImpl, call_idents, state_param};
use crate::check::Identity;
use crate::param::{Argument, Context, Decoding, ParamKind};
use crate::parse::{Output, ToolFn};

/// How the generated `call` reaches the user's function.
pub struct Invocation {
    /// `add`, or `<Calculator>::add`.
    pub path: TokenStream,
    /// `Self` for `&self` methods: the shared `Arc<Self>` is passed first.
    pub receiver: Option<TokenStream>,
    /// What the tool type holds of its state.
    pub holds: Holds,
}

/// Expands one tool function whose `Tool` impl is for the tool type `tool_ty`.
pub fn expand(
    paths: &CratePaths,
    tool: &ToolFn,
    identity: &Identity,
    tool_ty: TokenStream,
    invocation: &Invocation,
    args_struct: &Ident,
) -> TokenStream {
    let p = paths.private();
    let state = state_param();
    let (args, ctx) = call_idents();

    let mut predicates: Vec<TokenStream> = invocation.holds.predicate(paths).into_iter().collect();
    let state_ref = invocation.holds.state_ref(paths);
    let mut args_struct_parts = ArgsStruct::default();
    // Parts of the state, taken in the body (they cannot fail); `#[ctx]` extractors, run when
    // the call is prepared, each with the local its value is bound to.
    let mut state_parts = Vec::new();
    let mut extractors: Vec<(&syn::Type, Ident)> = Vec::new();
    let mut call_args = Vec::new();
    let mut whole = None;
    if let Some(self_ty) = &invocation.receiver {
        // The impl is generic over its state; `Borrow` is how it knows the state is `Self`.
        predicates.push(quote!(#state: ::core::borrow::Borrow<#self_ty>));
        call_args.push(quote!(::core::borrow::Borrow::<#self_ty>::borrow(&*self.__state)));
    }
    for (index, param) in tool.params.iter().enumerate() {
        let ty = &param.ty;
        let cfgs = &param.cfgs;
        let local = Ident::new(&format!("__prism_param_{index}"), Span::mixed_site());
        match &param.kind {
            ParamKind::Argument(argument) => {
                // Checked with the others through the argument struct; this clause only makes
                // the compiler point at this parameter when its type does not qualify. A
                // where-clause cannot carry `#[cfg]`, so a parameter under one goes without.
                if cfgs.is_empty() {
                    let at = paths.private_at(ty.span());
                    predicates.push(quote_spanned!(ty.span()=> #at::WholeArguments<#state, #ty>: #at::ToolArguments));
                }
                args_struct_parts.field(paths, &param.ident, ty, argument, &local, cfgs);
                call_args.push(quote!(#(#cfgs)* #local));
            }
            ParamKind::WholeArguments => {
                whole = Some(ty);
                call_args.push(quote!(#(#cfgs)* #args.0));
            }
            ParamKind::Context(Context::Execution { by_ref: false }) => {
                call_args.push(quote!(#(#cfgs)* #ctx))
            }
            ParamKind::Context(Context::Execution { by_ref: true }) => {
                call_args.push(quote!(#(#cfgs)* &#ctx))
            }
            ParamKind::Context(Context::State { inner }) => {
                let at = paths.private_at(inner.span());
                predicates.push(quote_spanned!(inner.span()=> #inner: #at::FromState<#state>));
                state_parts.push(quote! {
                    let #local = #p::State::<#inner>::from_state(#state_ref);
                });
                call_args.push(quote!(#local));
            }
            ParamKind::Context(Context::Extractor) => {
                let at = paths.private_at(ty.span());
                predicates.push(quote_spanned!(ty.span()=> #ty: #at::FromToolContext<#state>));
                extractors.push((ty, local.clone()));
                call_args.push(quote!(#local));
            }
        }
    }

    let name = &identity.name;
    let (args_ty, args_item, unpack) = match whole {
        Some(ty) => (
            quote_spanned!(ty.span()=> #p::WholeArguments<#state, #ty>),
            None,
            None,
        ),
        None => {
            let (item, args_ty) = args_struct_parts.item(paths, args_struct, name);
            let bindings = &args_struct_parts.bindings;
            let unpack = quote!(let #args_struct { #(#bindings,)* .. } = #args;);
            (args_ty, Some(item), Some(unpack))
        }
    };
    // The one requirement on the arguments, checked where the tool is instantiated.
    predicates.push(quote!(#args_ty: #p::ToolArguments));

    let path = &invocation.path;
    let awaited = tool.is_async.then(|| quote!(.await));
    let call = quote!(#path(#(#call_args),*) #awaited);
    // The body ends in `serialized`, which requires the value to be serialisable: the compiler
    // blames a failed bound on the argument, so the value is named at the return type, and the
    // error points there rather than at the attribute.
    let (value_ty, result) = match &tool.output {
        Output::Unit => (None, quote!(#p::serialized(#name, #p::returned(#call)))),
        Output::Value(ty) => {
            let at = paths.private_at(ty.span());
            let value = returned_ident(ty);
            // A `Result` under another name is refused here, at the return type: it would
            // otherwise be serialised whole, its `Err` a success.
            let probe = quote_spanned!(ty.span()=> {
                #[allow(unused_imports)]
                use #at::{ReturnsResultAlias as _, ReturnsValue as _};
                #at::plain_value((&&#at::ReturnProbe::<#ty>::new()).kind());
            });
            (
                Some(ty.to_token_stream()),
                quote!({
                    #probe
                    let #value = #p::returned(#call);
                    #at::serialized(#name, #value)
                }),
            )
        }
        Output::Result(ty) => {
            let at = paths.private_at(ty.span());
            let value = returned_ident(ty);
            (
                Some(quote_spanned!(ty.span()=> <#ty as #at::ResultReturn>::Ok)),
                quote!({
                    let #value = #call;
                    let #value = #at::returned_result(#value);
                    #at::serialized(#name, #value)
                }),
            )
        }
    };

    let async_body = quote! {
        async move {
            #unpack
            #(#state_parts)*
            #result
        }
    };
    let tool_impl = ToolImpl {
        paths,
        tool_ty,
        predicates,
        identity,
        keys: &tool.keys,
        args_ty,
        output_schema: value_ty,
        parameters_fn: format_ident!("parameters_for"),
        reads_context: tool.params.iter().any(|param| {
            matches!(
                param.kind,
                ParamKind::Context(Context::Execution { .. } | Context::Extractor)
            )
        }),
        body: body(paths, invocation.holds, &extractors, async_body),
    }
    .to_tokens();
    quote! {
        #args_item
        #tool_impl
    }
}

/// The local a generated body names the function's result by, spanned at the return type.
fn returned_ident(ty: &syn::Type) -> Ident {
    Ident::new(
        "__prism_returned",
        ty.span().resolved_at(Span::mixed_site()),
    )
}

/// Whether the tool takes `#[ctx]` extractors: its definition then runs its `prepare`.
pub fn has_extractors(tool: &ToolFn) -> bool {
    tool.params
        .iter()
        .any(|param| matches!(param.kind, ParamKind::Context(Context::Extractor)))
}

/// The tool's body. Without extractors, `call` returns `async_body`. With them, `prepare` runs
/// each extractor in parameter order, pairs their values (`((first, second), third)`), and makes
/// `async_body` from them: at once when every extractor answered at once, when the last pending
/// one answers otherwise. The body is written once, for both cases.
fn body(
    paths: &CratePaths,
    holds: Holds,
    extractors: &[(&syn::Type, Ident)],
    async_body: TokenStream,
) -> Body {
    let Some(((first_ty, first), rest)) = extractors.split_first() else {
        return Body::Call(async_body);
    };
    let p = paths.private();
    let state = state_param();
    let state_ref = holds.state_ref(paths);
    let (_, ctx) = call_idents();
    let extracted = Ident::new("__prism_extracted", Span::mixed_site());
    let mut steps = vec![quote! {
        let #extracted = #p::extract::<#state, #first_ty>(&#ctx, #state_ref);
    }];
    let mut pattern = first.to_token_stream();
    for (ty, local) in rest {
        steps.push(quote! {
            let #extracted = #p::extract_next::<#state, #ty, _>(#extracted, &#ctx, #state_ref);
        });
        pattern = quote!((#pattern, #local));
    }
    Body::Prepare(quote! {
        #(#steps)*
        #p::with_extracted(#extracted, move |#pattern| #async_body)
    })
}

/// What the generated decoder needs of one field.
struct DecodedField {
    name: Ident,
    json_name: String,
    /// The field's type: its type parameter, or the written type.
    ty: TokenStream,
    cfgs: Vec<syn::Attribute>,
}

/// The hidden argument struct: one field per argument, generic over the field types.
#[derive(Default)]
struct ArgsStruct {
    generics: Vec<Ident>,
    bounds: Vec<String>,
    /// The struct's type arguments, in the order of `generics`.
    type_args: Vec<TokenStream>,
    fields: Vec<TokenStream>,
    bindings: Vec<TokenStream>,
    /// Each field, for the generated decoder.
    decoded: Vec<DecodedField>,
    /// Some field carries serde attributes the generated decoder does not handle: serde's
    /// derive decodes the struct.
    needs_serde: bool,
}

impl ArgsStruct {
    fn field(
        &mut self,
        paths: &CratePaths,
        name: &Ident,
        ty: &syn::Type,
        argument: &Argument,
        local: &Ident,
        cfgs: &[syn::Attribute],
    ) {
        let attrs = &argument.field_attrs;
        let field_ty = match argument.decoding {
            Decoding::Generic => {
                // Types have no hygiene: a user type called `T0` in another field's type
                // would name this parameter instead, hence the unlikely name.
                let generic = format_ident!("__PrismArg{}", self.generics.len());
                self.bounds.push(format!(
                    "{generic}: {}::ToolArgument",
                    paths.private_path_string()
                ));
                self.type_args.push(ty.to_token_stream());
                self.generics.push(generic.clone());
                generic.to_token_stream()
            }
            Decoding::Concrete => ty.to_token_stream(),
        };
        self.needs_serde |= !argument.plain;
        self.fields
            .push(quote!(#(#cfgs)* #(#attrs)* #name: #field_ty));
        self.bindings.push(quote!(#(#cfgs)* #name: #local));
        self.decoded.push(DecodedField {
            name: name.clone(),
            json_name: argument.json_name.clone(),
            ty: field_ty,
            cfgs: cfgs.to_vec(),
        });
    }

    /// The struct's definition and the type the `Tool` impl names.
    fn item(&self, paths: &CratePaths, name: &Ident, tool: &str) -> (TokenStream, TokenStream) {
        let p = paths.private();
        let crate_attrs = paths.derive_crate_attrs();
        let bound = self.bounds.join(", ");
        let ArgsStruct {
            generics,
            type_args,
            fields,
            ..
        } = self;
        let state = state_param();
        let marker = quote! {
            #[serde(skip)]
            #[schemars(skip)]
            __prism_state_marker: ::core::marker::PhantomData<fn() -> ::std::boxed::Box<#state>>,
        };
        let item = if self.needs_serde {
            quote! {
                #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
                #crate_attrs
                #[serde(deny_unknown_fields, bound(deserialize = #bound))]
                #[schemars(bound = #bound)]
                pub struct #name<#state: ?::core::marker::Sized, #(#generics),*> {
                    #(#fields,)*
                    #marker
                }

                impl<#state: ?::core::marker::Sized, #(#generics: #p::ToolArgument),*> #p::DecodeArguments
                    for #name<#state, #(#generics),*>
                {
                    fn decode(
                        tool: &str,
                        arguments: &#p::Value,
                    ) -> ::core::result::Result<Self, #p::Refusal> {
                        #p::decode_with_serde(tool, arguments)
                    }
                }
            }
        } else {
            let decoder = self.decoder(paths, name);
            quote! {
                #[derive(#p::schemars::JsonSchema)]
                #crate_attrs
                #[serde(deny_unknown_fields)]
                #[schemars(bound = #bound)]
                pub struct #name<#state: ?::core::marker::Sized, #(#generics),*> {
                    #(#fields,)*
                    #marker
                }

                #decoder

                impl<'de, #state: ?::core::marker::Sized, #(#generics: #p::ToolArgument),*>
                    #p::serde::Deserialize<'de> for #name<#state, #(#generics),*>
                {
                    fn deserialize<D: #p::serde::Deserializer<'de>>(
                        deserializer: D,
                    ) -> ::core::result::Result<Self, D::Error> {
                        #p::deserialize_decoded(#tool, deserializer)
                    }
                }
            }
        };
        (item, quote!(#name<#state, #(#type_args),*>))
    }

    /// `DecodeArguments` for a struct whose fields are all type parameters without serde
    /// attributes: one pass over the object, each value decoded by `decode_field`.
    fn decoder(&self, paths: &CratePaths, name: &Ident) -> TokenStream {
        let p = paths.private();
        let state = state_param();
        let generics = &self.generics;
        let (tool, arguments) = (
            Ident::new("tool", Span::mixed_site()),
            Ident::new("arguments", Span::mixed_site()),
        );
        let (key, value) = (
            Ident::new("key", Span::mixed_site()),
            Ident::new("value", Span::mixed_site()),
        );
        let slots: Vec<Ident> = (0..self.decoded.len())
            .map(|index| Ident::new(&format!("__prism_slot_{index}"), Span::mixed_site()))
            .collect();
        let keys: Vec<&String> = self.decoded.iter().map(|field| &field.json_name).collect();
        let field_names: Vec<&Ident> = self.decoded.iter().map(|field| &field.name).collect();
        let field_tys: Vec<&TokenStream> = self.decoded.iter().map(|field| &field.ty).collect();
        let cfgs: Vec<TokenStream> = self
            .decoded
            .iter()
            .map(|field| {
                let cfgs = &field.cfgs;
                quote!(#(#cfgs)*)
            })
            .collect();
        quote! {
            impl<#state: ?::core::marker::Sized, #(#generics: #p::ToolArgument),*> #p::DecodeArguments
                for #name<#state, #(#generics),*>
            {
                fn decode(
                    #tool: &str,
                    #arguments: &#p::Value,
                ) -> ::core::result::Result<Self, #p::Refusal> {
                    #(#cfgs let mut #slots: ::core::option::Option<#field_tys> = ::core::option::Option::None;)*
                    for (#key, #value) in #p::arguments_object(#tool, #arguments)? {
                        match #key.as_str() {
                            #(#cfgs #keys => #slots = ::core::option::Option::Some(#p::decode_field(#tool, #key, #value)?),)*
                            _ => return ::core::result::Result::Err(#p::unknown_field(#tool, #key, &[#(#cfgs #keys),*])),
                        }
                    }
                    ::core::result::Result::Ok(Self {
                        #(#cfgs #field_names: match #slots {
                            ::core::option::Option::Some(#value) => #value,
                            ::core::option::Option::None => #p::missing_field(#tool, #keys)?,
                        },)*
                        __prism_state_marker: ::core::marker::PhantomData,
                    })
                }
            }
        }
    }
}

/// The identifier of the hidden argument struct of the tool at `index` in its block.
pub fn args_struct_ident(index: usize) -> Ident {
    format_ident!("__PrismArgs{}", index)
}
