//! Building a [`Dispatcher`](crate::Dispatcher) and watching what it does.
//!
//! [`DispatchBuilder`] takes the guards in pipeline order (the guards themselves are in
//! [`guard`](crate::guard)), [`build_secure`](DispatchBuilder::build_secure) gives a
//! [`SecureDispatcher`] when trust, permission and a validator were each given. Beside the guards
//! the builder takes what the pipeline is configured with: [`Limits`], a [`SecretRedactor`], a
//! [`Clock`], and the observers: [`EventSink`]s receiving [`ToolEvent`]s and a [`RunLedger`]
//! receiving [`ToolCallRecord`]s. A guardrail that trips returns a [`Tripwire`] instead of a
//! result.
//!
//! The builder's type parameters are markers from [`stage`]; code that configures a dispatcher
//! never names them.

pub mod stage;

pub use prism_tools::clock::{Clock, ManualClock, Millis, SystemClock};
pub use prism_tools::dispatch::{
    BuildError, CollectingSink, DispatchBuilder, EventSink, InMemoryLedger, LedgerError,
    OwnershipScope, RecordStatus, RegisterError, RunLedger, SecureBuildError, SecureDispatcher,
    ToolCallRecord, ToolEvent, ToolEventKind, Tripwire, event_fn,
};
pub use prism_tools::limits::Limits;
pub use prism_tools::redact::{REDACTED, SecretRedactor, truncate_at_char_boundary};
pub use prism_tools::slot::IntoSlot;
