//! One effect claim as a SQL row stores it, and what a row means for a new claim. Both SQL stores
//! share this, so they answer exactly as the in-memory store does.

use crate::clock::Millis;
use crate::effects::{
    Claim, EffectKey, EffectState, EffectStoreError, RecordedOutcome, UnknownEffect,
};

/// A row of `prism_effects`.
pub(crate) struct StoredEffect {
    pub(crate) owner: String,
    pub(crate) claimed_at: i64,
    pub(crate) lease_expires_at: i64,
    /// The recorded outcome as JSON text; `None` while claimed.
    pub(crate) outcome: Option<String>,
}

impl StoredEffect {
    /// The answer to a claim that found this row at `now`.
    pub(crate) fn claim_answer(self, now: Millis) -> Result<Claim, EffectStoreError> {
        Ok(self.into_state()?.into_claim(now))
    }

    /// What the row says about its key.
    pub(crate) fn into_state(self) -> Result<EffectState, EffectStoreError> {
        Ok(match &self.outcome {
            Some(outcome) => EffectState::Recorded(decode_outcome(outcome)?),
            None => EffectState::Claimed {
                owner: self.owner,
                claimed_at: from_db_millis(self.claimed_at),
                lease_expires_at: from_db_millis(self.lease_expires_at),
            },
        })
    }

    /// The row as an unknown effect (the caller selected only expired claims).
    pub(crate) fn into_unknown(self, key: String) -> UnknownEffect {
        UnknownEffect {
            key: EffectKey::from_hex(key),
            owner: self.owner,
            claimed_at: from_db_millis(self.claimed_at),
            lease_expires_at: from_db_millis(self.lease_expires_at),
        }
    }
}

/// The stored text of an outcome.
pub(crate) fn encode_outcome(outcome: &RecordedOutcome) -> Result<String, EffectStoreError> {
    serde_json::to_string(outcome)
        .map_err(|error| EffectStoreError::Backend(format!("could not encode an outcome: {error}")))
}

fn decode_outcome(text: &str) -> Result<RecordedOutcome, EffectStoreError> {
    serde_json::from_str(text).map_err(|error| {
        EffectStoreError::Backend(format!("a stored outcome cannot be read: {error}"))
    })
}

/// Milliseconds as a SQL `BIGINT`; times past the year 292 million saturate.
pub(crate) fn to_db_millis(millis: Millis) -> i64 {
    i64::try_from(millis).unwrap_or(i64::MAX)
}

/// A SQL `BIGINT` back to milliseconds.
pub(crate) fn from_db_millis(millis: i64) -> Millis {
    u64::try_from(millis).unwrap_or(0)
}
