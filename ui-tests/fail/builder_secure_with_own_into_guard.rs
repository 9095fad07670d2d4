//! A conversion of one's own cannot claim that a guard was given while handing over none: the
//! secure dispatcher's type would then promise a trust policy that never runs.
use std::sync::Arc;

use prism::dispatch::stage::Given;
use prism::guard::{IntoGuard, TrustPolicy, permission_fn, validator_fn};
use prism::{Dispatcher, ToolRegistry};

struct MaybeTrust;

impl IntoGuard<dyn TrustPolicy> for MaybeTrust {
    type Presence = Given;
    fn into_guard(self) -> Option<Arc<dyn TrustPolicy>> {
        None
    }
}

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .trust(MaybeTrust)
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .build_secure();
}
