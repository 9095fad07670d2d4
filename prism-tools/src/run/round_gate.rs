//! [`ToolRoundGate`]: the run-level check asked once per provider response that has calls.
//!
//! The gate runs after the round is counted and before any call of the response is planned or
//! started, so a refusal executes nothing: every call of that response is answered
//! `tool_call_not_dispatched` (the refusal's message says why) and the run ends cleanly with a
//! [`RunOutcome::Stopped`](crate::run::RunOutcome::Stopped). Use it for budgets, quotas or a
//! person's go-ahead per round.

use crate::call::ToolCall;
use crate::effects::BoxFuture;
use crate::error::Refusal;

/// One round about to be charged.
#[derive(Clone, Copy, Debug)]
pub struct RoundCharge<'a> {
    /// The session.
    pub session_id: &'a str,
    /// The run.
    pub run_id: &'a str,
    /// The provider turn whose response has the calls.
    pub turn: u32,
    /// The tool round this would be, from 1.
    pub round: u32,
    /// The calls, as the model made them.
    pub calls: &'a [ToolCall],
}

/// Allows or refuses a tool round before any of its calls starts.
pub trait ToolRoundGate: Send + Sync + 'static {
    /// `Ok(())` to let the round run.
    fn charge<'a>(&'a self, round: RoundCharge<'a>) -> BoxFuture<'a, Result<(), Refusal>>;
}

/// A round gate from a synchronous closure.
///
/// ```
/// use prism::run::round_gate_fn;
///
/// // At most 8 calls per round.
/// let budget = round_gate_fn(|round| {
///     if round.calls.len() > 8 { Err("too many calls in one round") } else { Ok(()) }
/// });
/// # let _ = budget;
/// ```
pub fn round_gate_fn<F, E>(gate: F) -> impl ToolRoundGate
where
    F: Fn(RoundCharge<'_>) -> Result<(), E> + Send + Sync + 'static,
    E: Into<Refusal>,
{
    RoundGateFn(gate)
}

struct RoundGateFn<F>(F);

impl<F, E> ToolRoundGate for RoundGateFn<F>
where
    F: Fn(RoundCharge<'_>) -> Result<(), E> + Send + Sync + 'static,
    E: Into<Refusal>,
{
    fn charge<'a>(&'a self, round: RoundCharge<'a>) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(std::future::ready((self.0)(round).map_err(Into::into)))
    }
}
