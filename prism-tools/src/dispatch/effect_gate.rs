//! Step 9 and its settlement: claiming a tool's effect before it runs (at most once, or say
//! unknown) and recording what the model was told once the call has its result.
//!
//! Only tools with an effect policy, on a dispatcher with an effect store, reach the store; every
//! other call passes without polling a future or allocating.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::Pipeline;
use crate::call::{ErrorCode, ErrorInfo, ToolResult};
use crate::effects::{
    BoxFuture, Claim, ClaimRequest, EffectKey, EffectPolicy, EffectStore, RecordedOutcome,
    Resolution,
};
use crate::panic::guarded_future;

/// What the effect gate decided.
pub(super) enum EffectGate {
    /// Run the tool; `Some` when a claim was taken and its outcome must be recorded.
    Run(Option<Claimed>),
    /// The effect already happened: answer with its recorded outcome.
    Replay(RecordedOutcome),
    /// Do not run the tool.
    Refuse(ErrorInfo),
}

/// A claim taken: its key, and the owner id it was taken under.
///
/// The owner is the dispatcher's id and a number of the claim's own. A claim whose lease ran out
/// can be released and taken again through the same dispatcher; the first call's late outcome
/// must then find itself no longer the owner, not close the newer claim.
pub(super) struct Claimed {
    key: EffectKey,
    owner: String,
}

/// The claim of a tool with an effect policy on a dispatcher with an effect store; `None` (and
/// no future to poll) for every other call.
pub(super) fn claim_effect<'a>(
    p: &'a Pipeline,
    tool: &'a str,
    policy: Option<&'a EffectPolicy>,
    arguments: &'a Value,
) -> Option<BoxFuture<'a, EffectGate>> {
    let (Some(store), Some(policy)) = (&p.effects, policy) else {
        return None;
    };
    Some(Box::pin(claim(p, store, tool, policy, arguments)))
}

async fn claim(
    p: &Pipeline,
    store: &Arc<dyn EffectStore>,
    tool: &str,
    policy: &EffectPolicy,
    arguments: &Value,
) -> EffectGate {
    let key = match &p.effect_key_secret {
        Some(secret) => EffectKey::keyed(tool, policy, arguments, secret),
        None => EffectKey::new(tool, policy, arguments),
    };
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let owner = format!(
        "{}#{}",
        p.effect_owner,
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let request = ClaimRequest {
        key: &key,
        owner: &owner,
        now: p.now(),
        lease: policy.lease,
    };
    let claim = match guarded_future(|| store.claim(request)).await {
        Ok(claim) => claim,
        Err(panic) => Err(crate::effects::EffectStoreError::Backend(format!(
            "the effect store panicked: {panic}"
        ))),
    };
    match claim {
        Ok(Claim::Acquired) => EffectGate::Run(Some(Claimed { key, owner })),
        Ok(Claim::Recorded(outcome)) => EffectGate::Replay(outcome),
        Ok(Claim::InFlight { .. }) => EffectGate::Refuse(ErrorInfo::new(
            ErrorCode::EffectInFlight,
            format!("Tool {tool} is already running with these arguments"),
        )),
        Ok(Claim::Unknown { .. }) => EffectGate::Refuse(ErrorInfo::new(
            ErrorCode::EffectOutcomeUnknown,
            format!(
                "An earlier call of tool {tool} with these arguments never recorded its outcome; it is not run again until the host resolves it"
            ),
        )),
        Err(error) => EffectGate::Refuse(ErrorInfo::new(
            ErrorCode::EffectStoreError,
            format!("Tool {tool} was not run: {error}"),
        )),
    }
}

/// Records what the model was told, and whether a tripwire stopped the run, so a replay does
/// the same. Panics and cancellations are never recorded: whether their effect happened is
/// unknown.
pub(super) async fn record_effect(
    p: &Pipeline,
    claimed: Claimed,
    result: &ToolResult,
    tripped: bool,
) {
    let Some(store) = &p.effects else {
        return;
    };
    // Boxed so that calls without an effect carry none of this in their future.
    Box::pin(complete_effect(store, claimed, result, tripped)).await;
}

/// Releases a claim whose tool never started (its call was cancelled while the claim was being
/// taken): the effect certainly did not happen, so the next call with these arguments runs the
/// tool rather than reading unknown once the lease ends.
pub(super) async fn release_effect(p: &Pipeline, claimed: Claimed) {
    let Some(store) = &p.effects else {
        return;
    };
    // Boxed, as recording is: calls without an effect carry none of this in their future.
    Box::pin(release(store, claimed.key)).await;
}

async fn release(store: &Arc<dyn EffectStore>, key: EffectKey) {
    let released = guarded_future(|| store.resolve(&key, Resolution::Release)).await;
    match released {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            tracing::error!(target: "prism_tools", key = %key, %error, "could not release the effect claim of a cancelled call")
        }
        Err(_) => {
            tracing::error!(target: "prism_tools", key = %key, "the effect store panicked while releasing a claim")
        }
    }
}

async fn complete_effect(
    store: &Arc<dyn EffectStore>,
    claimed: Claimed,
    result: &ToolResult,
    tripped: bool,
) {
    let Claimed { key, owner } = claimed;
    let outcome = RecordedOutcome::of(&result.outcome, result.content(), tripped);
    let completed = guarded_future(|| store.complete(&key, &owner, outcome)).await;
    match completed {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            tracing::error!(target: "prism_tools", key = %key, %error, "could not record an effect outcome")
        }
        Err(_) => {
            tracing::error!(target: "prism_tools", key = %key, "the effect store panicked while recording an outcome")
        }
    }
}
