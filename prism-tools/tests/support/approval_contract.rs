//! The approval store contract, as the in-memory store defines it: every store must pass every
//! case. Cases named `shared_*` get two handles on the same storage (for the SQL stores, two
//! connections, as two processes would have) and race them.

use futures_util::future::join_all;
use prism_tools::run::{
    ApprovalDecision, ApprovalKey, ApprovalRecord, ApprovalState, ApprovalStore,
    ApprovalStoreError, ApprovalVerdict, PendingApproval,
};
use serde_json::{Value, json};

fn key(session: &str, call: &str, arguments: &Value) -> ApprovalKey {
    ApprovalKey::new(session, call.into(), "wipe", arguments)
}

fn asked(session: &str, call: &str, arguments: Value) -> PendingApproval {
    PendingApproval {
        key: key(session, call, &arguments),
        run_id: format!("run-{session}"),
        arguments,
        requested_at: 1_700_000_000_000,
    }
}

fn record(pending: &PendingApproval, state: ApprovalState) -> ApprovalRecord {
    ApprovalRecord {
        pending: pending.clone(),
        state,
    }
}

fn refused(reason: &str) -> ApprovalVerdict {
    ApprovalVerdict::Refused {
        reason: Some(reason.into()),
    }
}

pub async fn request_records_a_pending_approval<S: ApprovalStore>(store: &S) {
    let pending = asked("s1", "c1", json!({"path": "/tmp"}));
    assert_eq!(store.get(&pending.key).await.unwrap(), None);
    store.request(&pending).await.unwrap();
    assert_eq!(
        store.get(&pending.key).await.unwrap(),
        Some(record(&pending, ApprovalState::Pending))
    );
    assert_eq!(store.pending("s1").await.unwrap(), [pending]);
}

pub async fn requesting_the_same_key_again_changes_nothing<S: ApprovalStore>(store: &S) {
    let pending = asked("s1", "c1", json!({"path": "/tmp"}));
    store.request(&pending).await.unwrap();
    let mut again = pending.clone();
    again.run_id = "run-later".into();
    again.requested_at += 5_000;
    store.request(&again).await.unwrap();
    assert_eq!(
        store.get(&pending.key).await.unwrap(),
        Some(record(&pending, ApprovalState::Pending))
    );
    assert_eq!(store.pending("s1").await.unwrap(), [pending]);
}

pub async fn the_same_call_under_another_key_is_a_mismatch<S: ApprovalStore>(store: &S) {
    let pending = asked("s1", "c1", json!({"path": "/tmp"}));
    store.request(&pending).await.unwrap();
    let other_arguments = asked("s1", "c1", json!({"path": "/"}));
    let mut other_tool = pending.clone();
    other_tool.key.tool = "format_disk".into();
    for other in [&other_arguments, &other_tool] {
        assert_eq!(
            store.request(other).await,
            Err(ApprovalStoreError::KeyMismatch)
        );
        assert_eq!(
            store.get(&other.key).await,
            Err(ApprovalStoreError::KeyMismatch)
        );
        assert_eq!(
            store.decide(&ApprovalDecision::approve(&other.key)).await,
            Err(ApprovalStoreError::KeyMismatch)
        );
        assert_eq!(
            store.consume(&other.key).await,
            Err(ApprovalStoreError::KeyMismatch)
        );
    }
    assert_eq!(
        store.get(&pending.key).await.unwrap(),
        Some(record(&pending, ApprovalState::Pending)),
        "nothing the mismatches tried changed the approval"
    );
}

pub async fn unknown_calls_are_not_found<S: ApprovalStore>(store: &S) {
    let pending = asked("s1", "c1", json!({}));
    store.request(&pending).await.unwrap();
    for unknown in [key("s1", "c2", &json!({})), key("s2", "c1", &json!({}))] {
        assert_eq!(store.get(&unknown).await, Ok(None));
        assert_eq!(
            store.decide(&ApprovalDecision::approve(&unknown)).await,
            Err(ApprovalStoreError::NotFound)
        );
        assert_eq!(
            store.consume(&unknown).await,
            Err(ApprovalStoreError::NotFound)
        );
    }
    assert!(store.pending("s2").await.unwrap().is_empty());
}

pub async fn a_decision_is_recorded_once_and_consumed_once<S: ApprovalStore>(store: &S) {
    let pending = asked("s1", "c1", json!({"path": "/tmp"}));
    let key = &pending.key;
    store.request(&pending).await.unwrap();
    assert_eq!(
        store.consume(key).await,
        Err(ApprovalStoreError::NotDecided)
    );

    store.decide(&ApprovalDecision::approve(key)).await.unwrap();
    let decided = ApprovalState::Decided {
        verdict: ApprovalVerdict::Approved,
    };
    assert_eq!(
        store.get(key).await.unwrap(),
        Some(record(&pending, decided))
    );
    assert!(store.pending("s1").await.unwrap().is_empty());
    assert_eq!(
        store
            .decide(&ApprovalDecision::refuse(key, "changed my mind"))
            .await,
        Err(ApprovalStoreError::AlreadyDecided)
    );

    assert_eq!(store.consume(key).await, Ok(ApprovalVerdict::Approved));
    let consumed = ApprovalState::Consumed {
        verdict: ApprovalVerdict::Approved,
    };
    assert_eq!(
        store.get(key).await.unwrap(),
        Some(record(&pending, consumed.clone()))
    );
    assert_eq!(
        store.consume(key).await,
        Err(ApprovalStoreError::AlreadyConsumed)
    );
    assert_eq!(
        store.decide(&ApprovalDecision::approve(key)).await,
        Err(ApprovalStoreError::AlreadyConsumed)
    );
    // Asking again for a call already acted on does not reopen it.
    store.request(&pending).await.unwrap();
    assert_eq!(
        store.get(key).await.unwrap(),
        Some(record(&pending, consumed))
    );
    assert!(store.pending("s1").await.unwrap().is_empty());
}

pub async fn verdicts_round_trip_exactly<S: ApprovalStore>(store: &S) {
    let with_reason = refused("naïve \"quoted\" \\ line\nbreak ✓");
    let without_reason = ApprovalVerdict::Refused { reason: None };
    for (call, verdict) in [
        ("approved", ApprovalVerdict::Approved),
        ("refused", with_reason),
        ("refused-silently", without_reason),
    ] {
        let pending = asked("s1", call, json!({"call": call}));
        store.request(&pending).await.unwrap();
        let decision = ApprovalDecision {
            key: pending.key.clone(),
            verdict: verdict.clone(),
        };
        store.decide(&decision).await.unwrap();
        assert_eq!(
            store.get(&pending.key).await.unwrap().unwrap().state,
            ApprovalState::Decided {
                verdict: verdict.clone()
            }
        );
        assert_eq!(store.consume(&pending.key).await, Ok(verdict));
    }
}

pub async fn arguments_and_details_round_trip_exactly<S: ApprovalStore>(store: &S) {
    let arguments = json!({
        "text": "naïve café ✓ \u{0} \"quoted\" \\ line\nbreak",
        "big": u64::MAX,
        "negative": i64::MIN,
        "float": 0.1,
        "nested": [[], {}, [null, true, {"k": [1, 2.5e-8]}]],
    });
    let mut pending = asked("session ✓", "call/1", arguments);
    pending.run_id = "run \"α\"".into();
    pending.requested_at = i64::MAX as u64;
    store.request(&pending).await.unwrap();
    assert_eq!(
        store.get(&pending.key).await.unwrap(),
        Some(record(&pending, ApprovalState::Pending))
    );
    assert_eq!(store.pending("session ✓").await.unwrap(), [pending]);
}

pub async fn pending_lists_a_sessions_waiting_calls_in_request_order<S: ApprovalStore>(store: &S) {
    // Requested in an order that is neither the ids' nor the hashes' order.
    let waiting: Vec<_> = ["c3", "c1", "c10", "c2"]
        .into_iter()
        .map(|call| asked("s1", call, json!({ "call": call })))
        .collect();
    let elsewhere = asked("s2", "c1", json!({"call": "c1"}));
    for pending in waiting.iter().chain([&elsewhere]) {
        store.request(pending).await.unwrap();
    }
    store
        .decide(&ApprovalDecision::refuse(&waiting[1].key, "no"))
        .await
        .unwrap();

    let expected = [&waiting[0], &waiting[2], &waiting[3]].map(Clone::clone);
    assert_eq!(store.pending("s1").await.unwrap(), expected);
    assert_eq!(store.pending("s2").await.unwrap(), [elsewhere]);
    assert!(store.pending("s3").await.unwrap().is_empty());
}

pub async fn the_same_call_id_in_two_sessions_is_two_approvals<S: ApprovalStore>(store: &S) {
    let first = asked("s1", "c1", json!({"path": "/a"}));
    let second = asked("s2", "c1", json!({"path": "/b"}));
    store.request(&first).await.unwrap();
    store.request(&second).await.unwrap();
    store
        .decide(&ApprovalDecision::approve(&first.key))
        .await
        .unwrap();
    assert_eq!(
        store.get(&second.key).await.unwrap(),
        Some(record(&second, ApprovalState::Pending))
    );
    assert_eq!(
        store.consume(&first.key).await,
        Ok(ApprovalVerdict::Approved)
    );
    assert_eq!(
        store.consume(&second.key).await,
        Err(ApprovalStoreError::NotDecided)
    );
}

pub async fn a_later_run_reusing_a_call_id_asks_again_once_the_earlier_approval_is_decided<
    S: ApprovalStore,
>(
    store: &S,
) {
    let in_run = |run: &str, path: &str, at: u64| PendingApproval {
        run_id: run.into(),
        requested_at: 1_700_000_000_000 + at,
        ..asked("s1", "call_0", json!({ "path": path }))
    };
    let first = in_run("run-1", "/a", 0);
    store.request(&first).await.unwrap();
    let mut pending_elsewhere = in_run("run-2", "/b", 1);
    assert_eq!(
        store.request(&pending_elsewhere).await,
        Err(ApprovalStoreError::KeyMismatch),
        "a call still waiting keeps its id"
    );
    store
        .decide(&ApprovalDecision::approve(&first.key))
        .await
        .unwrap();
    let mut same_run = in_run("run-1", "/b", 2);
    assert_eq!(
        store.request(&same_run).await,
        Err(ApprovalStoreError::KeyMismatch),
        "within one run a call id is one call"
    );
    assert_eq!(
        store.consume(&first.key).await,
        Ok(ApprovalVerdict::Approved)
    );

    // A later run reuses the id with the same arguments: asked again, from the start.
    let other = asked("s1", "c7", json!({}));
    store.request(&other).await.unwrap();
    let second = in_run("run-2", "/a", 3);
    store.request(&second).await.unwrap();
    assert_eq!(
        store.get(&second.key).await.unwrap(),
        Some(record(&second, ApprovalState::Pending))
    );
    assert_eq!(
        store.pending("s1").await.unwrap(),
        [other.clone(), second.clone()],
        "the new request is the newest"
    );
    assert_eq!(
        store.consume(&second.key).await,
        Err(ApprovalStoreError::NotDecided),
        "the earlier decision does not carry over"
    );
    store
        .decide(&ApprovalDecision::refuse(&second.key, "not now"))
        .await
        .unwrap();

    // A third run reuses it with other arguments, before the refusal was acted on.
    pending_elsewhere.run_id = "run-3".into();
    store.request(&pending_elsewhere).await.unwrap();
    assert_eq!(
        store.get(&pending_elsewhere.key).await.unwrap(),
        Some(record(&pending_elsewhere, ApprovalState::Pending))
    );
    assert_eq!(
        store.get(&second.key).await,
        Err(ApprovalStoreError::KeyMismatch)
    );
    same_run.run_id = "run-3".into();
    assert_eq!(
        store.request(&same_run).await,
        Ok(()),
        "the same key again changes nothing"
    );
    assert_eq!(
        store.pending("s1").await.unwrap(),
        [other, pending_elsewhere]
    );
}

/// Runs `attempt(store, n)` for `n` in `0..count`, alternating the two handles, all at once.
async fn race<'a, S, T, F>(
    stores: [&'a S; 2],
    count: usize,
    attempt: impl Fn(&'a S, usize) -> F,
) -> Vec<Result<T, ApprovalStoreError>>
where
    F: Future<Output = Result<T, ApprovalStoreError>>,
{
    join_all((0..count).map(|n| attempt(stores[n % 2], n))).await
}

/// The index of the one attempt that succeeded; every other one lost with `lost`.
fn sole_winner<T: std::fmt::Debug>(
    answers: &[Result<T, ApprovalStoreError>],
    lost: ApprovalStoreError,
) -> usize {
    let winners: Vec<usize> = (0..answers.len()).filter(|&n| answers[n].is_ok()).collect();
    assert_eq!(winners.len(), 1, "answers: {answers:?}");
    for answer in answers {
        assert!(
            answer.is_ok() || answer.as_ref().err() == Some(&lost),
            "expected success or {lost:?}, got {answer:?}"
        );
    }
    winners[0]
}

pub async fn shared_handles_see_each_others_changes<S: ApprovalStore>(one: &S, two: &S) {
    let pending = asked("s1", "c1", json!({"path": "/tmp"}));
    one.request(&pending).await.unwrap();
    assert_eq!(
        two.pending("s1").await.unwrap(),
        std::slice::from_ref(&pending)
    );
    two.decide(&ApprovalDecision::approve(&pending.key))
        .await
        .unwrap();
    assert_eq!(
        one.consume(&pending.key).await,
        Ok(ApprovalVerdict::Approved)
    );
    assert_eq!(
        two.consume(&pending.key).await,
        Err(ApprovalStoreError::AlreadyConsumed)
    );
}

pub async fn shared_racing_decisions_have_one_winner<S: ApprovalStore>(one: &S, two: &S) {
    let pending = asked("s1", "c1", json!({"path": "/tmp"}));
    one.request(&pending).await.unwrap();
    let decisions: Vec<_> = (0..16)
        .map(|n| match n % 3 {
            0 => ApprovalDecision::approve(&pending.key),
            _ => ApprovalDecision::refuse(&pending.key, format!("reviewer {n} says no")),
        })
        .collect();
    let answers = race([one, two], decisions.len(), |store, n| {
        store.decide(&decisions[n])
    })
    .await;
    let winner = sole_winner(&answers, ApprovalStoreError::AlreadyDecided);
    assert_eq!(
        two.get(&pending.key).await.unwrap().unwrap().state,
        ApprovalState::Decided {
            verdict: decisions[winner].verdict.clone()
        },
        "the stored verdict is the winner's"
    );
}

pub async fn shared_racing_consumers_have_one_winner<S: ApprovalStore>(one: &S, two: &S) {
    let pending = asked("s1", "c1", json!({"path": "/tmp"}));
    one.request(&pending).await.unwrap();
    two.decide(&ApprovalDecision::refuse(&pending.key, "not today"))
        .await
        .unwrap();
    let answers = race([one, two], 16, |store, _| store.consume(&pending.key)).await;
    let winner = sole_winner(&answers, ApprovalStoreError::AlreadyConsumed);
    assert_eq!(answers[winner], Ok(refused("not today")));
}

pub async fn shared_racing_requests_keep_one_key<S: ApprovalStore>(one: &S, two: &S) {
    // Sixteen different argument sets for the same call: one key wins, the rest mismatch.
    let requests: Vec<_> = (0..16)
        .map(|n| asked("s1", "c1", json!({ "attempt": n })))
        .collect();
    let answers = race([one, two], requests.len(), |store, n| {
        store.request(&requests[n])
    })
    .await;
    let winner = sole_winner(&answers, ApprovalStoreError::KeyMismatch);
    assert_eq!(
        one.pending("s1").await.unwrap(),
        std::slice::from_ref(&requests[winner])
    );
}

/// A call id is the model's choice and may hold any character, NUL included (PostgreSQL's
/// `text` refuses NUL): its approval is requested, listed, decided and consumed like any other.
pub async fn a_call_id_with_a_nul_is_asked_about_like_any_other<S: ApprovalStore>(store: &S) {
    let pending = asked("s1", "call\u{0}1", json!({"path": "/tmp"}));
    let key = &pending.key;
    store.request(&pending).await.unwrap();
    assert_eq!(
        store.get(key).await.unwrap(),
        Some(record(&pending, ApprovalState::Pending))
    );
    let listed = store.pending("s1").await.unwrap();
    assert_eq!(listed.len(), 1);
    // A reviewer decides on what `pending` listed; the run consumes with its own key.
    store
        .decide(&ApprovalDecision::approve(&listed[0].key))
        .await
        .unwrap();
    assert_eq!(store.consume(key).await, Ok(ApprovalVerdict::Approved));
    assert_eq!(
        store.consume(key).await,
        Err(ApprovalStoreError::AlreadyConsumed)
    );
}
