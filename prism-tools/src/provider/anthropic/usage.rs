//! Token counts as the Messages API reports them, merged across `message_start` and
//! `message_delta`, and read into [`Usage`].

use crate::run::Usage;

use super::wire::UsageWire;

/// The counts seen so far; a later report replaces the fields it carries.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct UsageParts {
    input: Option<u64>,
    output: Option<u64>,
    cache_creation: Option<u64>,
    cache_read: Option<u64>,
    thinking: Option<u64>,
    seen: bool,
}

impl UsageParts {
    /// Takes in one report.
    pub fn merge(&mut self, wire: &UsageWire) {
        self.seen = true;
        fn take(slot: &mut Option<u64>, value: Option<u64>) {
            if value.is_some() {
                *slot = value;
            }
        }
        take(&mut self.input, wire.input_tokens);
        take(&mut self.output, wire.output_tokens);
        take(&mut self.cache_creation, wire.cache_creation_input_tokens);
        take(&mut self.cache_read, wire.cache_read_input_tokens);
        take(
            &mut self.thinking,
            wire.output_tokens_details.and_then(|d| d.thinking_tokens),
        );
    }

    /// The totals, once any report came: Anthropic counts cache reads and cache writes apart
    /// from `input_tokens`, and [`Usage::input_tokens`] counts all input.
    pub fn usage(&self) -> Option<Usage> {
        self.seen.then(|| Usage {
            input_tokens: self
                .input
                .unwrap_or(0)
                .saturating_add(self.cache_creation.unwrap_or(0))
                .saturating_add(self.cache_read.unwrap_or(0)),
            output_tokens: self.output.unwrap_or(0),
            cached_input_tokens: self.cache_read,
            reasoning_tokens: self.thinking,
        })
    }
}
