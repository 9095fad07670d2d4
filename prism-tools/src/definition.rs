//! [`ToolDefinition`]: a tool's name, description, schemas, hints and handler.
//!
//! A definition is what the registry stores and what the model's schema list is made from. It is
//! immutable and cheap to clone (one `Arc`). The handler is split in two steps, see
//! [`ToolHandler`]: arguments are decoded synchronously before anything can happen, and only the
//! returned future, once awaited, performs the side effect.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock, Weak};

use pin_project_lite::pin_project;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::ToolOutput;
use crate::context::ToolExecutionContext;
use crate::effects::EffectPolicy;
use crate::error::ToolError;

pub use crate::icon::ToolIcon;
pub use crate::prepared::{NotPrepared, PendingBody, Prepared};
pub use crate::tool_future::ToolFuture;

/// Runs a tool, in two steps.
///
/// [`prepare`](Self::prepare) decodes the arguments (already checked to be a JSON object), takes
/// what the body needs from the call's context, and returns the body *without running it*, as a
/// [`ToolFuture`] (`ToolFuture::new(async move { … }).into()`), which stores a small body without
/// allocating. A preparation that must wait (an extractor asking another service) returns
/// [`Prepared::Pending`] instead, which the dispatcher awaits before its last guards; it must not
/// perform the side effect. A refusal is a [`NotPrepared`], which the dispatcher reports as a
/// blocked result with its reason (`invalid_arguments` for arguments that do not decode,
/// `extraction_failed` for a missing context value): no side effect can have happened. The
/// dispatcher then runs its remaining guards and only awaits the body when they all pass; a body
/// that is refused is dropped unpolled.
///
/// Most tools never implement this trait by hand: use `#[tool]`, the typed [`Tool`](crate::Tool)
/// trait, or [`ToolDefinition::builder`] with a closure.
pub trait ToolHandler: Send + Sync + 'static {
    /// Decodes `arguments` and returns the body to run, ready or still being prepared.
    fn prepare(
        &self,
        arguments: &Value,
        ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared>;

    /// Whether the body reads the context [`prepare`](Self::prepare) is given. A handler that
    /// never does answers `false`, and the dispatcher then skips making the call's context (a
    /// copy of the run's, the call id, the progress channel) and passes an empty one: no run, no
    /// ids, no metadata, progress that goes nowhere. Read once, when the definition is built.
    fn reads_context(&self) -> bool {
        true
    }
}

/// Hints about a tool's behaviour, as in the Model Context Protocol. Hints, not guarantees: the
/// host decides what to do with them (an approval policy might ask before every `destructive`
/// tool, for instance).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "readOnlyHint"
    )]
    pub read_only: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "destructiveHint"
    )]
    pub destructive: Option<bool>,
    /// Calling the tool again with the same arguments has no further effect.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "idempotentHint"
    )]
    pub idempotent: Option<bool>,
    /// The tool talks to an open world of external entities (the web, say).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "openWorldHint"
    )]
    pub open_world: Option<bool>,
}

struct DefinitionInner {
    name: Arc<str>,
    title: Option<String>,
    icons: Vec<ToolIcon>,
    description: Option<String>,
    parameters: Option<Value>,
    output_schema: Option<Value>,
    annotations: ToolAnnotations,
    exclusive: bool,
    requires_approval: bool,
    untrusted_output: bool,
    effect: Option<EffectPolicy>,
    handler: Arc<dyn ToolHandler>,
    /// The handler's [`ToolHandler::reads_context`], asked once.
    reads_context: bool,
    /// What a validator derived from `parameters` (a compiled schema), made once per definition.
    memo: OnceLock<Box<dyn Any + Send + Sync>>,
}

/// A tool as the registry stores it. Cheap to clone.
///
/// ```
/// use prism::{ToolDefinition, ToolError};
/// use serde_json::{json, Value};
///
/// let shout = ToolDefinition::builder("shout")
///     .description("Upper-cases a text.")
///     .parameters(json!({
///         "type": "object",
///         "properties": {"text": {"type": "string"}},
///         "required": ["text"]
///     }))
///     .run_sync(|args: &Value, _ctx| {
///         let text = args["text"].as_str().ok_or("text must be a string")?;
///         Ok(Value::from(text.to_uppercase()))
///     });
/// assert_eq!(shout.name(), "shout");
/// ```
#[derive(Clone)]
pub struct ToolDefinition {
    inner: Arc<DefinitionInner>,
}

impl ToolDefinition {
    /// Starts a definition for a tool called `name`.
    pub fn builder(name: impl Into<Arc<str>>) -> ToolDefinitionBuilder {
        ToolDefinitionBuilder {
            name: name.into(),
            title: None,
            icons: Vec::new(),
            description: None,
            parameters: None,
            output_schema: None,
            annotations: ToolAnnotations::default(),
            exclusive: false,
            requires_approval: false,
            untrusted_output: false,
            effect: None,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The tool's name, shared.
    pub fn name_arc(&self) -> &Arc<str> {
        &self.inner.name
    }

    /// A name for people (an MCP client's tool picker), when it differs from [`name`](Self::name).
    pub fn title(&self) -> Option<&str> {
        self.inner.title.as_deref()
    }

    /// Icons a client may show beside the tool.
    pub fn icons(&self) -> &[ToolIcon] {
        &self.inner.icons
    }

    /// What the tool does, for the model.
    pub fn description(&self) -> Option<&str> {
        self.inner.description.as_deref()
    }

    /// The JSON Schema of the arguments.
    pub fn parameters(&self) -> Option<&Value> {
        self.inner.parameters.as_ref()
    }

    /// True when the tool declares a parameter schema that constrains its arguments. A schema
    /// that constrains nothing is no schema: an absent one, `{}` and `true` all accept every value,
    /// so none of them counts. This is the one rule every check that requires a schema applies
    /// (a secure dispatcher, the registry it reads, and a validator rejecting tools without one);
    /// each refuses with [`MissingParameterSchema`](crate::MissingParameterSchema).
    ///
    /// ```
    /// use prism::ToolDefinition;
    /// use serde_json::{json, Value};
    ///
    /// let with = |schema: Value| ToolDefinition::builder("t").parameters(schema).run_sync(|_, _| Ok(Value::Null));
    /// assert!(with(json!({"type": "object"})).declares_parameters());
    /// assert!(!with(json!({})).declares_parameters());
    /// assert!(!with(json!(true)).declares_parameters());
    /// assert!(!ToolDefinition::builder("t").run_sync(|_, _| Ok(Value::Null)).declares_parameters());
    /// ```
    pub fn declares_parameters(&self) -> bool {
        match self.parameters() {
            None | Some(Value::Bool(true)) => false,
            Some(Value::Object(schema)) => !schema.is_empty(),
            Some(_) => true,
        }
    }

    /// The JSON Schema of the value the tool returns, when known.
    pub fn output_schema(&self) -> Option<&Value> {
        self.inner.output_schema.as_ref()
    }

    /// Behaviour hints.
    pub fn annotations(&self) -> &ToolAnnotations {
        &self.inner.annotations
    }

    /// When true, a turn that calls this tool runs its calls one at a time.
    pub fn is_exclusive(&self) -> bool {
        self.inner.exclusive
    }

    /// When true, every call waits for a person's approval of the exact call before its side
    /// effect: a run with an approval store suspends until it is decided, an MCP server asks its
    /// client. Where nobody can be asked (a bare `dispatch`, an agent without a store) the call
    /// is refused.
    pub fn requires_approval(&self) -> bool {
        self.inner.requires_approval
    }

    /// When true, the tool's output comes from outside the host's trust (a web page, a remote
    /// MCP server): every result carrying that output (its value and content, or the error the
    /// tool returned) is marked [`untrusted`](crate::ToolResult::is_untrusted), and so are its
    /// events and ledger rows. Wire formats fence such output as data when they send it to a
    /// model.
    pub fn untrusted_output(&self) -> bool {
        self.inner.untrusted_output
    }

    /// The effect policy: when set (and the dispatcher has an effect store), calls are claimed
    /// before they run so that their side effect happens at most once.
    pub fn effect(&self) -> Option<&EffectPolicy> {
        self.inner.effect.as_ref()
    }

    /// The handler.
    pub fn handler(&self) -> &Arc<dyn ToolHandler> {
        &self.inner.handler
    }

    /// Whether the handler reads the context it is given (see [`ToolHandler::reads_context`]).
    ///
    /// ```
    /// use prism::ToolDefinition;
    /// use serde_json::Value;
    ///
    /// // A closure is handed the context, so it is taken to read it.
    /// let echo = ToolDefinition::builder("echo").run_sync(|args: &Value, _ctx| Ok(args.clone()));
    /// assert!(echo.reads_context());
    /// ```
    pub fn reads_context(&self) -> bool {
        self.inner.reads_context
    }

    /// A value derived from this definition, computed by `init` on first use and kept for the
    /// definition's lifetime; every clone shares it. A schema validator keeps its compiled form
    /// of [`parameters`](Self::parameters) here, so the dispatch path reads it without a lock or
    /// a hash.
    ///
    /// The slot holds one value: the first type stored wins, and a call asking for another type
    /// gets `None` (and should fall back to its own cache).
    ///
    /// ```
    /// use prism::ToolDefinition;
    /// use serde_json::Value;
    ///
    /// let tool = ToolDefinition::builder("t").run_sync(|_, _| Ok(Value::Null));
    /// assert_eq!(tool.memo(|| 41_u32 + 1), Some(&42));
    /// assert_eq!(tool.clone().memo(|| 0_u32), Some(&42)); // computed once, shared by clones
    /// assert_eq!(tool.memo(|| "other type"), None);
    /// ```
    pub fn memo<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Option<&T> {
        self.inner
            .memo
            .get_or_init(|| Box::new(init()))
            .downcast_ref()
    }

    /// The same tool with other parameters (a normalised schema, say). The new definition shares
    /// the handler but not the [`memo`](Self::memo), which belonged to the old schema.
    pub fn with_parameters(&self, schema: Value) -> ToolDefinition {
        let old = &*self.inner;
        ToolDefinition {
            inner: Arc::new(DefinitionInner {
                name: Arc::clone(&old.name),
                title: old.title.clone(),
                icons: old.icons.clone(),
                description: old.description.clone(),
                parameters: Some(schema),
                output_schema: old.output_schema.clone(),
                annotations: old.annotations.clone(),
                exclusive: old.exclusive,
                effect: old.effect.clone(),
                requires_approval: old.requires_approval,
                untrusted_output: old.untrusted_output,
                handler: Arc::clone(&old.handler),
                reads_context: old.reads_context,
                memo: OnceLock::new(),
            }),
        }
    }

    /// The version of this tool an approval is given for: the SHA-256 (hex) of the canonical
    /// JSON of what the model and the pipeline read from the definition (name, title,
    /// description, both schemas, annotations, and the exclusive, approval, untrusted-output and
    /// effect settings). Re-registering an identical definition, as a restarted process does,
    /// keeps the version; changing any of those makes a new one. The handler is code, which no
    /// digest that survives a restart can cover: a host that swaps the body behind an unchanged
    /// definition should change the description (say, with a version number in it) too.
    pub(crate) fn version_hash(&self) -> String {
        let inner = &*self.inner;
        crate::canonical::canonical_sha256(&serde_json::json!({
            "name": &*inner.name,
            "title": inner.title,
            "description": inner.description,
            "parameters": inner.parameters,
            "outputSchema": inner.output_schema,
            "annotations": inner.annotations,
            "exclusive": inner.exclusive,
            "requiresApproval": inner.requires_approval,
            "untrustedOutput": inner.untrusted_output,
            "effect": inner.effect,
        }))
    }

    /// True when both values are the same definition (not merely equal fields).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// This definition's identity, for caches keyed on it (see [`DefinitionIdentity`]).
    pub(crate) fn identity(&self) -> DefinitionIdentity {
        DefinitionIdentity(Arc::downgrade(&self.inner))
    }
}

/// The identity of one definition, which does not keep it alive. While an identity exists, the
/// definition's allocation is not freed, so its [`address`](Self::address) cannot be given to a
/// later definition: a cache keyed on the address and holding the identity never serves one
/// definition's entry to another, even after the first is dropped or replaced.
#[derive(Clone)]
pub(crate) struct DefinitionIdentity(Weak<DefinitionInner>);

impl DefinitionIdentity {
    /// A number unique among the definitions alive, and among those whose identity is held.
    pub(crate) fn address(&self) -> usize {
        self.0.as_ptr().cast::<()>() as usize
    }

    /// Whether the definition is still alive.
    pub(crate) fn is_alive(&self) -> bool {
        self.0.strong_count() > 0
    }
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.inner.name)
            .field("title", &self.inner.title)
            .field("icons", &self.inner.icons)
            .field("description", &self.inner.description)
            .field("parameters", &self.inner.parameters)
            .field("annotations", &self.inner.annotations)
            .field("exclusive", &self.inner.exclusive)
            .field("requires_approval", &self.inner.requires_approval)
            .field("untrusted_output", &self.inner.untrusted_output)
            .field("effect", &self.inner.effect)
            .finish_non_exhaustive()
    }
}

/// Builds a [`ToolDefinition`]; finish with [`handler`](Self::handler), [`run`](Self::run) or
/// [`run_sync`](Self::run_sync).
#[derive(Debug)]
#[must_use = "a builder does nothing until it is given a handler"]
pub struct ToolDefinitionBuilder {
    name: Arc<str>,
    title: Option<String>,
    icons: Vec<ToolIcon>,
    description: Option<String>,
    parameters: Option<Value>,
    output_schema: Option<Value>,
    annotations: ToolAnnotations,
    exclusive: bool,
    requires_approval: bool,
    untrusted_output: bool,
    effect: Option<EffectPolicy>,
}

impl ToolDefinitionBuilder {
    /// Sets the title people see (the model sees the name and the description).
    ///
    /// ```
    /// use prism::ToolDefinition;
    /// use prism::definition::ToolIcon;
    /// use serde_json::Value;
    ///
    /// let weather = ToolDefinition::builder("get_weather")
    ///     .title("Weather")
    ///     .icon(ToolIcon::new("https://example.com/sun.svg").with_mime_type("image/svg+xml"))
    ///     .run_sync(|_, _| Ok(Value::Null));
    /// assert_eq!(weather.title(), Some("Weather"));
    /// assert_eq!(weather.icons()[0].sizes, Vec::<String>::new());
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds an icon after those already given.
    pub fn icon(mut self, icon: ToolIcon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the JSON Schema of the arguments.
    pub fn parameters(mut self, schema: Value) -> Self {
        self.parameters = Some(schema);
        self
    }

    /// Sets the JSON Schema of the output.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Marks the tool exclusive: a turn calling it runs sequentially.
    pub fn exclusive(mut self, exclusive: bool) -> Self {
        self.exclusive = exclusive;
        self
    }

    /// Requires an approval before every call of this tool runs (see
    /// [`ToolDefinition::requires_approval`]).
    pub fn requires_approval(mut self, requires_approval: bool) -> Self {
        self.requires_approval = requires_approval;
        self
    }

    /// Marks the tool's output untrusted (see [`ToolDefinition::untrusted_output`]): first-party
    /// web tools and remote MCP tools say so.
    ///
    /// ```
    /// use prism::ToolDefinition;
    /// use serde_json::Value;
    ///
    /// let fetch = ToolDefinition::builder("fetch_page")
    ///     .untrusted_output(true)
    ///     .run_sync(|_, _| Ok(Value::from("<html>…</html>")));
    /// assert!(fetch.untrusted_output());
    /// ```
    pub fn untrusted_output(mut self, untrusted: bool) -> Self {
        self.untrusted_output = untrusted;
        self
    }

    /// Sets the effect policy.
    pub fn effect(mut self, effect: EffectPolicy) -> Self {
        self.effect = Some(effect);
        self
    }

    /// Finishes with a handler.
    pub fn handler(self, handler: impl ToolHandler) -> ToolDefinition {
        self.handler_arc(Arc::new(handler))
    }

    /// Finishes with a shared handler.
    pub fn handler_arc(self, handler: Arc<dyn ToolHandler>) -> ToolDefinition {
        ToolDefinition {
            inner: Arc::new(DefinitionInner {
                name: self.name,
                title: self.title,
                icons: self.icons,
                description: self.description,
                parameters: self.parameters,
                output_schema: self.output_schema,
                annotations: self.annotations,
                exclusive: self.exclusive,
                requires_approval: self.requires_approval,
                untrusted_output: self.untrusted_output,
                effect: self.effect,
                reads_context: handler.reads_context(),
                handler,
                memo: OnceLock::new(),
            }),
        }
    }

    /// Finishes with an async closure over the (owned) arguments. The closure is called when the
    /// body is awaited, never in `prepare`: code it runs before returning its future comes after
    /// every guard too.
    pub fn run<F, Fut>(self, body: F) -> ToolDefinition
    where
        F: Fn(Value, ToolExecutionContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.handler(AsyncFnHandler(Arc::new(body)))
    }

    /// Finishes with a synchronous closure. It runs when the body is awaited, never in
    /// `prepare`, so the guards between the two steps still come first.
    pub fn run_sync<F>(self, body: F) -> ToolDefinition
    where
        F: Fn(&Value, &ToolExecutionContext) -> Result<Value, ToolError> + Send + Sync + 'static,
    {
        self.handler(SyncFnHandler(Arc::new(body)))
    }

    /// Finishes with an async closure that returns content blocks beside (or instead of) a value:
    /// a [`ToolOutput`] (`block.into()`, `ToolOutput::blocks(blocks)`,
    /// `ToolOutput::new(value).with_content(blocks)`).
    pub fn run_output<F, Fut>(self, body: F) -> ToolDefinition
    where
        F: Fn(Value, ToolExecutionContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        self.handler(AsyncFnHandler(Arc::new(body)))
    }

    /// Finishes with a synchronous closure that returns a [`ToolOutput`]; see
    /// [`run_output`](Self::run_output) and [`run_sync`](Self::run_sync).
    ///
    /// ```
    /// use prism::ToolDefinition;
    /// use prism::call::{ContentBlock, ToolOutput};
    /// use serde_json::json;
    ///
    /// let chart = ToolDefinition::builder("chart").run_output_sync(|_, _| {
    ///     let png = ContentBlock::image_bytes(&[0x89, b'P', b'N', b'G'], "image/png");
    ///     Ok(ToolOutput::new(json!({"points": 12})).with_content([png]))
    /// });
    /// # let _ = chart;
    /// ```
    pub fn run_output_sync<F>(self, body: F) -> ToolDefinition
    where
        F: Fn(&Value, &ToolExecutionContext) -> Result<ToolOutput, ToolError>
            + Send
            + Sync
            + 'static,
    {
        self.handler(SyncFnHandler(Arc::new(body)))
    }
}

struct AsyncFnHandler<F>(Arc<F>);

impl<F, Fut, O> ToolHandler for AsyncFnHandler<F>
where
    F: Fn(Value, ToolExecutionContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    O: Into<ToolOutput>,
{
    fn prepare(
        &self,
        arguments: &Value,
        ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        let call = (Arc::clone(&self.0), arguments.clone(), ctx);
        Ok(ToolFuture::new(Deferred::Unstarted { call: Some(call) }).into())
    }
}

pin_project! {
    /// An async closure's future, made by calling the closure on the first poll: the closure's
    /// own code runs after every guard, as the body does. The future it returns stays until this
    /// one is dropped, so its destructor runs where the pipeline guards a body's destructor.
    #[project = DeferredProjection]
    enum Deferred<F, Fut> {
        Unstarted { call: Option<(Arc<F>, Value, ToolExecutionContext)> },
        Running { #[pin] future: Fut },
    }
}

impl<F, Fut> Future for Deferred<F, Fut>
where
    F: Fn(Value, ToolExecutionContext) -> Fut,
    Fut: Future,
{
    type Output = Fut::Output;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Fut::Output> {
        loop {
            match self.as_mut().project() {
                DeferredProjection::Running { future } => return future.poll(cx),
                DeferredProjection::Unstarted { call } => {
                    let (body, arguments, ctx) = call
                        .take()
                        .expect("a tool body is not polled again after its closure panicked");
                    let future = body(arguments, ctx);
                    self.set(Self::Running { future });
                }
            }
        }
    }
}

struct SyncFnHandler<F>(Arc<F>);

impl<F, O> ToolHandler for SyncFnHandler<F>
where
    F: Fn(&Value, &ToolExecutionContext) -> Result<O, ToolError> + Send + Sync + 'static,
    O: Into<ToolOutput> + 'static,
{
    fn prepare(
        &self,
        arguments: &Value,
        ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        let body = Arc::clone(&self.0);
        let arguments = arguments.clone();
        Ok(ToolFuture::new(async move { body(&arguments, &ctx) }).into())
    }
}
