//! The run layer in detail: grants, narrowing, disclosure, batches, approvals, events.
//!
//! [`Agent`](crate::Agent), [`Session`](crate::Session), [`RunOptions`](crate::RunOptions) and
//! the [`Provider`](crate::Provider) trait are at the crate root. Here is the rest: the agent's
//! [`AgentConfig`], per-turn narrowing ([`ToolNarrowing`]) and disclosure ([`DisclosureMode`]),
//! ordered concurrent batches ([`BatchExecutor`]), approvals that suspend a run
//! ([`ApprovalStore`], [`PendingApproval`], [`ApprovalDecision`]), the round gate
//! ([`ToolRoundGate`]), the generate-validate-revise loop ([`ArtifactLoop`]), run events
//! ([`RunEvent`]), what a run ends with ([`RunEnd`], [`RunSummary`], [`SuspendedRun`]) and a
//! [`ScriptedProvider`] for tests and examples.

pub use prism_tools::run::{
    AgentConfig, ApprovalDecision, ApprovalKey, ApprovalPolicy, ApprovalRecord, ApprovalState,
    ApprovalStore, ApprovalStoreError, ApprovalVerdict, ArtifactFailedMetadata, ArtifactFailure,
    ArtifactLoop, ArtifactToolCalls, ArtifactValidator, ArtifactVerdict, BatchExecutor,
    BatchOutcome, BatchStop, DEFAULT_MAX_TOOL_ROUNDS, DEFAULT_MAX_TURNS, DestructiveTools,
    DisclosureMode, DisclosureRequest, InMemoryApprovalStore, LoopStrategy, NarrowingRequest,
    PendingApproval, PendingApprovals, ProviderErrorKind, ProviderEvent, ProviderEventObserver,
    RecordedRequest, ResponseFold, RoundCharge, RunEnd, RunEvent, RunEventKind, RunEventLog,
    RunEventSink, RunSummary, ScriptedProvider, SessionState, Skill, StopReason, SuspendedRun,
    ToolChoice, ToolDisclosure, ToolNarrowing, ToolRoundGate, ToolsMetadata, TurnMetadata,
    TurnToolsMetadata, UnreadableApproval, Usage, approval_fn, artifact_validator_fn, narrowing_fn,
    round_gate_fn, run_event_fn,
};
