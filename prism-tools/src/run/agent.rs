//! [`Agent`]: a dispatcher, a provider and run defaults, shared by every session.
//!
//! The dispatcher is built once, with the host's guards; what varies per run (the grant, the
//! turn's visible tools, the run's validator) reaches it as a per-call scope that can only narrow.
//! An agent is cheap to clone and hands out [`Session`]s.

use std::fmt;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::dispatch::Dispatcher;
use crate::panic::guarded;
use crate::run::search_cache::SearchCache;
use crate::run::{
    AgentConfig, ApprovalPolicy, ApprovalStore, Provider, ProviderError, RunEvent, RunEventSink,
    Session, SessionState,
};

/// A dispatcher, a provider and the defaults of every run.
///
/// ```
/// use prism::{Agent, Dispatcher, ProviderResponse, RunOptions, ToolRegistry};
/// use prism::run::{AgentConfig, ScriptedProvider};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let provider = ScriptedProvider::new([ProviderResponse::text("Hello!")]);
/// let agent = Agent::new(Dispatcher::builder(ToolRegistry::new()).build(), provider)
///     .with_config(AgentConfig::new().max_turns(4));
/// let mut session = agent.session("s1");
/// let outcome = session.run("Hi", RunOptions::new()).await.unwrap();
/// assert_eq!(outcome.summary().text, "Hello!");
/// # });
/// ```
#[derive(Clone)]
pub struct Agent {
    pub(crate) dispatcher: Dispatcher,
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) config: AgentConfig,
    pub(crate) sinks: Vec<Arc<dyn RunEventSink>>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) approvals: Option<Arc<dyn ApprovalStore>>,
    pub(crate) approval_policy: Option<Arc<dyn ApprovalPolicy>>,
    /// Built by [`Agent::secure`].
    pub(crate) secure: bool,
    /// Search indexes of recent snapshots, shared by clones.
    pub(crate) search_cache: SearchCache,
}

impl Agent {
    /// An agent with default settings.
    pub fn new(dispatcher: Dispatcher, provider: impl Provider) -> Self {
        Self::with_shared_provider(dispatcher, Arc::new(provider))
    }

    /// An agent over a provider that is already shared. The provider's
    /// [`secrets`](Provider::secrets) are added to the dispatcher's redactor, now and after
    /// every provider turn of a run (a key fetched from a host's secret source joins then).
    pub fn with_shared_provider(dispatcher: Dispatcher, provider: Arc<dyn Provider>) -> Self {
        let mut agent = Self {
            dispatcher,
            provider,
            config: AgentConfig::default(),
            sinks: Vec::new(),
            clock: Arc::new(SystemClock),
            approvals: None,
            approval_policy: None,
            secure: false,
            search_cache: SearchCache::default(),
        };
        // A panic here is met again after the first provider turn, which it then fails.
        let _ = agent.learn_provider_secrets();
        agent
    }

    /// Adds the provider's secrets that the dispatcher's redactor does not know yet.
    ///
    /// # Errors
    ///
    /// When the provider's `secrets` panicked: what it would have named stays unknown.
    pub(crate) fn learn_provider_secrets(&mut self) -> Result<(), ProviderError> {
        let redactor = self.dispatcher.redactor();
        // Not the panic's text: it could quote the very secret that is not known yet.
        let mut secrets = guarded(|| self.provider.secrets())
            .map_err(|_| ProviderError::new("the provider panicked while naming its secrets"))?;
        secrets.retain(|secret| !redactor.knows(secret));
        if !secrets.is_empty() {
            self.dispatcher = self.dispatcher.with_secrets(&secrets);
        }
        Ok(())
    }

    /// Keeps pending approvals and decisions in `store`. Without a store, a call that needs
    /// approval is refused (`permission_denied`) instead of suspending the run.
    pub fn with_approvals(mut self, store: impl ApprovalStore) -> Self {
        self.approvals = Some(Arc::new(store));
        self
    }

    /// Asks `policy`, for every call, whether it needs approval (tools that require approval
    /// themselves always do).
    pub fn with_approval_policy(mut self, policy: impl ApprovalPolicy) -> Self {
        self.approval_policy = Some(Arc::new(policy));
        self
    }

    /// Sets the defaults of every run.
    pub fn with_config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }

    /// Adds a run event sink. Repeatable.
    pub fn with_events(mut self, sink: impl RunEventSink) -> Self {
        self.sinks.push(Arc::new(sink));
        self
    }

    /// Sets the clock stamped on run events.
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The dispatcher.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.dispatcher
    }

    /// A new, empty session.
    pub fn session(&self, id: impl Into<Arc<str>>) -> Session {
        Session::new(self.clone(), id.into())
    }

    /// A session continued from stored state. Its stored grant is a ceiling: every later run of
    /// it sees at most those tools, and only those still registered.
    pub fn restore(&self, state: SessionState) -> Session {
        Session::from_state(self.clone(), state)
    }

    pub(crate) fn emit(&self, event: &RunEvent) {
        for sink in &self.sinks {
            if crate::panic::guarded(|| sink.emit(event)).is_err() {
                tracing::error!(target: "prism_tools", "a run event sink panicked; the event was dropped for it");
            }
        }
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("dispatcher", &self.dispatcher)
            .field("config", &self.config)
            .field("sinks", &self.sinks.len())
            .field("approvals", &self.approvals.is_some())
            .field("approval_policy", &self.approval_policy.is_some())
            .field("secure", &self.secure)
            .finish_non_exhaustive()
    }
}
