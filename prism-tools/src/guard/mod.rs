//! The guards a [`DispatchBuilder`](crate::DispatchBuilder) accepts, one file per kind.
//!
//! Each guard is a small trait with one job (in the spirit of tower's layers), plus a constructor
//! that takes a closure directly (`permission_fn(|tool, args, ctx| …)`), because a closure handed
//! to a method bounded only by a trait with a blanket impl cannot have its argument types inferred.
//!
//! Every stage method of the builder takes `impl IntoGuard<…>`: a guard, an `Arc` of one, or an
//! `Option` of either. Passing `None` still advances the builder's stage, so conditional
//! configuration (`builder.validate(strict.then(|| schema_validator))`) needs no branching. Only a
//! guard that is certainly present counts towards
//! [`build_secure`](crate::DispatchBuilder::build_secure).

mod before_execute;
mod guardrails;
mod middleware;
mod permission;
mod validate;

use std::sync::Arc;

use crate::effects::EffectStore;

pub use before_execute::{BeforeExecute, before_execute_fn};
pub use guardrails::{
    Guardrail, GuardrailDecision, GuardrailHit, GuardrailRule, RuleAction, RulePack,
};
pub use middleware::{
    CallRewrite, ResultRewrite, ToolMiddleware, call_middleware, result_middleware,
};
pub use permission::{PermissionPolicy, TrustPolicy, permission_fn, trust_fn};
pub use validate::{ToolValidator, validator_fn};

/// Type-level marker: a guard certainly given.
#[derive(Debug)]
pub enum Given {}
/// Type-level marker: no guard, or only an `Option` of one.
#[derive(Debug)]
pub enum Missing {}

/// Whether a stage certainly has a guard. Implemented by [`Given`] and [`Missing`] only.
pub trait Presence: sealed::Sealed {}
impl Presence for Given {}
impl Presence for Missing {}

/// Combines what a stage already had with what one more call adds.
pub trait Join<Other: Presence>: Presence {
    /// [`Given`] when either side is.
    type Output: Presence;
}
impl<Other: Presence> Join<Other> for Given {
    type Output = Given;
}
impl Join<Given> for Missing {
    type Output = Given;
}
impl Join<Missing> for Missing {
    type Output = Missing;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Given {}
    impl Sealed for super::Missing {}
}

/// Anything a builder stage accepts for a guard of kind `G`: the guard itself, an `Arc<dyn G>`,
/// or an `Option` of either (which may be `None`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as this dispatcher guard",
    label = "not a guard of the kind this stage takes",
    note = "pass a value implementing the stage's guard trait, an `Arc<dyn …>` of one, or an `Option` of either; closures go through `permission_fn`, `validator_fn` and friends"
)]
pub trait IntoGuard<G: ?Sized> {
    /// [`Given`] for a guard, [`Missing`] for an `Option`.
    type Presence: Presence;
    /// The guard, if any.
    fn into_guard(self) -> Option<Arc<G>>;
}

impl<G: ?Sized, T: IntoGuard<G>> IntoGuard<G> for Option<T> {
    type Presence = Missing;
    fn into_guard(self) -> Option<Arc<G>> {
        self.and_then(IntoGuard::into_guard)
    }
}

/// Implements [`IntoGuard`] for every implementor of each trait named, and for an `Arc` of its
/// trait object. Slots above this layer (sinks, ledgers) invoke it where their trait is defined.
macro_rules! impl_into_guard {
    ($($guard:ident),* $(,)?) => {$(
        impl<T: $guard> $crate::guard::IntoGuard<dyn $guard> for T {
            type Presence = $crate::guard::Given;
            fn into_guard(self) -> Option<::std::sync::Arc<dyn $guard>> {
                Some(::std::sync::Arc::new(self))
            }
        }
        impl $crate::guard::IntoGuard<dyn $guard> for ::std::sync::Arc<dyn $guard> {
            type Presence = $crate::guard::Given;
            fn into_guard(self) -> Option<::std::sync::Arc<dyn $guard>> {
                Some(self)
            }
        }
    )*};
}
pub(crate) use impl_into_guard;

impl_into_guard!(
    ToolMiddleware,
    Guardrail,
    TrustPolicy,
    PermissionPolicy,
    ToolValidator,
    BeforeExecute,
);

/// An effect store, including a shared one: `Arc<S>` and `Arc<dyn EffectStore>` are stores too
/// (see the blanket impl beside [`EffectStore`]), so one impl covers all three.
impl<S: EffectStore> IntoGuard<dyn EffectStore> for S {
    type Presence = Given;
    fn into_guard(self) -> Option<Arc<dyn EffectStore>> {
        Some(Arc::new(self))
    }
}
