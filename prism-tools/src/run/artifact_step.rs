//! One turn of the generate-validate-revise loop (see [`artifact`](super::artifact) for the
//! rules): inert or bounded tool calls, then the validator's verdict on the answer.

use crate::call::{ErrorCode, ErrorInfo, ToolCall};
use crate::panic::guarded;
use crate::run::run_loop::{RunDriver, missing_artifact_validator};
use crate::run::turn::TurnTools;
use crate::run::{
    ArtifactFailedMetadata, ArtifactFailure, ArtifactLoop, ArtifactToolCalls, ArtifactVerdict,
    Message, RunError, RunEventKind, RunOutcome,
};

impl RunDriver<'_> {
    /// `Some` when the run ends with this turn.
    pub(crate) async fn artifact_step(
        &mut self,
        artifact: ArtifactLoop,
        calls: Vec<ToolCall>,
        turn_tools: &TurnTools,
    ) -> Result<Option<RunOutcome>, RunError> {
        if !calls.is_empty() {
            match artifact.tool_calls {
                ArtifactToolCalls::Inert => self.answer_inert(&calls),
                ArtifactToolCalls::Bounded => {
                    return match self.run_tool_round(calls, turn_tools).await {
                        Ok(end) => Ok(self.round_outcome(end)),
                        Err(RunError::ToolRoundLimit { .. }) => {
                            Err(self.artifact_failed(ArtifactFailure::ToolRoundLimit))
                        }
                        Err(error) => Err(error),
                    };
                }
            }
        }
        let Some(validator) = self.settings.artifact_validator.clone() else {
            return Err(missing_artifact_validator());
        };
        let candidate = self.text.clone();
        let verdict = guarded(|| validator.check(&candidate)).unwrap_or_else(|panic| {
            ArtifactVerdict::Revise(format!("The artifact validator panicked: {panic}"))
        });
        match verdict {
            ArtifactVerdict::Accept(value) => {
                self.emit(RunEventKind::ArtifactAccepted { turn: self.turn });
                Ok(Some(self.finish(Some(value))))
            }
            ArtifactVerdict::Revise(feedback) => {
                self.revisions += 1;
                if self.revisions > artifact.max_revisions {
                    return Err(self.artifact_failed(ArtifactFailure::MaxRevisions));
                }
                self.emit(RunEventKind::ArtifactRevisionRequested {
                    turn: self.turn,
                    revision: self.revisions,
                });
                let feedback = self
                    .session
                    .agent
                    .dispatcher
                    .redactor()
                    .redact_str(&feedback);
                self.session.transcript.push(Message::user(feedback));
                Ok(None)
            }
        }
    }

    /// Answers calls that the artifact loop treats as inert: rows, and nothing runs.
    fn answer_inert(&mut self, calls: &[ToolCall]) {
        for call in calls {
            let error = ErrorInfo::new(
                ErrorCode::ToolCallInert,
                "Tools are not available while drafting this artifact; the call did not run",
            );
            let row = self
                .session
                .agent
                .dispatcher
                .settle_unstarted(call, error, &self.ctx);
            self.session.transcript.push(Message::tool(row));
        }
    }

    fn artifact_failed(&self, reason: ArtifactFailure) -> RunError {
        self.emit(RunEventKind::ArtifactFailed {
            metadata: ArtifactFailedMetadata { reason },
        });
        RunError::ArtifactFailed { reason }
    }
}
