//! The typestate of [`DispatchBuilder`](super::DispatchBuilder). Users never name these.
//!
//! The builder's first parameter is the last stage configured (one empty enum per pipeline step,
//! [`Start`] to [`Effects`]); each guard method requires, through an `…Allowed` trait, that the
//! builder is still before that step, and the compiler names the right order when it is not. The
//! other three parameters record whether trust, permission and a validator were certainly given
//! ([`Given`] or [`Missing`]); [`build_secure`](super::DispatchBuilder::build_secure) needs
//! [`TrustGiven`], [`PermissionGiven`] and [`ValidatorGiven`]. They appear here so that the
//! builder's signatures are documented, not to be used.

pub use prism_tools::dispatch::stage::{
    Effects, ExecutionPolicy, Filters, Guardrails, Middleware, Permission, Start, Trust, Validate,
};
pub use prism_tools::dispatch::{
    BeforeExecuteAllowed, EffectsAllowed, FilterAllowed, GuardrailsAllowed, MiddlewareAllowed,
    PermissionAllowed, PermissionGiven, TrustAllowed, TrustGiven, ValidateAllowed, ValidatorGiven,
};
pub use prism_tools::guard::{Given, Join, Missing, Presence};
