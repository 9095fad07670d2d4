//! [`ScriptedProvider`]: a provider that replays prepared turns and records what it was sent.
//!
//! Tests and examples use it to drive the run loop without a network: each call to
//! [`complete`](Provider::complete) returns the next scripted response, and keeps a copy of the
//! request (instructions, transcript, tool schema bytes, metadata) to assert on afterwards. An
//! observer of the request is told of the response's events ([`ProviderResponse::to_events`]),
//! as a streaming provider would tell it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::effects::BoxFuture;
use crate::run::{
    Message, Provider, ProviderError, ProviderRequest, ProviderResponse, ToolChoice, TurnMetadata,
};

/// What a [`ScriptedProvider`] was sent on one turn.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// The system instructions as sent.
    pub instructions: Option<String>,
    /// The tool choice as sent.
    pub tool_choice: ToolChoice,
    /// The transcript as sent.
    pub transcript: Vec<Message>,
    /// The names of the tools described, in request order.
    pub tool_names: Vec<String>,
    /// The tool schemas exactly as serialised JSON text, to compare bytes between turns.
    pub tool_schemas: String,
    /// The turn's metadata.
    pub metadata: TurnMetadata,
}

#[derive(Default)]
struct Script {
    turns: VecDeque<ProviderResponse>,
    requests: Vec<RecordedRequest>,
}

/// Replays responses in order; clones share the script and the recorded requests.
///
/// ```
/// use prism::ProviderResponse;
/// use prism::run::ScriptedProvider;
///
/// let provider = ScriptedProvider::new([ProviderResponse::text("Hello.")]);
/// assert_eq!(provider.remaining(), 1);
/// assert!(provider.requests().is_empty());
/// ```
#[derive(Clone, Default)]
pub struct ScriptedProvider {
    script: Arc<Mutex<Script>>,
}

impl ScriptedProvider {
    /// A provider that answers with `turns`, in order, then fails.
    pub fn new(turns: impl IntoIterator<Item = ProviderResponse>) -> Self {
        Self {
            script: Arc::new(Mutex::new(Script {
                turns: turns.into_iter().collect(),
                requests: Vec::new(),
            })),
        }
    }

    /// Appends a turn to the script.
    pub fn push(&self, turn: ProviderResponse) {
        self.lock().turns.push_back(turn);
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// How many scripted turns are left.
    pub fn remaining(&self) -> usize {
        self.lock().turns.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        // Nothing panics while the lock is held; a poisoned lock still holds consistent data.
        self.script
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl Provider for ScriptedProvider {
    fn complete<'a>(
        &'a self,
        request: ProviderRequest<'a>,
    ) -> BoxFuture<'a, Result<ProviderResponse, ProviderError>> {
        let recorded = RecordedRequest {
            instructions: request.instructions.map(str::to_owned),
            tool_choice: request.tool_choice.clone(),
            transcript: request.transcript.to_vec(),
            tool_names: request
                .tools
                .iter()
                .map(|tool| tool.name().to_owned())
                .collect(),
            tool_schemas: request.tool_schemas().to_string(),
            metadata: request.metadata.clone(),
        };
        let answer = {
            let mut script = self.lock();
            script.requests.push(recorded);
            script.turns.pop_front().ok_or_else(|| {
                ProviderError::new(format!(
                    "the script has no response left for turn {}",
                    request.metadata.turn
                ))
            })
        };
        if let (Ok(response), Some(_)) = (&answer, request.observer) {
            for event in response.to_events() {
                request.observe(&event);
            }
        }
        Box::pin(std::future::ready(answer))
    }
}

impl std::fmt::Debug for ScriptedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let script = self.lock();
        f.debug_struct("ScriptedProvider")
            .field("remaining", &script.turns.len())
            .field("requests", &script.requests.len())
            .finish()
    }
}
