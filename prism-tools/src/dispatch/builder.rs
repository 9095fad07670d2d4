//! [`DispatchBuilder`]: guards can only be added in the order they run.
//!
//! The builder's first type parameter is the pipeline stage reached so far. Each stage method is
//! callable only while the builder has not passed that stage, so the code configuring a dispatcher
//! reads in the order the dispatcher executes. Calling a method too late does not compile, and the
//! compiler says why in a sentence (the stage bounds carry `#[diagnostic::on_unimplemented]` and
//! sit in each method's `where` clause, where rustc shows those messages).
//!
//! The last three type parameters record whether trust, permission and a validator were each
//! given a guard for certain (not merely an `Option` of one); [`build_secure`](DispatchBuilder::build_secure)
//! requires all three.
//!
//! Observers (events, ledger, redactor, ownership, limits, clock) are not guards: they may be set
//! at any point.

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::clock::{Clock, SystemClock};
use crate::dispatch::{Dispatcher, EventSink, OwnershipScope, Pipeline, RunLedger};
use crate::effects::{EffectKeySecret, EffectStore};
use crate::filter::{CompiledFilters, ToolFilter};
use crate::guard::{
    ArgumentValidator, BeforeExecute, Given, Guardrail, IntoGuard, Join, Missing, PermissionPolicy,
    Presence, ToolMiddleware, TrustPolicy,
};
use crate::limits::Limits;
use crate::redact::SecretRedactor;
use crate::registry::{MissingParameterSchema, ToolRegistry};
use crate::slot::IntoSlot;
use crate::validation::ToolSchemaError;

use super::prepare::{BuildError, prepare_tools, write_schema_errors};

/// The stages of the pipeline, as types. A builder at stage `X` has configured nothing after `X`.
pub mod stage {
    /// Nothing configured yet.
    #[derive(Debug)]
    pub enum Start {}
    /// Middleware added (pipeline steps 1 and 13).
    #[derive(Debug)]
    pub enum Middleware {}
    /// Guardrails added (steps 2 and 12).
    #[derive(Debug)]
    pub enum Guardrails {}
    /// Filters added (step 4).
    #[derive(Debug)]
    pub enum Filters {}
    /// Trust policy added (step 6).
    #[derive(Debug)]
    pub enum Trust {}
    /// Permission policy added (step 6).
    #[derive(Debug)]
    pub enum Permission {}
    /// Validator added (step 7).
    #[derive(Debug)]
    pub enum Validate {}
    /// Execution policy added with `.before_execute()` (step 8).
    #[derive(Debug)]
    pub enum ExecutionPolicy {}
    /// Effect store set (step 9).
    #[derive(Debug)]
    pub enum Effects {}
}

macro_rules! stage_bound {
    (
        $(#[$doc:meta])*
        $bound:ident, message = $message:literal, note = $note:literal,
        allowed: [$($stage:ident),*]
    ) => {
        $(#[$doc])*
        #[diagnostic::on_unimplemented(
            message = $message,
            label = "this builder is already past that stage",
            note = $note
        )]
        pub trait $bound {}
        // One blanket impl over a sealed marker rather than one impl per stage: with
        // `do_not_recommend`, rustc reports this trait's sentence, points at the calls that moved
        // the builder past the stage, and does not list every stage that would have been accepted.
        #[diagnostic::do_not_recommend]
        impl<S: sealed::$bound> $bound for S {}
        $(impl sealed::$bound for stage::$stage {})*
    };
}

stage_bound!(
    /// Stages at which `.middleware()` may still be called.
    MiddlewareAllowed,
    message = "`.middleware()` must come before every guard, but this builder is already at stage `{Self}`",
    note = "middleware rewrites the call before anything checks it (pipeline step 1): call `.middleware(…)` first",
    allowed: [Start, Middleware]
);
stage_bound!(
    /// Stages at which `.guardrails()` may still be called.
    GuardrailsAllowed,
    message = "`.guardrails()` must come before filters and every other guard, but this builder is already at stage `{Self}`",
    note = "input guardrails run before lookup and every other guard (pipeline step 2): call `.guardrails(…)` before `.filter()`, `.trust()`, `.permission()`, `.validate()`, `.before_execute()` and `.effects()`",
    allowed: [Start, Middleware, Guardrails]
);
stage_bound!(
    /// Stages at which `.filter()` may still be called.
    FilterAllowed,
    message = "`.filter()` must come before trust, permission, validation and execution checks, but this builder is already at stage `{Self}`",
    note = "filters decide which tools exist for the call (pipeline step 4): call `.filter(…)` before `.trust()`, `.permission()`, `.validate()`, `.before_execute()` and `.effects()`",
    allowed: [Start, Middleware, Guardrails, Filters]
);
stage_bound!(
    /// Stages at which `.trust()` may still be called.
    TrustAllowed,
    message = "`.trust()` must come before permission, validation and execution checks, but this builder is already at stage `{Self}`",
    note = "trust is checked before permission (pipeline step 6): call `.trust(…)` before `.permission()`, `.validate()`, `.before_execute()` and `.effects()`",
    allowed: [Start, Middleware, Guardrails, Filters, Trust]
);
stage_bound!(
    /// Stages at which `.permission()` may still be called.
    PermissionAllowed,
    message = "`.permission()` must come before validation and execution checks, but this builder is already at stage `{Self}`",
    note = "permission is checked before validation (pipeline step 6): call `.permission(…)` before `.validate()`, `.before_execute()` and `.effects()`",
    allowed: [Start, Middleware, Guardrails, Filters, Trust, Permission]
);
stage_bound!(
    /// Stages at which `.validate()` may still be called.
    ValidateAllowed,
    message = "`.validate()` must come before the execution policy and the effect store, but this builder is already at stage `{Self}`",
    note = "validators run before the last execution check (pipeline step 7): call `.validate(…)` before `.before_execute()` and `.effects()`",
    allowed: [Start, Middleware, Guardrails, Filters, Trust, Permission, Validate]
);
stage_bound!(
    /// Stages at which `.before_execute()` may still be called.
    BeforeExecuteAllowed,
    message = "`.before_execute()` must come before the effect store, but this builder is already at stage `{Self}`",
    note = "the execution policy has the last word before the effect is claimed (pipeline step 8): call `.before_execute(…)` before `.effects()`",
    allowed: [Start, Middleware, Guardrails, Filters, Trust, Permission, Validate, ExecutionPolicy]
);
stage_bound!(
    /// Stages at which `.effects()` may still be called (once).
    EffectsAllowed,
    message = "`.effects()` can be called only once, as the last guard, but this builder is already at stage `{Self}`",
    note = "a dispatcher claims effects in one store (pipeline step 9): pass a single store to `.effects(…)`",
    allowed: [Start, Middleware, Guardrails, Filters, Trust, Permission, Validate, ExecutionPolicy]
);

/// Required by [`DispatchBuilder::build_secure`]: a trust policy was certainly given.
#[diagnostic::on_unimplemented(
    message = "`.build_secure()` needs a trust policy",
    label = "no trust policy was given for certain",
    note = "call `.trust(policy)` with a policy (an `Option` does not count), or use `.build()`"
)]
pub trait TrustGiven: Presence {}
impl TrustGiven for Given {}

/// Required by [`DispatchBuilder::build_secure`]: a permission policy was certainly given.
#[diagnostic::on_unimplemented(
    message = "`.build_secure()` needs a permission policy",
    label = "no permission policy was given for certain",
    note = "call `.permission(policy)` with a policy (an `Option` does not count), or use `.build()`"
)]
pub trait PermissionGiven: Presence {}
impl PermissionGiven for Given {}

/// Required by [`DispatchBuilder::build_secure`]: a validator was certainly given.
#[diagnostic::on_unimplemented(
    message = "`.build_secure()` needs a validator",
    label = "no validator was given for certain",
    note = "call `.validate(validator)` with a validator (an `Option` does not count), or use `.build()`"
)]
pub trait ValidatorGiven: Presence {}
impl ValidatorGiven for Given {}

mod sealed {
    //! One marker per stage bound, implemented by the stages that may still call that method.
    pub trait MiddlewareAllowed {}
    pub trait GuardrailsAllowed {}
    pub trait FilterAllowed {}
    pub trait TrustAllowed {}
    pub trait PermissionAllowed {}
    pub trait ValidateAllowed {}
    pub trait BeforeExecuteAllowed {}
    pub trait EffectsAllowed {}
}

/// `build_secure` found registry tools it cannot run safely.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecureBuildError {
    /// The tools that declare no parameter schema.
    pub missing_schemas: Vec<MissingParameterSchema>,
    /// The tools whose schema a validator refused, with the offending keyword.
    pub invalid_schemas: Vec<ToolSchemaError>,
}

impl std::fmt::Display for SecureBuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (index, missing) in self.missing_schemas.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{missing}")?;
        }
        if !self.invalid_schemas.is_empty() {
            if !self.missing_schemas.is_empty() {
                f.write_str("; ")?;
            }
            write_schema_errors(f, &self.invalid_schemas)?;
        }
        Ok(())
    }
}

impl std::error::Error for SecureBuildError {}

/// Builds a [`Dispatcher`]. Guards can only be added in the order they run: each stage method is
/// callable only while the builder has not passed its stage (the marker types are in [`stage`]),
/// and a call made too late does not compile, with a sentence saying why.
///
/// ```
/// use prism::{Dispatcher, ToolRegistry};
/// use prism::dispatch::{InMemoryLedger, SecretRedactor};
/// use prism::guard::{permission_fn, trust_fn, validator_fn};
/// use prism::registry::ToolFilter;
///
/// let strict = true;
/// let dispatcher = Dispatcher::builder(ToolRegistry::new())
///     .filter(ToolFilter::deny(["shell"]))
///     .trust(trust_fn(|_tool, _ctx| Ok(())))
///     .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
///     // A conditional guard still advances the stage.
///     .validate(strict.then(|| validator_fn(|_tool, _args| Ok(()))))
///     .ledger(InMemoryLedger::new())
///     .redactor(SecretRedactor::new(["sk-123"]))
///     .build();
/// # let _ = dispatcher;
/// ```
///
/// Adding a guard out of order does not compile:
///
/// ```compile_fail
/// use prism::{Dispatcher, ToolRegistry};
/// use prism::guard::{permission_fn, validator_fn};
///
/// Dispatcher::builder(ToolRegistry::new())
///     .validate(validator_fn(|_tool, _args| Ok(())))
///     .permission(permission_fn(|_tool, _args, _ctx| Ok(()))) // too late
///     .build();
/// ```
#[must_use = "a builder does nothing until `.build()`"]
pub struct DispatchBuilder<S = stage::Start, T = Missing, P = Missing, V = Missing> {
    parts: Parts,
    _stage: StageMarker<S, T, P, V>,
}

/// The builder's type-level state. A `fn` pointer type keeps the builder `Send + Sync` whatever
/// the markers are.
type StageMarker<S, T, P, V> = PhantomData<fn() -> (S, T, P, V)>;

struct Parts {
    registry: ToolRegistry,
    middleware: Vec<Arc<dyn ToolMiddleware>>,
    guardrails: Vec<Arc<dyn Guardrail>>,
    filters: CompiledFilters,
    trust: Vec<Arc<dyn TrustPolicy>>,
    permission: Vec<Arc<dyn PermissionPolicy>>,
    validators: Vec<Arc<dyn ArgumentValidator>>,
    before_execute: Vec<Arc<dyn BeforeExecute>>,
    effects: Option<Arc<dyn EffectStore>>,
    effect_key_secret: Option<EffectKeySecret>,
    events: Vec<Arc<dyn EventSink>>,
    ledger: Option<Arc<dyn RunLedger>>,
    redactor: SecretRedactor,
    ownership: Option<Arc<OwnershipScope>>,
    clock: Arc<dyn Clock>,
    limits: Limits,
}

impl DispatchBuilder {
    pub(crate) fn new(registry: ToolRegistry) -> Self {
        Self {
            parts: Parts {
                registry,
                middleware: Vec::new(),
                guardrails: Vec::new(),
                filters: CompiledFilters::default(),
                trust: Vec::new(),
                permission: Vec::new(),
                validators: Vec::new(),
                before_execute: Vec::new(),
                effects: None,
                effect_key_secret: None,
                events: Vec::new(),
                ledger: None,
                redactor: SecretRedactor::default(),
                ownership: None,
                clock: Arc::new(SystemClock),
                limits: Limits::default(),
            },
            _stage: PhantomData,
        }
    }
}

impl<S, T, P, V> DispatchBuilder<S, T, P, V> {
    fn to<S2, T2, P2, V2>(self) -> DispatchBuilder<S2, T2, P2, V2> {
        DispatchBuilder {
            parts: self.parts,
            _stage: PhantomData,
        }
    }

    /// Adds `tool_call`/`tool_result` middleware (steps 1 and 13). Repeatable: runs in the order
    /// added.
    pub fn middleware<G>(mut self, middleware: G) -> DispatchBuilder<stage::Middleware, T, P, V>
    where
        S: MiddlewareAllowed,
        G: IntoGuard<dyn ToolMiddleware>,
    {
        self.parts.middleware.extend(middleware.into_guard());
        self.to()
    }

    /// Adds a guardrail, for inputs (step 2) and outputs (step 12). Repeatable.
    pub fn guardrails<G>(mut self, guardrail: G) -> DispatchBuilder<stage::Guardrails, T, P, V>
    where
        S: GuardrailsAllowed,
        G: IntoGuard<dyn Guardrail>,
    {
        self.parts.guardrails.extend(guardrail.into_guard());
        self.to()
    }

    /// Adds an allow/deny filter (step 4). Repeatable: a tool must pass every filter.
    pub fn filter(
        mut self,
        filter: impl Into<Option<ToolFilter>>,
    ) -> DispatchBuilder<stage::Filters, T, P, V>
    where
        S: FilterAllowed,
    {
        if let Some(filter) = filter.into() {
            self.parts.filters.add(&filter);
        }
        self.to()
    }

    /// Adds a trust policy (step 6). Repeatable: every policy must agree.
    pub fn trust<G>(
        mut self,
        trust: G,
    ) -> DispatchBuilder<stage::Trust, <T as Join<G::Presence>>::Output, P, V>
    where
        S: TrustAllowed,
        G: IntoGuard<dyn TrustPolicy>,
        T: Join<G::Presence>,
    {
        self.parts.trust.extend(trust.into_guard());
        self.to()
    }

    /// Adds a permission policy (step 6, after trust). Repeatable: every policy must agree.
    pub fn permission<G>(
        mut self,
        permission: G,
    ) -> DispatchBuilder<stage::Permission, T, <P as Join<G::Presence>>::Output, V>
    where
        S: PermissionAllowed,
        G: IntoGuard<dyn PermissionPolicy>,
        P: Join<G::Presence>,
    {
        self.parts.permission.extend(permission.into_guard());
        self.to()
    }

    /// Adds a validator (step 7). Repeatable: every validator must agree. A run's own validator
    /// (from its scope) runs after these, never instead of them.
    pub fn validate<G>(
        mut self,
        validator: G,
    ) -> DispatchBuilder<stage::Validate, T, P, <V as Join<G::Presence>>::Output>
    where
        S: ValidateAllowed,
        G: IntoGuard<dyn ArgumentValidator>,
        V: Join<G::Presence>,
    {
        self.parts.validators.extend(validator.into_guard());
        self.to()
    }

    /// Adds an execution policy consulted immediately before the side effect (step 8).
    /// Repeatable.
    pub fn before_execute<G>(
        mut self,
        policy: G,
    ) -> DispatchBuilder<stage::ExecutionPolicy, T, P, V>
    where
        S: BeforeExecuteAllowed,
        G: IntoGuard<dyn BeforeExecute>,
    {
        self.parts.before_execute.extend(policy.into_guard());
        self.to()
    }

    /// Sets the effect store that claims calls of tools with an effect policy (step 9).
    pub fn effects<G>(mut self, store: G) -> DispatchBuilder<stage::Effects, T, P, V>
    where
        S: EffectsAllowed,
        G: IntoSlot<dyn EffectStore>,
    {
        self.parts.effects = store.into_slot();
        self.to()
    }

    /// Adds an event sink. Repeatable.
    pub fn events<G: IntoSlot<dyn EventSink>>(mut self, sink: G) -> Self {
        self.parts.events.extend(sink.into_slot());
        self
    }

    /// Sets the ledger that receives a row per lifecycle transition.
    pub fn ledger<G: IntoSlot<dyn RunLedger>>(mut self, ledger: G) -> Self {
        self.parts.ledger = ledger.into_slot();
        self
    }

    /// Keys effect keys with `secret` ([`EffectKey::keyed`](crate::EffectKey::keyed)), so a
    /// reader of the effect store cannot recover low-entropy arguments from them. Without it they
    /// are a plain SHA-256 ([`EffectKey::new`](crate::EffectKey::new)).
    pub fn effect_key_secret(mut self, secret: EffectKeySecret) -> Self {
        self.parts.effect_key_secret = Some(secret);
        self
    }

    /// Adds `redactor`'s secrets to those taken out of results, errors, events and rows. A
    /// second call adds to the first rather than replacing it, so a secret once named stays
    /// redacted (and two that overlap are redacted as one).
    pub fn redactor(mut self, redactor: SecretRedactor) -> Self {
        self.parts.redactor = self.parts.redactor.union(&redactor);
        self
    }

    /// Sets the ownership scope copied into every ledger row.
    pub fn ownership(mut self, ownership: OwnershipScope) -> Self {
        self.parts.ownership = Some(Arc::new(ownership));
        self
    }

    /// Sets the argument, output and progress limits. Depth bounds over
    /// [`Limits::MAX_DEPTH`] are lowered to it.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.parts.limits = limits.capped();
        self
    }

    /// Sets the clock used for timestamps and effect leases.
    pub fn clock(mut self, clock: impl Clock + 'static) -> Self {
        self.parts.clock = Arc::new(clock);
        self
    }

    /// Builds the dispatcher. Schemas are not checked ahead: a tool whose schema a validator
    /// refuses is refused at each call (`invalid_tool_schema`). Prefer
    /// [`try_build`](Self::try_build), which reports such tools now.
    pub fn build(self) -> Dispatcher {
        self.into_dispatcher(false)
    }

    /// Builds the dispatcher after every validator has [prepared](ArgumentValidator::prepare) every
    /// registered tool; fails with each refused schema, its tool and the offending keyword.
    pub fn try_build(self) -> Result<Dispatcher, BuildError> {
        let invalid_schemas = prepare_tools(&self.parts.registry, &self.parts.validators);
        if !invalid_schemas.is_empty() {
            return Err(BuildError { invalid_schemas });
        }
        Ok(self.into_dispatcher(false))
    }

    /// Builds a dispatcher that refuses any tool that declares no parameter schema (see
    /// [`ToolDefinition::declares_parameters`](crate::ToolDefinition::declares_parameters)): at
    /// build time for the tools registered now (the error names them), and from then on at
    /// registration, because the registry (every clone of it) takes on that rule. Dispatch checks
    /// it again (`validation_failed`) for definitions that reach it another way, such as a run's
    /// pinned tools. Like [`try_build`](Self::try_build), it also fails when a
    /// validator refuses a tool's schema. Only compiles when trust, permission and a validator
    /// were each certainly given.
    pub fn build_secure(self) -> Result<SecureDispatcher, SecureBuildError>
    where
        T: TrustGiven,
        P: PermissionGiven,
        V: ValidatorGiven,
    {
        let registry = &self.parts.registry;
        let invalid_schemas = prepare_tools(registry, &self.parts.validators);
        // The registry's rule is set only when the build succeeds.
        let missing_schemas = if invalid_schemas.is_empty() {
            registry.require_parameters().err().unwrap_or_default()
        } else {
            MissingParameterSchema::among(registry.snapshot().iter())
        };
        if !missing_schemas.is_empty() || !invalid_schemas.is_empty() {
            return Err(SecureBuildError {
                missing_schemas,
                invalid_schemas,
            });
        }
        Ok(SecureDispatcher(self.into_dispatcher(true)))
    }

    fn into_dispatcher(self, require_schema: bool) -> Dispatcher {
        let parts = self.parts;
        Dispatcher::from_pipeline(Pipeline {
            registry: parts.registry,
            middleware: parts.middleware,
            guardrails: parts.guardrails,
            filters: parts.filters,
            trust: parts.trust,
            permission: parts.permission,
            validators: parts.validators,
            before_execute: parts.before_execute,
            effects: parts.effects,
            effect_key_secret: parts.effect_key_secret,
            effect_owner: effect_owner(),
            events: parts.events,
            ledger: parts.ledger,
            redactor: Arc::new(parts.redactor),
            ownership: parts.ownership,
            clock: parts.clock,
            limits: parts.limits,
            require_schema,
        })
    }
}

/// A unique owner id for effect claims: process, start time and a counter.
fn effect_owner() -> Arc<str> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let started = SystemClock.now_millis();
    format!(
        "{}-{started}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
    .into()
}

/// A [`Dispatcher`] whose type guarantees trust, permission and validation guards, and that refuses
/// tools without a parameter schema. Made by [`DispatchBuilder::build_secure`].
#[derive(Clone, Debug)]
pub struct SecureDispatcher(Dispatcher);

impl SecureDispatcher {
    /// Runs one call; see [`Dispatcher::dispatch`].
    pub async fn dispatch(
        &self,
        call: crate::ToolCall,
        ctx: &crate::ToolExecutionContext,
    ) -> Result<crate::ToolResult, crate::Tripwire> {
        self.0.dispatch(call, ctx).await
    }

    /// The underlying dispatcher (still refusing schema-less tools).
    pub fn as_dispatcher(&self) -> &Dispatcher {
        &self.0
    }
}
