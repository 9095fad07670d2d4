//! Reads a tool function's signature into [`ToolFn`], reporting what a tool cannot be.
//!
//! Only the shape of the signature is judged here; whether the names, descriptions and
//! parameters make sense together is [`check`](crate::check)'s job, and whether the types
//! implement the right traits is left to the compiler, through the assertions that
//! [`expand`](crate::expand) emits at each type's span.

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Attribute, FnArg, GenericParam, Ident, ReturnType, Signature, Type, WherePredicate};

use crate::attr::{Site, ToolAttrs};
use crate::docs::{self, Docs};
use crate::errors::Errors;
use crate::param::{self, Param};

/// A function or method marked `#[tool]`, as far as it could be read.
pub struct ToolFn {
    pub keys: ToolAttrs,
    pub docs: Docs,
    pub ident: Ident,
    pub is_async: bool,
    /// `&self`, for methods of a `#[tools]` impl block.
    pub has_receiver: bool,
    pub params: Vec<Param>,
    pub output: Output,
}

/// What the function returns, as the generated code must treat it.
pub enum Output {
    /// Nothing, or `()`.
    Unit,
    /// A value returned as it is.
    Value(Type),
    /// A type spelled `Result<…>` (including aliases such as `anyhow::Result<T>`): `Ok` is the
    /// value, `Err` the tool's error.
    Result(Type),
}

impl ToolFn {
    /// Reads `sig`; `attrs` are the function's own attributes (its doc comment). `self_ty` is
    /// the impl block's type, for a method.
    pub fn parse(
        keys: ToolAttrs,
        attrs: &[Attribute],
        sig: &Signature,
        site: Site,
        self_ty: Option<&Type>,
        errors: &mut Errors,
    ) -> Self {
        check_qualifiers(sig, errors);
        let mut has_receiver = false;
        let mut params = Vec::new();
        for (index, input) in sig.inputs.iter().enumerate() {
            match input {
                FnArg::Receiver(receiver) => {
                    has_receiver = true;
                    check_receiver(receiver, site, self_ty, errors);
                }
                FnArg::Typed(typed) => params.extend(param::classify(typed, index, errors)),
            }
        }
        Self {
            keys,
            docs: docs::collect(attrs),
            ident: sig.ident.clone(),
            is_async: sig.asyncness.is_some(),
            has_receiver,
            params,
            output: output(&sig.output, errors),
        }
    }
}

fn check_qualifiers(sig: &Signature, errors: &mut Errors) {
    if let Some(constness) = &sig.constness {
        errors.at(constness, "a `const fn` cannot be a tool: remove `const`");
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.at(
            unsafety,
            "an `unsafe fn` cannot be a tool: a model's call cannot uphold its safety contract; make the function safe",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(abi, "an `extern` function cannot be a tool: remove the ABI");
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(variadic, "a variadic function cannot be a tool");
    }
    let generics = &sig.generics;
    // Lifetimes are fine: the call infers them, and the schemas need only types.
    let only_lifetimes = generics
        .params
        .iter()
        .all(|param| matches!(param, GenericParam::Lifetime(_)))
        && generics.where_clause.as_ref().is_none_or(|clause| {
            clause
                .predicates
                .iter()
                .all(|predicate| matches!(predicate, WherePredicate::Lifetime(_)))
        });
    if !only_lifetimes {
        let message = "a generic function cannot be a tool: its schema needs concrete types; write the types out, or implement `prism::Tool` by hand for a generic tool";
        match &generics.where_clause {
            Some(clause) if generics.params.is_empty() => errors.at(clause, message),
            _ => errors.at(generics, message),
        }
    }
}

fn check_receiver(
    receiver: &syn::Receiver,
    site: Site,
    self_ty: Option<&Type>,
    errors: &mut Errors,
) {
    if site != Site::Method {
        errors.at(
            receiver,
            "`self` only works in a method of an impl block marked `#[tools]`: add `#[tools]` to the impl block, or remove `self`",
        );
        return;
    }
    // `&self` and `self: &Self` (or the type by name) are one receiver; in the shorthand,
    // `mutability` is the reference's, in the typed form it is the binding's, which the call
    // does not see.
    let by_shared_ref = match (&receiver.colon_token, &*receiver.ty) {
        (None, _) => receiver.reference.is_some() && receiver.mutability.is_none(),
        (Some(_), Type::Reference(reference)) => {
            reference.mutability.is_none() && names_self(&reference.elem, self_ty)
        }
        (Some(_), _) => false,
    };
    if !by_shared_ref {
        let mutable = match (&receiver.colon_token, &*receiver.ty) {
            (None, _) => receiver.reference.is_some() && receiver.mutability.is_some(),
            (Some(_), Type::Reference(reference)) => reference.mutability.is_some(),
            (Some(_), _) => false,
        };
        let hint = if mutable {
            "; keep mutable state behind a `Mutex` or an atomic"
        } else {
            ""
        };
        errors.at(
            receiver,
            format_args!(
                "a tool method takes `&self` (or `self: &Self`): the tools of an impl block share one instance, behind an `Arc`{hint}"
            ),
        );
    }
}

/// Whether `ty` is `Self` or the impl block's type as written there.
fn names_self(ty: &Type, self_ty: Option<&Type>) -> bool {
    match ty {
        Type::Paren(inner) => names_self(&inner.elem, self_ty),
        Type::Group(inner) => names_self(&inner.elem, self_ty),
        Type::Path(path) if path.qself.is_none() && path.path.is_ident("Self") => true,
        _ => self_ty.is_some_and(|self_ty| {
            ty.to_token_stream().to_string() == self_ty.to_token_stream().to_string()
        }),
    }
}

fn output(output: &ReturnType, errors: &mut Errors) -> Output {
    let ty = match output {
        ReturnType::Default => return Output::Unit,
        ReturnType::Type(_, ty) => &**ty,
    };
    let mut finder = ImplTraitFinder(None);
    finder.visit_type(ty);
    if let Some(span) = finder.0 {
        errors.push(syn::Error::new(
            span,
            "a tool cannot return `impl Trait`: name the type, so the macro can serialise it and describe its schema",
        ));
        return Output::Unit;
    }
    match ty {
        Type::Tuple(tuple) if tuple.elems.is_empty() => Output::Unit,
        Type::Path(path)
            if path.qself.is_none()
                && path
                    .path
                    .segments
                    .last()
                    .is_some_and(|segment| segment.ident == "Result") =>
        {
            Output::Result(ty.clone())
        }
        _ => Output::Value(ty.clone()),
    }
}

struct ImplTraitFinder(Option<proc_macro2::Span>);

impl<'ast> Visit<'ast> for ImplTraitFinder {
    fn visit_type_impl_trait(&mut self, node: &'ast syn::TypeImplTrait) {
        self.0.get_or_insert(node.span());
    }
}
