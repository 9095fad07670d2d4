//! Side effects at most once, or reported unknown.
//!
//! A tool with an [`EffectPolicy`] claims its call in an [`EffectStore`] before running: a
//! recorded outcome is returned again instead of running twice, and a claim whose owner vanished
//! is [`Claim::Unknown`] until the host resolves it with [`EffectRecovery`]. Durable stores are in
//! [`storage`](crate::storage).

pub use prism_tools::effects::{
    BoxFuture, Claim, ClaimRequest, EffectKey, EffectKeySecret, EffectPolicy, EffectRecovery,
    EffectState, EffectStore, EffectStoreError, InMemoryEffectStore, RecordedOutcome,
    RecoveryOutcome, Resolution, UnknownEffect,
};
