//! [`AgentConfig`] and [`RunOptions`]: the same settings at two levels, merged field by field.
//!
//! An agent's config holds the defaults of every run; a run's options override any field they set
//! and leave the others to the agent (run wins, one field at a time). Two settings exist only per
//! run: the grant ([`RunOptions::tool_names`]) and the cancellation token. The dispatcher's own
//! guards are not settings here: they are fixed when the dispatcher is built, and a run's
//! validator runs *after* the dispatcher's, never instead of it.

use std::fmt;
use std::sync::Arc;

use crate::context::CancellationToken;
use crate::guard::ArgumentValidator;
use crate::run::{
    ArtifactLoop, ArtifactValidator, DisclosureMode, ProviderEventObserver, Skill, ToolChoice,
    ToolNarrowing, ToolRoundGate,
};
use crate::search::SearchConfig;

/// Tool rounds a run may use when neither level sets a limit.
pub const DEFAULT_MAX_TOOL_ROUNDS: u32 = 16;
/// Provider turns a run may use when neither level sets a limit.
pub const DEFAULT_MAX_TURNS: u32 = 32;

/// How a run drives the provider.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoopStrategy {
    /// Each response's calls run as one batch, then the model sees the results; the run ends on
    /// the first response without calls.
    #[default]
    SingleShot,
    /// Each answer is a candidate artifact that the host's
    /// [`ArtifactValidator`] accepts or sends back for revision.
    GenerateValidateRevise(ArtifactLoop),
}

/// The settings both levels share; `None` means "not set here".
#[derive(Clone, Default)]
pub(crate) struct Settings {
    pub(crate) validator: Option<Arc<dyn ArgumentValidator>>,
    pub(crate) narrowing: Option<Arc<dyn ToolNarrowing>>,
    pub(crate) disclosure: Option<DisclosureMode>,
    pub(crate) tool_search: Option<Arc<SearchConfig>>,
    pub(crate) allow_hidden_tool_calls: Option<bool>,
    pub(crate) strategy: Option<LoopStrategy>,
    pub(crate) tool_concurrency: Option<usize>,
    pub(crate) max_tool_rounds: Option<u32>,
    pub(crate) max_turns: Option<u32>,
    pub(crate) skills: Option<Vec<Skill>>,
    pub(crate) round_gate: Option<Arc<dyn ToolRoundGate>>,
    pub(crate) artifact_validator: Option<Arc<dyn ArtifactValidator>>,
    pub(crate) instructions: Option<Arc<str>>,
    pub(crate) tool_choice: Option<ToolChoice>,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) provider_events: Option<Arc<ProviderEventObserver>>,
}

impl Settings {
    /// `run` over `self`: every field `run` sets wins.
    fn overlay(&self, run: &Settings) -> Settings {
        fn pick<T: Clone>(run: &Option<T>, agent: &Option<T>) -> Option<T> {
            run.as_ref().or(agent.as_ref()).cloned()
        }
        Settings {
            validator: pick(&run.validator, &self.validator),
            narrowing: pick(&run.narrowing, &self.narrowing),
            disclosure: pick(&run.disclosure, &self.disclosure),
            tool_search: pick(&run.tool_search, &self.tool_search),
            allow_hidden_tool_calls: pick(
                &run.allow_hidden_tool_calls,
                &self.allow_hidden_tool_calls,
            ),
            strategy: pick(&run.strategy, &self.strategy),
            tool_concurrency: pick(&run.tool_concurrency, &self.tool_concurrency),
            max_tool_rounds: pick(&run.max_tool_rounds, &self.max_tool_rounds),
            max_turns: pick(&run.max_turns, &self.max_turns),
            skills: pick(&run.skills, &self.skills),
            round_gate: pick(&run.round_gate, &self.round_gate),
            artifact_validator: pick(&run.artifact_validator, &self.artifact_validator),
            instructions: pick(&run.instructions, &self.instructions),
            tool_choice: pick(&run.tool_choice, &self.tool_choice),
            parallel_tool_calls: pick(&run.parallel_tool_calls, &self.parallel_tool_calls),
            provider_events: pick(&run.provider_events, &self.provider_events),
        }
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("validator", &self.validator.is_some())
            .field("narrowing", &self.narrowing.is_some())
            .field("disclosure", &self.disclosure)
            .field("tool_search", &self.tool_search)
            .field("allow_hidden_tool_calls", &self.allow_hidden_tool_calls)
            .field("strategy", &self.strategy)
            .field("tool_concurrency", &self.tool_concurrency)
            .field("max_tool_rounds", &self.max_tool_rounds)
            .field("max_turns", &self.max_turns)
            .field("skills", &self.skills)
            .field("round_gate", &self.round_gate.is_some())
            .field("artifact_validator", &self.artifact_validator.is_some())
            .field("instructions", &self.instructions)
            .field("tool_choice", &self.tool_choice)
            .field("parallel_tool_calls", &self.parallel_tool_calls)
            .field("provider_events", &self.provider_events.is_some())
            .finish()
    }
}

/// Setters shared by both levels, so the two cannot drift apart.
macro_rules! shared_setters {
    () => {
        /// Sets the per-turn narrowing callback.
        pub fn tool_narrowing(mut self, narrowing: impl ToolNarrowing) -> Self {
            self.settings.narrowing = Some(Arc::new(narrowing));
            self
        }

        /// Sets how each turn's visible tools are described to the provider (default:
        /// [`DisclosureMode::All`], every one of them).
        pub fn tools_disclosure(mut self, mode: DisclosureMode) -> Self {
            self.settings.disclosure = Some(mode);
            self
        }

        /// Sets how [`DisclosureMode::Search`] indexes and scores tools (default:
        /// [`SearchConfig::default`], BM25). The mode's `top_k` replaces the config's own.
        pub fn tool_search(mut self, config: SearchConfig) -> Self {
            self.settings.tool_search = Some(Arc::new(config));
            self
        }

        /// Lets the model call granted tools hidden this turn (default: refused, `tool_denied`).
        pub fn allow_hidden_tool_calls(mut self, allow: bool) -> Self {
            self.settings.allow_hidden_tool_calls = Some(allow);
            self
        }

        /// Sets the loop strategy.
        pub fn loop_strategy(mut self, strategy: LoopStrategy) -> Self {
            self.settings.strategy = Some(strategy);
            self
        }

        /// How many calls of one response may run at once (default 1; 0 counts as 1). A response
        /// that calls an exclusive tool always runs one call at a time, and so does every
        /// response of the [generate-validate-revise](LoopStrategy::GenerateValidateRevise) loop,
        /// whatever this says.
        pub fn tool_concurrency(mut self, concurrency: usize) -> Self {
            self.settings.tool_concurrency = Some(concurrency.max(1));
            self
        }

        /// How many provider responses with calls a run may execute; calls past it execute
        /// nothing and are answered `tool_round_limit`.
        pub fn max_tool_rounds(mut self, rounds: u32) -> Self {
            self.settings.max_tool_rounds = Some(rounds);
            self
        }

        /// How many provider turns a run may take.
        pub fn max_turns(mut self, turns: u32) -> Self {
            self.settings.max_turns = Some(turns);
            self
        }

        /// Sets the active skills, whose tool dependencies are checked before the first turn.
        pub fn skills(mut self, skills: impl IntoIterator<Item = Skill>) -> Self {
            self.settings.skills = Some(skills.into_iter().collect());
            self
        }

        /// Sets the gate asked once per response with calls, before any of them starts.
        pub fn charge_tool_round(mut self, gate: impl ToolRoundGate) -> Self {
            self.settings.round_gate = Some(Arc::new(gate));
            self
        }

        /// Sets the validator of the generate-validate-revise loop's candidates.
        pub fn artifact_validator(mut self, validator: impl ArtifactValidator) -> Self {
            self.settings.artifact_validator = Some(Arc::new(validator));
            self
        }

        /// Sets the system instructions sent with every provider turn.
        pub fn instructions(mut self, instructions: impl Into<Arc<str>>) -> Self {
            self.settings.instructions = Some(instructions.into());
            self
        }

        /// Sets whether, and which, tools the model must call (default [`ToolChoice::Auto`]).
        pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
            self.settings.tool_choice = Some(choice);
            self
        }

        /// Allows or forbids several calls in one response (default: the provider's).
        pub fn parallel_tool_calls(mut self, parallel: bool) -> Self {
            self.settings.parallel_tool_calls = Some(parallel);
            self
        }

        /// Watches each provider turn as it streams in (text deltas, calls forming). The events
        /// carry the model's raw output, before any redaction.
        pub fn provider_events(
            mut self,
            observer: impl Fn(&crate::run::ProviderEvent) + Send + Sync + 'static,
        ) -> Self {
            self.settings.provider_events = Some(Arc::new(observer));
            self
        }
    };
}

/// Defaults for every run of an agent.
///
/// ```
/// use prism::guard::validator_fn;
/// use prism::run::AgentConfig;
///
/// let config = AgentConfig::new()
///     .validator(validator_fn(|_tool, _args| Ok(())))
///     .tool_concurrency(4)
///     .max_tool_rounds(8);
/// # let _ = config;
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct AgentConfig {
    pub(crate) settings: Settings,
}

impl AgentConfig {
    /// No settings: every field falls back to its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the validator every run uses (after the dispatcher's own) unless the run sets one.
    pub fn validator(mut self, validator: impl ArgumentValidator) -> Self {
        self.settings.validator = Some(Arc::new(validator));
        self
    }

    shared_setters!();
}

/// Settings for one run; every field it sets overrides the agent's.
///
/// ```
/// use prism::RunOptions;
///
/// let options = RunOptions::new().tool_names(["web_search"]).tool_concurrency(4);
/// # let _ = options;
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct RunOptions {
    pub(crate) settings: Settings,
    pub(crate) tool_names: Option<Vec<String>>,
    pub(crate) cancellation: Option<CancellationToken>,
}

impl RunOptions {
    /// No overrides.
    pub fn new() -> Self {
        Self::default()
    }

    /// The run's grant: exactly these registered names (empty: no tools). Without it the run gets
    /// every registered tool. A name that is not registered fails the run before its first turn.
    pub fn tool_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tool_names = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Sets this run's validator, replacing the agent's (the dispatcher's still runs first).
    pub fn validate(mut self, validator: impl ArgumentValidator) -> Self {
        self.settings.validator = Some(Arc::new(validator));
        self
    }

    /// Uses this token to abort the run; calls already started settle, the rest are answered
    /// `tool_call_not_dispatched`. The run does not wait for a provider turn, a narrowing
    /// callback, a round gate or the approval store once the token fires, and a cancelled run
    /// never suspends. A resume cancelled while it records decisions stays suspended; one
    /// cancelled while it confirms them refuses the calls it could not confirm.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    shared_setters!();
}

/// The settings a run actually uses: run over agent over defaults.
#[derive(Clone)]
pub(crate) struct Resolved {
    pub(crate) validator: Option<Arc<dyn ArgumentValidator>>,
    pub(crate) narrowing: Option<Arc<dyn ToolNarrowing>>,
    pub(crate) disclosure: DisclosureMode,
    /// `None`: the default configuration.
    pub(crate) tool_search: Option<Arc<SearchConfig>>,
    pub(crate) allow_hidden_tool_calls: bool,
    pub(crate) strategy: LoopStrategy,
    pub(crate) tool_concurrency: usize,
    pub(crate) max_tool_rounds: u32,
    pub(crate) max_turns: u32,
    pub(crate) skills: Vec<Skill>,
    pub(crate) round_gate: Option<Arc<dyn ToolRoundGate>>,
    pub(crate) artifact_validator: Option<Arc<dyn ArtifactValidator>>,
    pub(crate) instructions: Option<Arc<str>>,
    pub(crate) tool_choice: ToolChoice,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) provider_events: Option<Arc<ProviderEventObserver>>,
}

impl Resolved {
    /// Merges `run` over `agent`, then fills in defaults.
    pub(crate) fn merge(agent: &AgentConfig, run: &RunOptions) -> Self {
        let settings = agent.settings.overlay(&run.settings);
        Self {
            validator: settings.validator,
            narrowing: settings.narrowing,
            disclosure: settings.disclosure.unwrap_or_default(),
            tool_search: settings.tool_search,
            allow_hidden_tool_calls: settings.allow_hidden_tool_calls.unwrap_or(false),
            strategy: settings.strategy.unwrap_or_default(),
            tool_concurrency: settings.tool_concurrency.unwrap_or(1),
            max_tool_rounds: settings.max_tool_rounds.unwrap_or(DEFAULT_MAX_TOOL_ROUNDS),
            max_turns: settings.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
            skills: settings.skills.unwrap_or_default(),
            round_gate: settings.round_gate,
            artifact_validator: settings.artifact_validator,
            instructions: settings.instructions,
            tool_choice: settings.tool_choice.unwrap_or_default(),
            parallel_tool_calls: settings.parallel_tool_calls,
            provider_events: settings.provider_events,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::validator_fn;

    #[test]
    fn the_run_wins_field_by_field() {
        let agent = AgentConfig::new()
            .tool_concurrency(4)
            .max_turns(5)
            .tools_disclosure(DisclosureMode::search())
            .allow_hidden_tool_calls(true)
            .validator(validator_fn(|_, _| Err("agent".into())));
        let run = RunOptions::new().max_turns(9).tool_concurrency(0);
        let resolved = Resolved::merge(&agent, &run);
        assert_eq!(resolved.max_turns, 9);
        assert!(matches!(
            resolved.disclosure,
            DisclosureMode::Search { top_k: 16 }
        ));
        let run = run.tools_disclosure(DisclosureMode::All);
        let resolved = Resolved::merge(&agent, &run);
        assert!(matches!(resolved.disclosure, DisclosureMode::All));
        assert_eq!(
            resolved.tool_concurrency, 1,
            "0 counts as 1 and still overrides"
        );
        assert!(
            resolved.allow_hidden_tool_calls,
            "unset on the run: the agent's"
        );
        assert!(resolved.validator.is_some());
        assert_eq!(resolved.max_tool_rounds, DEFAULT_MAX_TOOL_ROUNDS);

        let defaults = Resolved::merge(&AgentConfig::new(), &RunOptions::new());
        assert_eq!(defaults.tool_concurrency, 1);
        assert!(!defaults.allow_hidden_tool_calls);
        assert!(defaults.validator.is_none());
        assert!(matches!(defaults.disclosure, DisclosureMode::All));
        assert!(defaults.tool_search.is_none());
    }
}
