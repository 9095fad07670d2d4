//! The effect store contract, as the in-memory store defines it: every store must pass every case.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::join_all;
use prism_tools::call::ContentBlock;
use prism_tools::effects::{EffectRecovery, RecoveryOutcome};
use prism_tools::{
    BlockReason, Claim, ClaimRequest, Dispatcher, EffectKey, EffectPolicy, EffectState,
    EffectStore, EffectStoreError, ErrorCode, ErrorInfo, ManualClock, RecordedOutcome, Resolution,
    ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry,
};
use serde_json::{Value, json};

const MINUTE: Duration = Duration::from_secs(60);

fn key(name: &str) -> EffectKey {
    EffectKey::new(name, &EffectPolicy::default(), &json!({"case": name}))
}

fn request<'a>(key: &'a EffectKey, owner: &'a str, now: u64) -> ClaimRequest<'a> {
    ClaimRequest {
        key,
        owner,
        now,
        lease: MINUTE,
    }
}

pub async fn claim_acquires_once_and_reports_state<S: EffectRecovery>(store: &Arc<S>) {
    let key = key("acquire");
    assert_eq!(store.state(&key).await.unwrap(), None);
    assert_eq!(
        store.claim(request(&key, "a", 1_000)).await.unwrap(),
        Claim::Acquired
    );
    assert_eq!(
        store.state(&key).await.unwrap(),
        Some(EffectState::Claimed {
            owner: "a".into(),
            claimed_at: 1_000,
            lease_expires_at: 61_000,
        })
    );
}

pub async fn live_claim_reads_in_flight_even_to_its_owner<S: EffectRecovery>(store: &Arc<S>) {
    let key = key("in-flight");
    store.claim(request(&key, "a", 0)).await.unwrap();
    let in_flight = Claim::InFlight {
        owner: "a".into(),
        lease_expires_at: 60_000,
    };
    assert_eq!(store.claim(request(&key, "b", 1)).await.unwrap(), in_flight);
    assert_eq!(
        store.claim(request(&key, "a", 59_999)).await.unwrap(),
        in_flight
    );
}

pub async fn expired_claim_reads_unknown_and_is_never_taken_again<S: EffectRecovery>(
    store: &Arc<S>,
) {
    let key = key("unknown");
    store.claim(request(&key, "a", 0)).await.unwrap();
    for (owner, now) in [("b", 60_000), ("a", 60_001), ("c", u64::from(u32::MAX))] {
        assert_eq!(
            store.claim(request(&key, owner, now)).await.unwrap(),
            Claim::Unknown { owner: "a".into() }
        );
    }
    assert!(matches!(
        store.state(&key).await.unwrap(),
        Some(EffectState::Claimed { .. })
    ));
}

pub async fn recorded_outcomes_replay_to_everyone<S: EffectRecovery>(store: &Arc<S>) {
    let value = RecordedOutcome::Value(json!({"receipt": 42}));
    let error = RecordedOutcome::Error(ErrorInfo::new(ErrorCode::ToolError, "card declined"));
    for (name, outcome) in [("value", value), ("error", error)] {
        let key = key(name);
        store.claim(request(&key, "a", 0)).await.unwrap();
        store.complete(&key, "a", outcome.clone()).await.unwrap();
        for (owner, now) in [("a", 1), ("b", 2), ("c", 10_000_000)] {
            assert_eq!(
                store.claim(request(&key, owner, now)).await.unwrap(),
                Claim::Recorded(outcome.clone())
            );
        }
        assert_eq!(
            store.state(&key).await.unwrap(),
            Some(EffectState::Recorded(outcome))
        );
    }
}

pub async fn complete_requires_the_owner_and_an_open_claim<S: EffectRecovery>(store: &Arc<S>) {
    let key = key("owner");
    let outcome = RecordedOutcome::Value(json!(1));
    assert_eq!(
        store.complete(&key, "a", outcome.clone()).await,
        Err(EffectStoreError::NotFound)
    );
    store.claim(request(&key, "a", 0)).await.unwrap();
    assert_eq!(
        store.complete(&key, "b", outcome.clone()).await,
        Err(EffectStoreError::NotOwner)
    );
    store.complete(&key, "a", outcome.clone()).await.unwrap();
    // A second outcome never replaces the first.
    assert_eq!(
        store
            .complete(&key, "a", RecordedOutcome::Value(json!(2)))
            .await,
        Err(EffectStoreError::NotOwner)
    );
    assert_eq!(
        store.state(&key).await.unwrap(),
        Some(EffectState::Recorded(outcome))
    );
}

pub async fn owner_may_record_after_its_lease<S: EffectRecovery>(store: &Arc<S>) {
    let key = key("late");
    store.claim(request(&key, "a", 0)).await.unwrap();
    assert!(matches!(
        store.claim(request(&key, "b", 70_000)).await.unwrap(),
        Claim::Unknown { .. }
    ));
    let outcome = RecordedOutcome::Value(json!("done late"));
    store.complete(&key, "a", outcome.clone()).await.unwrap();
    assert_eq!(
        store.claim(request(&key, "b", 80_000)).await.unwrap(),
        Claim::Recorded(outcome)
    );
}

pub async fn resolve_records_or_releases<S: EffectRecovery>(store: &Arc<S>) {
    let recorded = key("resolve-record");
    let released = key("resolve-release");
    let outcome = RecordedOutcome::Value(json!({"reconciled": true}));
    assert_eq!(
        store.resolve(&recorded, Resolution::Release).await,
        Err(EffectStoreError::NotFound)
    );
    for key in [&recorded, &released] {
        store.claim(request(key, "a", 0)).await.unwrap();
    }
    store
        .resolve(&recorded, Resolution::Record(outcome.clone()))
        .await
        .unwrap();
    assert_eq!(
        store.claim(request(&recorded, "b", 90_000)).await.unwrap(),
        Claim::Recorded(outcome)
    );
    store.resolve(&released, Resolution::Release).await.unwrap();
    assert_eq!(store.state(&released).await.unwrap(), None);
    assert_eq!(
        store.claim(request(&released, "b", 90_000)).await.unwrap(),
        Claim::Acquired
    );
}

pub async fn unknown_effects_lists_expired_open_claims_oldest_first<S: EffectRecovery>(
    store: &Arc<S>,
) {
    let (old, newer, live, done) = (key("old"), key("newer"), key("live"), key("done"));
    store.claim(request(&old, "a", 0)).await.unwrap();
    store.claim(request(&newer, "b", 5)).await.unwrap();
    store.claim(request(&live, "c", 50_000)).await.unwrap();
    store.claim(request(&done, "d", 0)).await.unwrap();
    store
        .complete(&done, "d", RecordedOutcome::Value(Value::Null))
        .await
        .unwrap();

    let unknown = store.unknown_effects(60_005, 10).await.unwrap();
    let listed: Vec<_> = unknown
        .iter()
        .map(|effect| (effect.key.clone(), effect.owner.as_str(), effect.claimed_at))
        .collect();
    assert_eq!(listed, [(old.clone(), "a", 0), (newer, "b", 5)]);
    assert_eq!(unknown[0].lease_expires_at, 60_000);
    assert_eq!(store.unknown_effects(60_005, 1).await.unwrap().len(), 1);
    assert!(store.unknown_effects(59_999, 10).await.unwrap().is_empty());
}

pub async fn resolve_unknown_only_touches_the_claim_it_saw<S: EffectRecovery>(store: &Arc<S>) {
    let (late, reclaimed, fresh) = (key("late-owner"), key("reclaimed"), key("fresh"));
    for key in [&late, &reclaimed, &fresh] {
        store.claim(request(key, "a", 0)).await.unwrap();
    }
    let seen = store.unknown_effects(60_000, 10).await.unwrap();
    let find = |key: &EffectKey| seen.iter().find(|effect| effect.key == *key).unwrap();
    let host = RecordedOutcome::Value(json!("host says"));

    // The owner recorded its outcome after the host looked: the host's decision is stale.
    let owner = RecordedOutcome::Value(json!("owner says"));
    store.complete(&late, "a", owner.clone()).await.unwrap();
    let outcome = store
        .resolve_unknown(find(&late), Resolution::Record(host.clone()))
        .await
        .unwrap();
    assert_eq!(outcome, RecoveryOutcome::Stale);
    assert_eq!(
        store.state(&late).await.unwrap(),
        Some(EffectState::Recorded(owner))
    );

    // Released and claimed anew by someone else: the new claim is not the one the host saw.
    store
        .resolve(&reclaimed, Resolution::Release)
        .await
        .unwrap();
    store.claim(request(&reclaimed, "b", 61_000)).await.unwrap();
    let outcome = store
        .resolve_unknown(find(&reclaimed), Resolution::Release)
        .await
        .unwrap();
    assert_eq!(outcome, RecoveryOutcome::Stale);
    assert!(matches!(
        store.state(&reclaimed).await.unwrap(),
        Some(EffectState::Claimed { owner, .. }) if owner == "b"
    ));

    // Unchanged: applied.
    let outcome = store
        .resolve_unknown(find(&fresh), Resolution::Record(host.clone()))
        .await
        .unwrap();
    assert_eq!(outcome, RecoveryOutcome::Applied);
    assert_eq!(
        store.claim(request(&fresh, "c", 70_000)).await.unwrap(),
        Claim::Recorded(host)
    );
}

pub async fn concurrent_claims_have_exactly_one_winner<S: EffectRecovery>(store: &Arc<S>) {
    let key = key("contended");
    let owners: Vec<String> = (0..16).map(|n| format!("owner-{n}")).collect();
    let claims = join_all(
        owners
            .iter()
            .map(|owner| store.claim(request(&key, owner, 0))),
    )
    .await;
    let winners: Vec<_> = owners
        .iter()
        .zip(&claims)
        .filter(|(_, claim)| matches!(claim, Ok(Claim::Acquired)))
        .map(|(owner, _)| owner.clone())
        .collect();
    assert_eq!(winners.len(), 1, "claims: {claims:?}");
    let expected = Claim::InFlight {
        owner: winners[0].clone(),
        lease_expires_at: 60_000,
    };
    for claim in claims {
        let claim = claim.unwrap();
        assert!(claim == Claim::Acquired || claim == expected, "{claim:?}");
    }
}

pub async fn outcomes_round_trip_exactly<S: EffectRecovery>(store: &Arc<S>) {
    let value = json!({
        "text": "naïve café ✓ \u{0} \"quoted\" \\ line\nbreak",
        "big": u64::MAX,
        "negative": i64::MIN,
        "float": 0.1,
        "nested": [[], {}, [null, true, {"k": [1, 2.5e-8]}]],
    });
    let mut blocked = ErrorInfo::blocked(BlockReason::PermissionDenied, "not today");
    blocked.code = ErrorCode::Custom("bank.rejected".into());
    for (name, outcome) in [
        ("exact-value", RecordedOutcome::Value(value)),
        ("exact-error", RecordedOutcome::Error(blocked.clone())),
        ("exact-tripped", RecordedOutcome::Tripped(blocked)),
        (
            "exact-content",
            RecordedOutcome::WithContent {
                value: json!({"points": 12}),
                content: vec![
                    ContentBlock::text("naïve ✓"),
                    ContentBlock::image_bytes(&[0x89, b'P', b'N', b'G', 0], "image/png"),
                ],
            },
        ),
    ] {
        let key = key(name);
        store.claim(request(&key, "a", 0)).await.unwrap();
        store.complete(&key, "a", outcome.clone()).await.unwrap();
        assert_eq!(
            store.claim(request(&key, "b", 1)).await.unwrap(),
            Claim::Recorded(outcome)
        );
    }
}

/// Through the dispatcher: the tool's body runs once, later calls get the recorded result, and
/// a claim left open reads in flight, then unknown, and is never run.
pub async fn dispatcher_runs_an_effect_at_most_once<S: EffectRecovery>(store: &Arc<S>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let pay = ToolDefinition::builder("pay")
        .effect(EffectPolicy::new(MINUTE).with_scope("tenant-1"))
        .run_sync(move |args: &Value, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            match args["cents"].as_i64() {
                Some(cents) if cents > 0 => Ok(json!({"paid": cents})),
                _ => Err("the amount must be positive".into()),
            }
        });
    let clock = ManualClock::new(1_000);
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([pay]))
        .effects(store.clone() as Arc<dyn EffectStore>)
        .clock(clock.clone())
        .build();
    let ctx = ToolExecutionContext::new();
    let call = |id: &str, cents: i64| ToolCall::new(id, "pay", json!({"cents": cents}));

    for id in ["c1", "c2"] {
        let result = dispatcher.dispatch(call(id, 250), &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!({"paid": 250})));
    }
    for id in ["c3", "c4"] {
        let result = dispatcher.dispatch(call(id, -1), &ctx).await.unwrap();
        assert_eq!(result.error_info().unwrap().code, ErrorCode::ToolError);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    // A claim some other worker took and never finished.
    let policy = EffectPolicy::new(MINUTE).with_scope("tenant-1");
    let orphan = EffectKey::new("pay", &policy, &json!({"cents": 999}));
    store
        .claim(request(&orphan, "crashed-worker", 1_000))
        .await
        .unwrap();
    let result = dispatcher.dispatch(call("c5", 999), &ctx).await.unwrap();
    assert_eq!(result.error_info().unwrap().code, ErrorCode::EffectInFlight);
    clock.advance(60_000);
    let result = dispatcher.dispatch(call("c6", 999), &ctx).await.unwrap();
    assert_eq!(
        result.error_info().unwrap().code,
        ErrorCode::EffectOutcomeUnknown
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}
