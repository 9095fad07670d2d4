//! The guards a [`DispatchBuilder`](crate::dispatch::DispatchBuilder) takes, in pipeline order.
//!
//! Middleware ([`ToolMiddleware`], or [`call_middleware`] and [`result_middleware`]), guardrails
//! ([`Guardrail`], [`RulePack`]), trust and permission ([`TrustPolicy`], [`PermissionPolicy`]),
//! argument validators ([`ArgumentValidator`]) and the last check before a side effect
//! ([`BeforeExecute`]). Each trait has a closure constructor (`trust_fn`, `permission_fn`,
//! `validator_fn`, `before_execute_fn`); a guard answers with a [`Verdict`], ready now or
//! pending on a future. [`AllowAll`] and [`DenyAll`] are the fixed answers.

pub use prism_tools::guard::{
    AllowAll, ArgumentValidator, BeforeExecute, CallRewrite, DenyAll, Guardrail, GuardrailDecision,
    GuardrailHit, GuardrailRule, IntoGuard, IntoVerdict, PermissionPolicy, ResultRewrite,
    RuleAction, RulePack, ToolMiddleware, TrustPolicy, Verdict, before_execute_fn, call_middleware,
    permission_fn, result_middleware, trust_fn, validator_fn,
};
