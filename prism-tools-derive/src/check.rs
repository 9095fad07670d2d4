//! Checks that need the whole tool: its name, its description, and its parameters taken
//! together (duplicate JSON keys, two contexts, `#[args]` beside other arguments).

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, Type};

use crate::attr::ToolAttrs;
use crate::docs::Docs;
use crate::errors::Errors;
use crate::param::{Context, Param, ParamKind, unraw};

/// The longest tool name MCP accepts, in bytes.
const MAX_NAME_LEN: usize = 128;

/// What the model sees of a tool besides its schema.
pub struct Identity {
    pub name: String,
    /// An expression of type `&'static str`.
    pub description: TokenStream,
}

/// The tool's name (`name = …`, else the Rust name) and description (`description = …`, else the
/// doc comment), checked.
pub fn identity(keys: &ToolAttrs, docs: &Docs, rust_name: &Ident, errors: &mut Errors) -> Identity {
    let (name, span) = match &keys.name {
        Some(literal) => (literal.value(), literal.span()),
        None => (unraw(rust_name), rust_name.span()),
    };
    check_name(&name, span, errors);
    let description = match &keys.description {
        Some(Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        })) => {
            let trimmed = text.value().trim().to_owned();
            if trimmed.is_empty() {
                errors.at(
                    text,
                    "the description is empty: say what the tool does and when to use it",
                );
            }
            trimmed.into_token_stream()
        }
        Some(Expr::Macro(call)) if is_text_macro(&call.mac.path) => {
            let called = call.mac.path.to_token_stream().to_string().replace(' ', "");
            let what =
                format!("the description of tool `{name}` is empty once `{called}!` is expanded");
            checked_constant(&what, call.span(), &call.to_token_stream())
        }
        Some(expression) => quote!(::core::primitive::str::trim(#expression)),
        None => match docs {
            Docs::Text(text) if !text.is_empty() => text.into_token_stream(),
            Docs::Text(_) => {
                errors.at(
                    rust_name,
                    format_args!("the doc comment of tool `{name}` is empty: say what the tool does and when to use it; the model reads it to decide when to call the tool"),
                );
                TokenStream::new()
            }
            Docs::Expression(expression) => {
                let what = format!(
                    "the doc comment of tool `{name}` is empty once its included text is read"
                );
                checked_constant(&what, rust_name.span(), expression)
            }
            Docs::Missing => {
                errors.at(
                    rust_name,
                    format_args!("tool `{name}` has no description: add a doc comment (`/// What it does.`) or `#[tool(description = \"…\")]`; the model reads it to decide when to call the tool"),
                );
                TokenStream::new()
            }
        },
    };
    Identity { name, description }
}

/// `include_str!`, `concat!` or `env!` of the standard library: text known only once the
/// compiler expands it, and always a constant. Other expressions (a constant, a function call)
/// are taken as they are: a function need not be `const`.
fn is_text_macro(path: &syn::Path) -> bool {
    let from_std = match path.segments.len() {
        1 => path.leading_colon.is_none(),
        2 => ["core", "std"]
            .iter()
            .any(|root| path.segments[0].ident == root),
        _ => false,
    };
    from_std
        && path.segments.last().is_some_and(|last| {
            ["include_str", "concat", "env"]
                .iter()
                .any(|name| last.ident == name)
        })
}

/// A description spelled by a macro (`#[doc = include_str!(…)]`, or one of the macros above in
/// `description = …`) is only known once the compiler expands it. It is always a constant, so an
/// empty one is still a compile error: a constant assertion on the expanded text, pointed at
/// `span`. `what` says what is empty. (`str::trim` is not `const`; `trim_ascii` catches every
/// blank text but one of only Unicode spaces, which no editor leaves behind.)
fn checked_constant(what: &str, span: Span, expression: &TokenStream) -> TokenStream {
    // A format string: a brace in a name refused above must not read as a placeholder.
    let what = what.replace('{', "{{").replace('}', "}}");
    let message = format!(
        "{what}: say what the tool does and when to use it; the model reads it to decide when to call the tool"
    );
    quote_spanned! {span=>
        {
            const DESCRIPTION: &::core::primitive::str = #expression;
            const _: () = ::core::assert!(!DESCRIPTION.trim_ascii().is_empty(), #message);
            ::core::primitive::str::trim(DESCRIPTION)
        }
    }
}

fn check_name(name: &str, span: Span, errors: &mut Errors) {
    // Counted in bytes, as MCP, the providers and the runtime's name rules count it.
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        errors.push(syn::Error::new(
            span,
            format!(
                "a tool name is 1 to {MAX_NAME_LEN} bytes long; `{name}` is {} bytes long",
                name.len()
            ),
        ));
    }
    let mut invalid: Vec<String> = Vec::new();
    for c in name.chars() {
        let shown = match c {
            ' ' => "a space".to_owned(),
            c if c.is_whitespace() || c.is_control() => format!("{c:?}"),
            c => format!("`{c}`"),
        };
        let allowed = c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
        if !allowed && !invalid.contains(&shown) {
            invalid.push(shown);
        }
    }
    if !invalid.is_empty() {
        errors.push(syn::Error::new(
            span,
            format!(
                "the tool name `{name}` contains {}: a tool name may only use ASCII letters, digits, `_`, `.` and `-`",
                invalid.join(" and ")
            ),
        ));
    }
}

/// What `ty` is, when it is a type whose schema is never an object (a number, a string, a
/// list, a tuple, an optional value): a model is always sent an object of arguments, and
/// providers refuse a tool whose parameters are anything else. A type of the user's own is
/// taken on trust; the macro cannot see its schema.
fn never_an_object(ty: &Type) -> Option<String> {
    match ty {
        Type::Tuple(_) => Some("a tuple".to_owned()),
        Type::Array(_) | Type::Slice(_) => Some("an array".to_owned()),
        Type::Reference(reference) => never_an_object(&reference.elem),
        Type::Paren(inner) => never_an_object(&inner.elem),
        Type::Group(inner) => never_an_object(&inner.elem),
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            let name = last.ident.to_string();
            const SCALARS: &[&str] = &[
                "bool", "char", "str", "String", "i8", "i16", "i32", "i64", "i128", "isize", "u8",
                "u16", "u32", "u64", "u128", "usize", "f32", "f64",
            ];
            const LISTS: &[&str] = &["Vec", "VecDeque", "HashSet", "BTreeSet", "LinkedList"];
            if SCALARS.contains(&name.as_str()) {
                Some(format!("`{name}`"))
            } else if LISTS.contains(&name.as_str()) {
                Some(format!("`{name}<…>` (an array)"))
            } else if name == "Option" {
                Some("`Option<…>` (it may be `null`)".to_owned())
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Two versions of one parameter under different `#[cfg]`s: the compiler refuses the same
/// name twice unless at most one is compiled in, so they never meet.
fn one_per_configuration(first: &Param, second: &Param) -> bool {
    let cfgs = |param: &Param| {
        let cfgs = &param.cfgs;
        quote!(#(#cfgs)*).to_string()
    };
    first.ident == second.ident && !second.cfgs.is_empty() && cfgs(first) != cfgs(second)
}

/// How a tool's state type is known.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum StateType {
    /// From its `State<T>` parameter, if it has one.
    FromParameter,
    /// Given (`#[tool(state = …)]`, or `Self` in a `#[tools]` block): every `State<T>` is a part
    /// of it, so there may be several.
    Given,
}

/// Checks the parameters together; returns the `T` of the first `State<T>` parameter, if there
/// is one.
pub fn params(params: &[Param], state_type: StateType, errors: &mut Errors) -> Option<Type> {
    let mut json_names: HashMap<&str, &Param> = HashMap::new();
    let mut arguments = Vec::new();
    let mut whole = None;
    let mut execution = None;
    let mut state: Option<&Param> = None;
    let mut extractors: HashMap<String, &Param> = HashMap::new();
    for param in params {
        match &param.kind {
            ParamKind::Argument(argument) => {
                arguments.push(param);
                if let Some(first) = json_names.insert(&argument.json_name, param)
                    && !one_per_configuration(first, param)
                {
                    errors.push(syn::Error::new(
                        argument.json_span,
                        format!(
                            "two arguments are called `{}` in JSON (`{}` and `{}`): rename one, e.g. with `#[serde(rename = \"…\")]`",
                            argument.json_name, first.ident, param.ident
                        ),
                    ));
                }
            }
            ParamKind::WholeArguments => {
                if let Some(kind) = never_an_object(&param.ty) {
                    errors.at(
                        &param.ty,
                        format_args!(
                            "`#[args]` takes the whole argument object, and {kind} is never a JSON object: take a struct with named fields, or remove `#[args]` to make `{}` one argument of the object",
                            param.ident
                        ),
                    );
                }
                if whole.replace(param).is_some() {
                    errors.at(
                        &param.ty,
                        "only one parameter can be `#[args]`: it is the whole argument object",
                    );
                }
            }
            ParamKind::Context(Context::Execution { .. }) => {
                if execution.replace(param).is_some() {
                    errors.at(
                        &param.ty,
                        "the tool already takes the `ToolExecutionContext`: remove this parameter and use the first one",
                    );
                }
            }
            ParamKind::Context(Context::State { .. }) => {
                if state.is_none() {
                    state = Some(param);
                } else if state_type == StateType::FromParameter {
                    errors.at(
                        &param.ty,
                        "a tool taking several `State<…>` parameters takes them as parts of one state: name it with `#[tool(state = AppState)]`, and implement `FromState<AppState>` for each part",
                    );
                }
            }
            ParamKind::Context(Context::Extractor) => {
                let key = param.ty.to_token_stream().to_string();
                if extractors.insert(key, param).is_some() {
                    errors.at(
                        &param.ty,
                        "this type is already taken from the context by another parameter: remove one of them",
                    );
                }
            }
        }
    }
    if let Some(whole) = whole {
        for param in arguments {
            errors.at(
                &param.ident,
                format_args!(
                    "`{}` cannot sit beside `#[args] {}`, which is already the whole argument object: move `{}` into the type of `{}`, or remove `#[args]`",
                    param.ident, whole.ident, param.ident, whole.ident
                ),
            );
        }
    }
    state.and_then(|param| match &param.kind {
        ParamKind::Context(Context::State { inner }) => Some((**inner).clone()),
        _ => None,
    })
}
