//! The keys of `#[tool(...)]` and `#[tools(...)]`.
//!
//! A key the macro does not know is reported with the closest known key, and parsing carries on
//! with the next key so that one run reports every mistake.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Attribute, Expr, Ident, LitBool, LitStr, Path, Token, Type};

use crate::errors::Errors;

/// Where an attribute sits; decides which keys make sense.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// `#[tool]` on a free function.
    Function,
    /// `#[tool]` on a method inside `#[tools]`: the state is `Self`, the crate path is the
    /// impl block's.
    Method,
    /// `#[tool(...)]` after `#[derive(Tool)]`.
    Struct,
}

const TOOL_KEYS: &[&str] = &[
    "name",
    "description",
    "title",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "exclusive",
    "requires_approval",
    "untrusted_output",
    "effect",
    "state",
    "crate",
];

const TOOLS_KEYS: &[&str] = &["name", "crate"];

/// The effect policy asked for.
pub enum Effect {
    /// `effect`: the default policy.
    Default,
    /// `effect = <expression of type EffectPolicy>`.
    Policy(Expr),
}

/// The keys of one `#[tool(...)]`.
#[derive(Default)]
pub struct ToolAttrs {
    pub name: Option<LitStr>,
    pub description: Option<Expr>,
    pub title: Option<LitStr>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
    pub exclusive: Option<bool>,
    pub requires_approval: Option<bool>,
    pub untrusted_output: Option<bool>,
    pub effect: Option<Effect>,
    pub state: Option<Type>,
    pub krate: Option<Path>,
}

impl ToolAttrs {
    /// Parses the tokens inside `#[tool(...)]`.
    pub fn parse(tokens: TokenStream, site: Site, errors: &mut Errors) -> Self {
        let mut attrs = Self::default();
        let parser = syn::meta::parser(|meta| attrs.entry(meta, site, errors));
        if let Err(error) = parser.parse2(tokens) {
            errors.push(error);
        }
        attrs
    }

    fn entry(
        &mut self,
        meta: ParseNestedMeta<'_>,
        site: Site,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        let key = key_of(&meta);
        match key.as_str() {
            "name" => set_once(&mut self.name, &meta, errors, |m| m.value()?.parse()),
            "description" => set_once(&mut self.description, &meta, errors, |m| m.value()?.parse()),
            "title" => set_once(&mut self.title, &meta, errors, |m| m.value()?.parse()),
            "read_only" => set_once(&mut self.read_only, &meta, errors, flag),
            "destructive" => set_once(&mut self.destructive, &meta, errors, flag),
            "idempotent" => set_once(&mut self.idempotent, &meta, errors, flag),
            "open_world" => set_once(&mut self.open_world, &meta, errors, flag),
            "exclusive" => set_once(&mut self.exclusive, &meta, errors, flag),
            "requires_approval" => set_once(&mut self.requires_approval, &meta, errors, flag),
            "untrusted_output" => set_once(&mut self.untrusted_output, &meta, errors, flag),
            "effect" => set_once(&mut self.effect, &meta, errors, |m| {
                if m.input.peek(Token![=]) {
                    Ok(Effect::Policy(m.value()?.parse()?))
                } else {
                    Ok(Effect::Default)
                }
            }),
            "state" if site == Site::Method => {
                errors.at(
                    &meta.path,
                    "the methods of a `#[tools]` impl block share `Self` as their state: remove `state = …` and read the value through `&self`",
                );
                skip_value(&meta)
            }
            "state" => set_once(&mut self.state, &meta, errors, |m| m.value()?.parse()),
            "crate" if site == Site::Method => {
                errors.at(
                    &meta.path,
                    "set `crate = …` once, on `#[tools(crate = …)]`, not on each method",
                );
                skip_value(&meta)
            }
            "crate" => set_once(&mut self.krate, &meta, errors, crate_path),
            _ => {
                errors.push(unknown_key(&meta, &key, "#[tool]", TOOL_KEYS));
                skip_value(&meta)
            }
        }
    }
}

/// The keys of `#[tools(...)]` on an impl block.
#[derive(Default)]
pub struct ToolsAttrs {
    /// The name of the generated method that returns the definitions; `tools` by default.
    pub name: Option<Ident>,
    pub krate: Option<Path>,
}

impl ToolsAttrs {
    /// Parses the tokens inside `#[tools(...)]`.
    pub fn parse(tokens: TokenStream, errors: &mut Errors) -> Self {
        let mut attrs = Self::default();
        let parser = syn::meta::parser(|meta| {
            let key = key_of(&meta);
            match key.as_str() {
                "name" => set_once(&mut attrs.name, &meta, errors, method_name),
                "crate" => set_once(&mut attrs.krate, &meta, errors, crate_path),
                _ => {
                    errors.push(unknown_key(&meta, &key, "#[tools]", TOOLS_KEYS));
                    skip_value(&meta)
                }
            }
        });
        if let Err(error) = parser.parse2(tokens) {
            errors.push(error);
        }
        attrs
    }
}

/// The `#[cfg(…)]` attributes among `attrs`, to put on what is generated for the item they
/// guard.
pub fn cfg_attrs(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"))
        .cloned()
        .collect()
}

fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    let path = &meta.path;
    path.segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// Parses a key's value into `slot`, reporting a key given twice.
fn set_once<T>(
    slot: &mut Option<T>,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
    parse: impl FnOnce(&ParseNestedMeta<'_>) -> syn::Result<T>,
) -> syn::Result<()> {
    let value = parse(meta)?;
    if slot.is_some() {
        errors.at(
            &meta.path,
            format_args!("`{}` is given twice: keep one", key_of(meta)),
        );
    } else {
        *slot = Some(value);
    }
    Ok(())
}

/// `key` alone means true; `key = true` / `key = false` are explicit.
fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(Token![=]) {
        let value: LitBool = meta.value()?.parse()?;
        Ok(value.value)
    } else {
        Ok(true)
    }
}

/// `crate = prism` or `crate = "prism"`.
fn crate_path(meta: &ParseNestedMeta<'_>) -> syn::Result<Path> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        value.parse::<LitStr>()?.parse()
    } else {
        value.parse()
    }
}

/// `name = math_tools` or `name = "math_tools"`: it names a Rust method.
fn method_name(meta: &ParseNestedMeta<'_>) -> syn::Result<Ident> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        let literal: LitStr = value.parse()?;
        literal.parse().map_err(|_| {
            syn::Error::new(
                literal.span(),
                "`name` names the generated method: use a Rust identifier such as `math_tools`",
            )
        })
    } else {
        value.parse()
    }
}

/// Consumes whatever follows a key that is not read, so the next key can still be.
pub fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

fn unknown_key(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    attribute: &str,
    known: &[&str],
) -> syn::Error {
    let message = match closest(key, known) {
        Some(suggestion) => {
            format!("unknown key `{key}` in `{attribute}`: did you mean `{suggestion}`?")
        }
        None => format!(
            "unknown key `{key}` in `{attribute}`; the keys are {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    syn::Error::new_spanned(&meta.path, message)
}

/// The known key nearest to `key`, if it is near enough to be a likely typo.
fn closest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let normalized = key.to_ascii_lowercase().replace('-', "_");
    known
        .iter()
        .map(|candidate| {
            let distance = strsim::damerau_levenshtein(&normalized, candidate);
            let prefix = normalized.len() >= 3 && candidate.starts_with(&normalized);
            (if prefix { 0 } else { distance }, *candidate)
        })
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn suggests_the_nearest_key_for_typos_and_prefixes() {
        let keys = super::TOOL_KEYS;
        assert_eq!(closest("descripton", keys), Some("description"));
        assert_eq!(closest("readonly", keys), Some("read_only"));
        assert_eq!(closest("desc", keys), Some("description"));
        assert_eq!(closest("retries", keys), None);
        assert_eq!(closest("require_approval", keys), Some("requires_approval"));
        assert_eq!(closest("approval", keys), None);
    }
}
