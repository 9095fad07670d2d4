//! One parameter of a tool function: an argument the model fills in, the whole argument object,
//! or a value taken from the call's context.
//!
//! Context parameters are recognised by the last segment of their type (`ToolExecutionContext`,
//! `State<T>`) or by `#[ctx]` on the parameter, for type aliases and users' own extractors.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Attribute, GenericArgument, Ident, Pat, PatType, PathArguments, Type, TypePath};

use crate::attr::skip_value;
use crate::docs::is_doc_line;
use crate::errors::Errors;

/// A parameter as the generated code needs it.
pub struct Param {
    /// The binding the user wrote, or a stand-in for patterns (context parameters only).
    pub ident: Ident,
    /// The parameter's type, as written.
    pub ty: Type,
    pub kind: ParamKind,
    /// Its `#[cfg]` attributes, repeated on everything generated for it: a parameter compiled
    /// out takes its argument with it.
    pub cfgs: Vec<Attribute>,
}

pub enum ParamKind {
    /// A field of the generated argument struct.
    Argument(Argument),
    /// `#[args]`: this parameter's type is the whole argument object.
    WholeArguments,
    /// Supplied by the dispatcher, never by the model.
    Context(Context),
}

pub struct Argument {
    /// The JSON key, after `#[serde(rename = …)]`.
    pub json_name: String,
    pub json_span: Span,
    /// Doc, `serde` and `schemars` attributes, moved onto the generated field.
    pub field_attrs: Vec<Attribute>,
    pub decoding: Decoding,
    /// No serde attribute but `rename`: the generated decoder handles the field, without serde's
    /// derive.
    pub plain: bool,
}

/// How the generated struct holds the field.
///
/// A field is normally a type parameter of the struct, bounded by `ToolArgument`: serde's and
/// schemars' derives then stay generic, so a type that cannot be decoded fails in one place with
/// one message instead of in every line the derives generate.
pub enum Decoding {
    /// A type parameter.
    Generic,
    /// The written type, for serde attributes that need it: `with` and `deserialize_with`
    /// (their functions return that very type), `default` and `skip` (schemars shows a default
    /// only for a type it knows to be `Serialize`); and for a parameter under `#[cfg]`.
    Concrete,
}

pub enum Context {
    /// `ToolExecutionContext`, by value or by reference: handed over without a clone.
    Execution { by_ref: bool },
    /// `State<T>`: the shared state given to `definition(state)`.
    State { inner: Box<Type> },
    /// `#[ctx]` on any other type: built by its `FromToolContext` implementation.
    Extractor,
}

/// Classifies one parameter, reporting what cannot work. Returns `None` when it cannot be used.
pub fn classify(input: &PatType, index: usize, errors: &mut Errors) -> Option<Param> {
    let marked_ctx = marker(&input.attrs, "ctx");
    let marked_args = marker(&input.attrs, "args");
    if let (Some(ctx), Some(_)) = (marked_ctx, marked_args) {
        errors.at(
            ctx,
            "a parameter is either `#[ctx]` (from the call's context) or `#[args]` (the whole argument object), not both",
        );
        return None;
    }
    let ty = &*input.ty;
    let cfgs = crate::attr::cfg_attrs(&input.attrs);
    if let Some(message) = mutable_context(ty).or_else(|| optional_context(ty)) {
        errors.at(ty, message);
        return None;
    }
    if let Some(context) = recognised_context(ty).or(marked_ctx.map(|_| Context::Extractor)) {
        if let Some(args) = marked_args {
            errors.at(
                args,
                "`#[args]` marks the argument object; a context type cannot be one",
            );
        }
        // Doc comments are fine: they document the code, and are dropped like the attribute.
        for attr in input
            .attrs
            .iter()
            .filter(|attr| is_schema_attr(attr) && !is_doc_line(attr))
        {
            errors.at(
                attr,
                "this parameter comes from the call's context, not from the model: `serde` and `schemars` attributes do not apply to it",
            );
        }
        if !matches!(context, Context::Execution { .. }) {
            reject_borrowed(ty, "a context parameter", errors);
            // Its requirement is a where-clause of the generated impl, and a where-clause
            // cannot carry `#[cfg]`.
            if let Some(cfg) = cfgs.first() {
                errors.at(
                    cfg,
                    "a `State<…>` or `#[ctx]` parameter cannot be under `#[cfg]`: put the `#[cfg]` on the whole tool function instead, with one version of the function per configuration",
                );
            }
        }
        let ident = match &*input.pat {
            Pat::Ident(binding) if binding.by_ref.is_none() && binding.subpat.is_none() => {
                binding.ident.clone()
            }
            // Destructuring (`State(db): State<Db>`) or `_` is fine: the value is passed whole.
            _ => Ident::new(&format!("__prism_context_{index}"), Span::mixed_site()),
        };
        return Some(Param {
            ident,
            ty: ty.clone(),
            kind: ParamKind::Context(context),
            cfgs,
        });
    }

    let ident = match &*input.pat {
        Pat::Ident(binding) if binding.by_ref.is_none() && binding.subpat.is_none() => {
            binding.ident.clone()
        }
        pattern => {
            errors.at(
                pattern,
                "a tool argument needs a plain name, such as `city: String`: the name is the JSON key the model fills in",
            );
            return None;
        }
    };
    if !reject_borrowed(ty, "a tool argument", errors) {
        return None;
    }
    if marked_args.is_some() {
        return Some(Param {
            ident,
            ty: ty.clone(),
            kind: ParamKind::WholeArguments,
            cfgs,
        });
    }
    let SerdeField {
        json_name,
        json_span,
        flatten,
        mut decoding,
        plain,
    } = serde_field(&input.attrs, &ident);
    if !cfgs.is_empty() {
        // A type parameter is named in the struct's type arguments, which cannot carry `#[cfg]`.
        decoding = Decoding::Concrete;
    }
    if let Some(flatten) = flatten {
        errors.push(syn::Error::new(
            flatten,
            "`#[serde(flatten)]` cannot be combined with the `deny_unknown_fields` of the generated arguments: take the whole object with `#[args]` instead",
        ));
    }
    Some(Param {
        ident,
        ty: ty.clone(),
        kind: ParamKind::Argument(Argument {
            json_name,
            json_span,
            decoding,
            plain,
            field_attrs: input
                .attrs
                .iter()
                .filter(|attr| is_schema_attr(attr))
                .cloned()
                .collect(),
        }),
        cfgs,
    })
}

/// Removes the attributes the macro consumed, so the function compiles as written.
pub fn strip_consumed_attrs(input: &mut PatType) {
    input.attrs.retain(|attr| {
        !is_schema_attr(attr) && !attr.path().is_ident("ctx") && !attr.path().is_ident("args")
    });
}

fn marker<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a Attribute> {
    attrs.iter().find(|attr| attr.path().is_ident(name))
}

fn is_schema_attr(attr: &Attribute) -> bool {
    is_doc_line(attr) || attr.path().is_ident("serde") || attr.path().is_ident("schemars")
}

/// `ToolExecutionContext`, `&ToolExecutionContext` or `State<T>`, by the type's last segment.
fn recognised_context(ty: &Type) -> Option<Context> {
    match ty {
        Type::Reference(reference) if reference.mutability.is_none() => {
            let is_context = matches!(
                last_segment(&reference.elem),
                Some(("ToolExecutionContext", _))
            );
            is_context.then_some(Context::Execution { by_ref: true })
        }
        _ => match last_segment(ty)? {
            ("ToolExecutionContext", PathArguments::None) => {
                Some(Context::Execution { by_ref: false })
            }
            ("State", PathArguments::AngleBracketed(args)) if args.args.len() == 1 => {
                match &args.args[0] {
                    GenericArgument::Type(inner) => Some(Context::State {
                        inner: Box::new(inner.clone()),
                    }),
                    _ => None,
                }
            }
            _ => None,
        },
    }
}

/// The error for `&mut ToolExecutionContext` or `&mut State<T>`: a context parameter, which the
/// argument rules would otherwise report as JSON that must own its data.
fn mutable_context(ty: &Type) -> Option<String> {
    let Type::Reference(reference) = ty else {
        return None;
    };
    reference.mutability?;
    let taken = tokens(&reference.elem);
    match last_segment(&reference.elem)? {
        ("ToolExecutionContext", _) => Some(format!(
            "the call's context cannot be borrowed mutably: take `{taken}` or `&{taken}`"
        )),
        _ => Some(format!(
            "the tool's state cannot be borrowed mutably, every call shares it: take `{taken}`, and keep what changes behind a `Mutex` or an atomic"
        )),
    }
}

/// The error for `Option<ToolExecutionContext>` or `Option<State<T>>`: both are always supplied,
/// and the argument rules would otherwise ask for `Deserialize` on them.
fn optional_context(ty: &Type) -> Option<String> {
    let Type::Path(TypePath { qself: None, path }) = ty else {
        return None;
    };
    let segment = path.segments.last()?;
    let PathArguments::AngleBracketed(args) = &segment.arguments else {
        return None;
    };
    let inner = match args.args.first() {
        Some(GenericArgument::Type(inner)) if segment.ident == "Option" && args.args.len() == 1 => {
            inner
        }
        _ => return None,
    };
    let taken = tokens(inner);
    match recognised_context(inner)? {
        Context::Execution { .. } => Some(format!(
            "the call's context is always supplied: take `{taken}`, not an `Option` of it"
        )),
        _ => Some(format!(
            "the tool's state is always supplied, by `definition(state)`: take `{taken}`, not an `Option` of it"
        )),
    }
}

fn last_segment(ty: &Type) -> Option<(&'static str, &PathArguments)> {
    match ty {
        Type::Path(TypePath { qself: None, path }) => {
            let segment = path.segments.last()?;
            let name = ["ToolExecutionContext", "State"]
                .into_iter()
                .find(|name| segment.ident == name)?;
            Some((name, &segment.arguments))
        }
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

/// Reports references, `impl Trait` and borrowed lifetimes; returns false when it reported.
fn reject_borrowed(ty: &Type, what: &str, errors: &mut Errors) -> bool {
    if let Type::Reference(reference) = ty {
        let owned = match &*reference.elem {
            Type::Path(path) if path.path.is_ident("str") => "String".to_owned(),
            Type::Slice(slice) => format!("Vec<{}>", tokens(&slice.elem)),
            other => tokens(other),
        };
        errors.at(
            ty,
            format_args!(
                "{what} cannot be a reference: it is decoded from JSON for each call, so it must own its data; take `{owned}` instead"
            ),
        );
        return false;
    }
    let mut finder = BorrowFinder::default();
    finder.visit_type(ty);
    if let Some(span) = finder.impl_trait {
        errors.push(syn::Error::new(
            span,
            format!("{what} cannot be `impl Trait`: name a concrete type, so the macro can decode it and describe it in the schema"),
        ));
        return false;
    }
    if let Some(lifetime) = finder.lifetime {
        errors.push(syn::Error::new(
            lifetime,
            format!("{what} cannot borrow (`{}`): it is decoded from JSON for each call, so it must own its data: take `String` rather than `&str` or `Cow<str>`, `Vec<String>` rather than `Vec<&str>`", tokens(ty)),
        ));
        return false;
    }
    true
}

#[derive(Default)]
struct BorrowFinder {
    impl_trait: Option<Span>,
    lifetime: Option<Span>,
}

impl<'ast> Visit<'ast> for BorrowFinder {
    fn visit_type_impl_trait(&mut self, node: &'ast syn::TypeImplTrait) {
        self.impl_trait.get_or_insert(node.span());
    }

    fn visit_lifetime(&mut self, node: &'ast syn::Lifetime) {
        if node.ident != "static" {
            self.lifetime.get_or_insert(node.span());
        }
    }

    fn visit_type_reference(&mut self, node: &'ast syn::TypeReference) {
        self.lifetime.get_or_insert(node.and_token.span);
    }
}

/// What the macro reads of an argument's `#[serde(...)]` attributes; serde itself reports
/// anything malformed.
struct SerdeField {
    json_name: String,
    json_span: Span,
    flatten: Option<Span>,
    decoding: Decoding,
    /// Only `rename` was given (or nothing).
    plain: bool,
}

/// The JSON key (`rename = "…"` or its `deserialize` half, else the name without `r#`), and how
/// the field must be held.
fn serde_field(attrs: &[Attribute], ident: &Ident) -> SerdeField {
    let mut field = SerdeField {
        json_name: unraw(ident),
        json_span: ident.span(),
        flatten: None,
        decoding: Decoding::Generic,
        plain: true,
    };
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        let parsed = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if !path.is_ident("rename") {
                field.plain = false;
            }
            if path.is_ident("rename") && !meta.input.peek(syn::Token![=]) {
                return meta.parse_nested_meta(|half| {
                    let literal: syn::LitStr = half.value()?.parse()?;
                    if half.path.is_ident("deserialize") {
                        (field.json_name, field.json_span) = (literal.value(), literal.span());
                    }
                    Ok(())
                });
            }
            if path.is_ident("rename") {
                let literal: syn::LitStr = meta.value()?.parse()?;
                (field.json_name, field.json_span) = (literal.value(), literal.span());
                return Ok(());
            }
            if path.is_ident("flatten") {
                field.flatten = Some(path.span());
            } else if [
                "with",
                "deserialize_with",
                "default",
                "skip",
                "skip_deserializing",
            ]
            .iter()
            .any(|key| path.is_ident(key))
            {
                field.decoding = Decoding::Concrete;
            }
            skip_value(&meta)
        });
        // serde's derive reports what the macro could not read.
        field.plain &= parsed.is_ok();
    }
    field
}

/// The identifier as a JSON key: `r#type` is `type`.
pub fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// A type as the user would write it: `Vec<T>`, not the token printer's `Vec < T >`.
fn tokens(node: &impl quote::ToTokens) -> String {
    [
        (" < ", "<"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
    ]
    .into_iter()
    .fold(node.to_token_stream().to_string(), |text, (from, to)| {
        text.replace(from, to)
    })
}
