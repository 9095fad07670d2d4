//! Durable ledgers, effect stores and approval stores: JSON Lines, SQLite (feature `sqlite`, on
//! by default) and PostgreSQL (feature `postgres`).
//!
//! Everything in this module is for users, so it re-exports `prism_tools::storage` whole
//! (feature-gated items included). The in-memory stores for tests are beside their traits:
//! [`InMemoryLedger`](crate::dispatch::InMemoryLedger),
//! [`InMemoryEffectStore`](crate::effects::InMemoryEffectStore) and
//! [`InMemoryApprovalStore`](crate::run::InMemoryApprovalStore).

pub use prism_tools::storage::*;
