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
//!
//! Trust, permission, validator and before-execute guards answer with a [`Verdict`]: ready now,
//! or a future the pipeline awaits (boxed only then), so a guard may ask a service without
//! blocking the runtime while the guards that decide at once cost no more than a `Result`.
//! [`AllowAll`] and [`DenyAll`] are the two fixed answers.

mod before_execute;
mod fixed;
mod guardrails;
mod middleware;
mod permission;
mod presence;
mod validate;
mod verdict;

use std::sync::Arc;

pub use before_execute::{BeforeExecute, before_execute_fn};
pub use fixed::{AllowAll, DenyAll};
pub use guardrails::{
    Guardrail, GuardrailDecision, GuardrailHit, GuardrailRule, RuleAction, RulePack,
};
pub use middleware::{
    CallRewrite, ResultRewrite, ToolMiddleware, call_middleware, result_middleware,
};
pub use permission::{PermissionPolicy, TrustPolicy, permission_fn, trust_fn};
pub use presence::{Given, Join, Missing, Presence};
pub use validate::{ArgumentValidator, validator_fn};
pub use verdict::{IntoVerdict, Verdict};

/// Anything a builder stage accepts for a guard of kind `G`: the guard itself, an `Arc<dyn G>`,
/// or an `Option` of either (which may be `None`).
///
/// Sealed: implement the guard trait itself, and its implementors convert. The builder records
/// from [`Presence`] whether a guard was certainly given, and
/// [`build_secure`](crate::DispatchBuilder::build_secure) relies on that record, so no other
/// conversion may claim [`Given`] and hand over no guard.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as this dispatcher guard",
    label = "not a guard of the kind this stage takes",
    note = "pass a value implementing the stage's guard trait, an `Arc<dyn …>` of one, or an `Option` of either; closures go through `permission_fn`, `validator_fn` and friends"
)]
pub trait IntoGuard<G: ?Sized>: sealed::Sealed<G> {
    /// [`Given`] for a guard, [`Missing`] for an `Option`.
    type Presence: Presence;
    /// The guard, if any.
    fn into_guard(self) -> Option<Arc<G>>;
}

impl<G: ?Sized, T: IntoGuard<G>> sealed::Sealed<G> for Option<T> {}
impl<G: ?Sized, T: IntoGuard<G>> IntoGuard<G> for Option<T> {
    type Presence = Missing;
    fn into_guard(self) -> Option<Arc<G>> {
        self.and_then(IntoGuard::into_guard)
    }
}

/// Implements [`IntoGuard`] for every implementor of each guard trait named, and for an `Arc` of
/// its trait object.
macro_rules! impl_into_guard {
    ($($guard:ident),* $(,)?) => {$(
        // Without `do_not_recommend`, rustc reports the guard trait a wrong value lacks and lists
        // its implementors (or every conversion), instead of the sentence about what a stage
        // takes.
        #[diagnostic::do_not_recommend]
        impl<T: $guard> sealed::Sealed<dyn $guard> for T {}
        #[diagnostic::do_not_recommend]
        impl<T: $guard> IntoGuard<dyn $guard> for T {
            type Presence = Given;
            fn into_guard(self) -> Option<Arc<dyn $guard>> {
                Some(Arc::new(self))
            }
        }
        #[diagnostic::do_not_recommend]
        impl sealed::Sealed<dyn $guard> for Arc<dyn $guard> {}
        #[diagnostic::do_not_recommend]
        impl IntoGuard<dyn $guard> for Arc<dyn $guard> {
            type Presence = Given;
            fn into_guard(self) -> Option<Arc<dyn $guard>> {
                Some(self)
            }
        }
    )*};
}
impl_into_guard!(
    ToolMiddleware,
    Guardrail,
    TrustPolicy,
    PermissionPolicy,
    ArgumentValidator,
    BeforeExecute,
);

mod sealed {
    //! The conversions [`IntoGuard`](super::IntoGuard) allows: the ones this module writes.
    #[diagnostic::on_unimplemented(
        message = "`IntoGuard` cannot be implemented outside prism",
        label = "`{Self}` is not a guard",
        note = "implement the guard trait itself (`TrustPolicy`, `PermissionPolicy`, `ArgumentValidator`, …) for `{Self}`: every guard converts, and an `Option` of one may be `None`"
    )]
    pub trait Sealed<G: ?Sized> {}
}
