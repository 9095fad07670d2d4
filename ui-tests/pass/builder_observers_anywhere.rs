//! Observers are not guards: they may be set at any stage, before, between and after guards.
use prism::{Dispatcher, ToolRegistry};
use prism::dispatch::{
    CollectingSink, InMemoryLedger, Limits, ManualClock, OwnershipScope, SecretRedactor, event_fn,
};
use prism::effects::InMemoryEffectStore;
use prism::guard::{
    RulePack, before_execute_fn, call_middleware, permission_fn, trust_fn, validator_fn,
};
use prism::registry::ToolFilter;

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .events(CollectingSink::new())
        .middleware(call_middleware(|_call| {}))
        .ledger(InMemoryLedger::new())
        .guardrails(RulePack::new("pii"))
        .redactor(SecretRedactor::new(["sk-1"]))
        .filter(ToolFilter::deny(["shell"]))
        .ownership(OwnershipScope::default())
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .limits(Limits::default())
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .clock(ManualClock::new(0))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .events(event_fn(|_event| {}))
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok(())))
        .effects(InMemoryEffectStore::new())
        .events(CollectingSink::new())
        .ledger(InMemoryLedger::new())
        .build();
}
