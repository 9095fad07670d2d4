//! The `impl Tool for …` block every form of the macro ends in.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Attribute, Ident, Path};

use crate::attr::{Effect, ToolAttrs};
use crate::check::Identity;

/// Paths into the facade's `__private` module, through which the generated code reaches
/// everything it uses, so users need no dependency besides `prism`.
pub struct CratePaths {
    krate: Path,
}

impl CratePaths {
    /// `crate = …` when given, else `::prism`.
    pub fn new(krate: Option<&Path>) -> Self {
        Self {
            krate: krate.cloned().unwrap_or_else(|| syn::parse_quote!(::prism)),
        }
    }

    /// `<crate>::__private`.
    pub fn private(&self) -> TokenStream {
        let krate = &self.krate;
        quote!(#krate::__private)
    }

    /// `<crate>::__private`, every token at `span`: a type or call built from it is then
    /// reported at the user's code that `span` belongs to, not at the attribute.
    pub fn private_at(&self, span: Span) -> TokenStream {
        respan(self.private(), span)
    }

    /// The attributes that point serde's and schemars' derives at the re-exported crates.
    pub fn derive_crate_attrs(&self) -> TokenStream {
        let krate = self.krate_string();
        let serde = format!("{krate}::__private::serde");
        let schemars = format!("{krate}::__private::schemars");
        quote! {
            #[serde(crate = #serde)]
            #[schemars(crate = #schemars)]
        }
    }

    /// `<crate>::__private` as text, for attributes that take a path in a string.
    pub fn private_path_string(&self) -> String {
        format!("{}::__private", self.krate_string())
    }

    fn krate_string(&self) -> String {
        let leading = if self.krate.leading_colon.is_some() {
            "::"
        } else {
            ""
        };
        let segments: Vec<String> = self
            .krate
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        format!("{leading}{}", segments.join("::"))
    }
}

/// `tokens` with every span set to `span`, recursively.
pub fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

/// The argument and context parameters of the generated `call`. Mixed-site hygiene keeps them
/// apart from the user's own names: a tool called `ctx` still calls the user's function.
pub fn call_idents() -> (Ident, Ident) {
    (
        Ident::new("args", Span::mixed_site()),
        Ident::new("ctx", Span::mixed_site()),
    )
}

/// The type parameter every generated tool type has: the type of its shared state. The `Tool`
/// impl is generic over it so that its where-clauses are checked where the tool is instantiated
/// (see `prism_tools::macro_support`). Types have no hygiene, hence the unlikely name.
pub fn state_param() -> Ident {
    Ident::new("__PrismState", Span::call_site())
}

/// What a generated tool holds of its state. Each call clones the tool, so this is what a call
/// pays for it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// An `Arc` of the state (`State<T>`, `state = T`, a `#[tools]` block's `Self`): a call
    /// counts one more reference.
    Shared,
    /// Nothing: the tool has no state (its state type is `()`), and a call clones nothing.
    Nothing,
}

impl Holds {
    /// The requirement a tool holding nothing adds: its state type is `()`.
    pub fn predicate(self, paths: &CratePaths) -> Option<TokenStream> {
        let p = paths.private();
        let state = state_param();
        (self == Holds::Nothing).then(|| quote!(#state: #p::NoState))
    }

    /// The state as `&Arc<__PrismState>`, inside `call`.
    pub fn state_ref(self, paths: &CratePaths) -> TokenStream {
        let p = paths.private();
        let state = state_param();
        match self {
            Holds::Shared => quote!(&self.__state),
            Holds::Nothing => quote!(<#state as #p::NoState>::shared()),
        }
    }

    /// `<name> { __state: … }`, from `shared` (an `Arc` of the state) for a tool that holds one.
    pub fn instantiate(self, name: &TokenStream, shared: TokenStream) -> TokenStream {
        match self {
            Holds::Shared => quote!(#name { __state: #shared }),
            Holds::Nothing => quote!(#name::<()> { __state: ::core::marker::PhantomData }),
        }
    }
}

/// `struct <name><__PrismState: ?Sized> { __state: … }`, the private type that implements
/// `Tool`, with what it [`Holds`]. Only the generated `definition` instantiates it, with the
/// tool's state type. `Clone` is written out: a derive would ask for `__PrismState: Clone`.
/// `attrs` (a method's `#[cfg]`s) go on both items.
pub fn tool_struct(name: &Ident, attrs: &[Attribute], holds: Holds) -> TokenStream {
    let state = state_param();
    let (field, cloned) = match holds {
        Holds::Shared => (
            quote!(::std::sync::Arc<#state>),
            quote!(::std::sync::Arc::clone(&self.__state)),
        ),
        Holds::Nothing => (
            quote!(::core::marker::PhantomData<fn() -> ::std::sync::Arc<#state>>),
            quote!(::core::marker::PhantomData),
        ),
    };
    quote! {
        #(#attrs)*
        struct #name<#state: ?::core::marker::Sized> {
            __state: #field,
        }

        #(#attrs)*
        impl<#state: ?::core::marker::Sized> ::core::clone::Clone for #name<#state> {
            fn clone(&self) -> Self {
                Self { __state: #cloned }
            }
        }
    }
}

/// The body of a generated tool.
pub enum Body {
    /// The future `call` returns.
    Call(TokenStream),
    /// The body of `Tool::prepare`, an expression of type `Extracted<impl Future>`: the tool
    /// takes `#[ctx]` extractors, which run when the call is prepared.
    Prepare(TokenStream),
}

/// The function of `__private` that makes a generated tool's definition: with extractors, the
/// definition runs the tool's `prepare`.
pub fn definition_fn(paths: &CratePaths, extractors: bool, span: Span) -> TokenStream {
    let at = paths.private_at(span);
    if extractors {
        quote_spanned!(span=> #at::definition_with_extractors)
    } else {
        quote_spanned!(span=> #at::definition)
    }
}

/// Everything the `Tool` impl needs.
pub struct ToolImpl<'a> {
    pub paths: &'a CratePaths,
    /// The tool type's name; the impl adds its state parameter.
    pub tool_ty: TokenStream,
    /// Requirements on the user's types, each mentioning [`state_param`].
    pub predicates: Vec<TokenStream>,
    pub identity: &'a Identity,
    pub keys: &'a ToolAttrs,
    pub args_ty: TokenStream,
    /// The type whose schema is the output schema, if it is worth asking (not `()`).
    pub output_schema: Option<TokenStream>,
    /// The function of `__private` that makes the parameters' schema: `parameters_for`, or
    /// `derived_parameters` when the description would repeat the tool's.
    pub parameters_fn: Ident,
    /// The future `call` returns, built with the names from [`call_idents`]; for a tool with
    /// extractors, what `prepare` returns instead (an `Extracted` body), and `call` awaits it.
    pub body: Body,
    /// Whether the body reads the call's context (a context or extractor parameter does).
    pub reads_context: bool,
}

impl ToolImpl<'_> {
    pub fn to_tokens(&self) -> TokenStream {
        let p = self.paths.private();
        let ToolImpl {
            tool_ty,
            predicates,
            identity,
            args_ty,
            body,
            parameters_fn,
            ..
        } = self;
        let state = state_param();
        let name = &identity.name;
        let (args, ctx) = call_idents();
        let (call_body, prepare) = match body {
            Body::Call(body) => (body.clone(), None),
            Body::Prepare(body) => (
                quote!(#p::call_prepared(<Self as #p::Tool>::prepare(self, #args, #ctx))),
                Some(quote! {
                    fn prepare(
                        self,
                        #args: Self::Args,
                        #ctx: #p::ToolExecutionContext,
                    ) -> #p::Extracted<
                        impl ::core::future::Future<
                            Output = ::core::result::Result<Self::Output, Self::Error>,
                        > + ::core::marker::Send + 'static,
                    > {
                        #body
                    }
                }),
            ),
        };
        let description = &identity.description;
        let (args, ctx) = call_idents();
        let output_schema = self.output_schema.as_ref().map(|value_ty| {
            quote! {
                fn output_schema(&self) -> ::core::option::Option<#p::Value> {
                    static SCHEMA: ::std::sync::OnceLock<::core::option::Option<#p::Value>> =
                        ::std::sync::OnceLock::new();
                    #p::cached_output_schema(&SCHEMA, || {
                        use #p::{HasOutputSchema as _, NoOutputSchema as _};
                        (&&#p::OutputSchema::<#value_ty>::new()).output_schema()
                    })
                }
            }
        });
        let annotations = self.annotations();
        let exclusive = self.keys.exclusive.filter(|exclusive| *exclusive).map(|_| {
            quote! {
                fn exclusive(&self) -> bool {
                    true
                }
            }
        });
        let requires_approval = self
            .keys
            .requires_approval
            .filter(|requires| *requires)
            .map(|_| {
                quote! {
                    fn requires_approval(&self) -> bool {
                        true
                    }
                }
            });
        let untrusted_output = self
            .keys
            .untrusted_output
            .filter(|untrusted| *untrusted)
            .map(|_| {
                quote! {
                    fn untrusted_output(&self) -> bool {
                        true
                    }
                }
            });
        // Only said when `false`: the dispatcher then skips making the call's context.
        let reads_context = (!self.reads_context).then(|| {
            quote! {
                fn reads_context(&self) -> bool {
                    false
                }
            }
        });
        let effect = self.keys.effect.as_ref().map(|effect| {
            let policy = match effect {
                Effect::Default => {
                    quote!(<#p::EffectPolicy as ::core::default::Default>::default())
                }
                Effect::Policy(expression) => quote!(#expression),
            };
            quote! {
                fn effect(&self) -> ::core::option::Option<#p::EffectPolicy> {
                    ::core::option::Option::Some(#policy)
                }
            }
        });
        quote! {
            impl<#state> #p::Tool for #tool_ty<#state>
            where
                #state: ?::core::marker::Sized + ::core::marker::Send + ::core::marker::Sync + 'static,
                #(#predicates,)*
            {
                const NAME: &'static str = #name;
                type Args = #args_ty;
                type Output = #p::GeneratedOutput;
                type Error = #p::ToolError;

                fn description(&self) -> ::core::option::Option<::std::borrow::Cow<'static, str>> {
                    ::core::option::Option::Some(::std::borrow::Cow::Borrowed(#description))
                }

                fn parameters(&self) -> ::core::option::Option<#p::Value> {
                    static SCHEMA: ::std::sync::OnceLock<#p::Value> = ::std::sync::OnceLock::new();
                    #p::cached_parameters(&SCHEMA, #p::#parameters_fn::<#args_ty>)
                }

                #output_schema
                #annotations
                #exclusive
                #requires_approval
                #untrusted_output
                #effect
                #reads_context

                fn call(
                    self,
                    #args: Self::Args,
                    #ctx: #p::ToolExecutionContext,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<Self::Output, Self::Error>,
                > + ::core::marker::Send + 'static {
                    #call_body
                }

                #prepare
            }
        }
    }

    fn annotations(&self) -> Option<TokenStream> {
        let p = self.paths.private();
        let keys = self.keys;
        let hint = |value: Option<bool>| match value {
            Some(value) => quote!(::core::option::Option::Some(#value)),
            None => quote!(::core::option::Option::None),
        };
        if keys.title.is_none()
            && [
                keys.read_only,
                keys.destructive,
                keys.idempotent,
                keys.open_world,
            ]
            .iter()
            .all(Option::is_none)
        {
            return None;
        }
        let title = match &keys.title {
            Some(title) => quote!(::core::option::Option::Some(#title)),
            None => quote!(::core::option::Option::None),
        };
        let (read_only, destructive, idempotent, open_world) = (
            hint(keys.read_only),
            hint(keys.destructive),
            hint(keys.idempotent),
            hint(keys.open_world),
        );
        Some(quote! {
            fn annotations(&self) -> #p::ToolAnnotations {
                #p::annotations(#title, #read_only, #destructive, #idempotent, #open_world)
            }
        })
    }
}
