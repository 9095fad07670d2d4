//! [`McpServer`]: a [`Dispatcher`] served over MCP, on stdio or streamable HTTP.
//!
//! rmcp speaks the protocol; this server answers its `tools/list` and `tools/call` from the
//! dispatcher's registry and pipeline:
//!
//! - `tools/list` shows the tools the dispatcher's filters and the request's scope allow, in the
//!   registry's order, a page at a time, with the parameters in the MCP schema dialect, the
//!   output schema when the output is an object, title, icons, annotations, and `_meta` marks
//!   for tools that need approval or return untrusted output. What a request sees may depend on
//!   its authorisation ([`McpServerBuilder::authorize`]), never on its connection. A cursor is
//!   tied to the list it was written for, not to the process, and refused once that list
//!   changed (`-32602`, list again from the start). A tool whose name MCP does not accept (1 to
//!   128 of `A-Z a-z 0-9 _ - .`) is left out of the list, and logged, as a client may refuse a
//!   whole list for one such name; a `tools/call` naming it still goes through the dispatcher
//!   like any call.
//! - `tools/call` is one [`Dispatcher`] call: guards, events, ledger, redaction, effects. An
//!   unknown tool is a JSON-RPC `-32602` error; blocked, invalid and failed calls are results with
//!   `isError: true` and the reason (a call whose arguments are no object too, which rmcp cannot
//!   read as a call and hands over as an unknown method); a value also goes out as text, and an
//!   object value as
//!   `structuredContent`.
//! - Progress a tool reports ([`ToolExecutionContext::progress`]) goes to a client that asked for
//!   it as `notifications/progress`, with increasing values; a client's cancellation
//!   (`notifications/cancelled`, or a closed HTTP stream) fires the call's cancellation token.
//! - A tool that [requires approval](crate::ToolDefinition::requires_approval) asks the person
//!   through the client (see `approval.rs` for the protocol): `input_required` with a sealed
//!   `requestState` for 2026-07-28 clients, an elicitation in the middle of the call for
//!   handshake-era clients, and an `isError` result naming the pending approval for clients that
//!   cannot be asked.
//! - A tool with an effect policy is not cancelled when its HTTP stream drops (only by an
//!   explicit `notifications/cancelled` in the same session; a stateless 2026-07-28 request is a
//!   session of its own, so no later message reaches it): it runs to its end and records its
//!   outcome, so a client that re-issues the call gets that outcome from the effect store
//!   instead of a second effect.
//! - When a tool is registered in or removed from the served registry, every client that can
//!   hear it is told the tool list changed (the server advertises `tools.listChanged`):
//!   handshake-era sessions by `notifications/tools/list_changed`, 2026-07-28 clients on the
//!   stream of a `subscriptions/listen` asking for tool-list notifications (see
//!   `tool_list_changes.rs`). Changes in quick succession may be told as one.
//!
//! Serve it with [`McpServer::serve_stdio`] or [`serve_http`] (loopback by default, `Host` and
//! `Origin` checked, request bodies bounded, a rate limit per client).

mod approval;
mod body_deadline;
mod calling;
mod detached;
mod http;
mod line_transport;
mod list_cursor;
mod listing;
mod progress;
mod rate_limit;
mod request_head;
mod result;
mod served;
mod session;
mod stdio;
mod tool_list_changes;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelledNotificationParam, CustomRequest,
    CustomResult, ErrorCode, Implementation, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, RequestStateCodec, ServerCapabilities, ServerConfig,
    ServerResult, SubscriptionFilter,
};
use rmcp::service::{
    MaybeSendFuture, NotificationContext, RequestContext, RoleServer, SubscriptionContext,
};

use crate::context::ToolExecutionContext;
use crate::dispatch::{Dispatcher, shown_name};
use crate::grant::ToolGrant;
use crate::panic::guarded;
use crate::schema::LoweringCache;
use crate::scope::ToolScope;

use approval::Approvals;
use detached::Detached;
use session::Session;

pub use http::{HttpOptions, McpHttpServer, serve_http};
pub use rate_limit::{ClientAddress, RateLimitLayer, RateLimitService};
pub use served::ServedRequest;

/// How long a person has to answer an approval question, by default.
const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(15 * 60);

/// Tools per `tools/list` page, by default.
const DEFAULT_PAGE_SIZE: usize = 100;

/// Decides, per request, which tools it may see and call (see [`McpServerBuilder::authorize`]).
type Authorize = dyn Fn(Option<&::http::request::Parts>) -> Option<ToolScope> + Send + Sync;

/// A [`Dispatcher`] as an MCP server: implements rmcp's [`ServerHandler`].
///
/// Cheap to clone. Each MCP session gets its own [`for_session`](Self::for_session) copy (the
/// HTTP transport makes one per session; stdio has one), which shares everything but the table
/// of the session's running calls and the point from which it announces tool-list changes.
///
/// Its clients are told when a tool is registered in or removed from the dispatcher's
/// registry while they are connected (`tools.listChanged`).
///
/// ```
/// use prism::mcp::McpServer;
/// use prism::{Dispatcher, ToolDefinition, ToolRegistry};
/// use serde_json::Value;
///
/// let echo = ToolDefinition::builder("echo").run_sync(|args: &Value, _| Ok(args.clone()));
/// let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo])).build();
/// let server = McpServer::builder(dispatcher).name("echo-server", "1.0.0").build().unwrap();
/// # let _ = server;
/// // server.serve_stdio().await?;   // or prism::mcp::serve_http(server, HttpOptions::default())
/// ```
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

/// What every session of one server shares.
struct Shared {
    dispatcher: Dispatcher,
    implementation: Implementation,
    instructions: Option<String>,
    page_size: usize,
    approvals: Arc<Approvals>,
    context: ToolExecutionContext,
    authorize: Option<Arc<Authorize>>,
    lowering: LoweringCache,
    /// Call ids are `mcp-<nonce>-<n>`, unique across this server's processes and sessions; this
    /// is `mcp-<nonce>-`. The nonce's 64 random bits keep the ids of servers started one per
    /// client apart in a shared ledger: with 32, two of some 77 000 processes would likely meet.
    call_prefix: String,
    calls: AtomicU64,
    /// The calls of tools with an effect running on their own tasks, which the server waits
    /// for before it stops.
    detached: Arc<Detached>,
}

impl Shared {
    /// A session opening now: it announces the registry's changes from this moment on.
    fn new_session(&self) -> Session {
        Session::new(self.dispatcher.registry().changes().generation())
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.shared.implementation.name)
            .field("dispatcher", &self.shared.dispatcher)
            .field("page_size", &self.shared.page_size)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server over `dispatcher` with the defaults (see [`McpServerBuilder`]).
    pub fn new(dispatcher: Dispatcher) -> Self {
        Self::builder(dispatcher).build_with_random_key()
    }

    /// Starts a builder.
    pub fn builder(dispatcher: Dispatcher) -> McpServerBuilder {
        McpServerBuilder {
            dispatcher,
            implementation: Implementation::new("prism", env!("CARGO_PKG_VERSION")),
            instructions: None,
            page_size: DEFAULT_PAGE_SIZE,
            approval_key: None,
            approval_ttl: DEFAULT_APPROVAL_TTL,
            context: ToolExecutionContext::new(),
            authorize: None,
        }
    }

    /// The same server for a new session: shared configuration, its own table of running calls.
    /// Each change to the registry from now on is announced to the session's client.
    pub fn for_session(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            session: Arc::new(self.shared.new_session()),
        }
    }

    /// The dispatcher every call goes through.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.shared.dispatcher
    }

    /// The scope the host's [`authorize`](McpServerBuilder::authorize) gives this request,
    /// within the server's own (that of its [`context`](McpServerBuilder::context)).
    ///
    /// A hook that panics grants nothing (fail closed), so the request still gets its answer.
    fn scope_for(&self, context: &RequestContext<RoleServer>) -> Option<ToolScope> {
        let authorize = self.shared.authorize.as_ref()?;
        let parts = context.extensions.get::<::http::request::Parts>();
        let own = match guarded(|| authorize(parts)) {
            Ok(scope) => scope?,
            Err(_) => {
                // Not the panic's text: it could quote anything the hook read, a secret included.
                tracing::error!(target: "prism_tools", "the MCP server's authorize hook panicked; the request may see and call no tool");
                ToolScope::new(ToolGrant::none())
            }
        };
        Some(match self.shared.context.scope() {
            Some(base) => own.within(base),
            None => own,
        })
    }
}

/// Configures an [`McpServer`].
#[must_use = "a builder does nothing until built"]
pub struct McpServerBuilder {
    dispatcher: Dispatcher,
    implementation: Implementation,
    instructions: Option<String>,
    page_size: usize,
    approval_key: Option<Vec<u8>>,
    approval_ttl: Duration,
    context: ToolExecutionContext,
    authorize: Option<Arc<Authorize>>,
}

impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("name", &self.implementation.name)
            .field("page_size", &self.page_size)
            .field("approval_ttl", &self.approval_ttl)
            .finish_non_exhaustive()
    }
}

impl McpServerBuilder {
    /// The name and version the server gives clients (default: `prism` and this crate's version).
    pub fn name(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.implementation = Implementation::new(name, version);
        self
    }

    /// Instructions for the client's model, sent when a session starts.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Tools per `tools/list` page (default 100; at least 1).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// The key that seals approval states (at least 32 random bytes). Give every process of one
    /// server the same key, so a state one issued opens on another. Without one, a random key is
    /// made when the server is built: approvals then only finish on the process that asked.
    pub fn approval_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.approval_key = Some(key.into());
        self
    }

    /// How long an approval question stays answerable (default 15 minutes): a sealed
    /// `requestState` expires after it, and a handshake-era client's question is given up.
    pub fn approval_ttl(mut self, ttl: Duration) -> Self {
        self.approval_ttl = ttl;
        self
    }

    /// The context every call starts from (session and run ids, metadata, a scope). Each call
    /// gets its own cancellation token, which fires when the run's token does.
    pub fn context(mut self, context: ToolExecutionContext) -> Self {
        self.context = context;
        self
    }

    /// Decides per request which tools it may see and call, from its HTTP request (headers,
    /// say; `None` over stdio). The scope narrows what the dispatcher's filters allow, for
    /// `tools/list` and `tools/call` alike; `None` narrows nothing. A hook that panics grants
    /// nothing to that request.
    ///
    /// ```
    /// use prism::mcp::McpServer;
    /// use prism::registry::{ToolGrant, ToolScope};
    /// use prism::{Dispatcher, ToolRegistry};
    ///
    /// let server = McpServer::builder(Dispatcher::builder(ToolRegistry::new()).build())
    ///     .authorize(|request| {
    ///         let admin = request.is_some_and(|parts| {
    ///             parts.headers.get("x-role").is_some_and(|role| role == "admin")
    ///         });
    ///         (!admin).then(|| ToolScope::new(ToolGrant::only(["search"])))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn authorize(
        mut self,
        authorize: impl Fn(Option<&::http::request::Parts>) -> Option<ToolScope> + Send + Sync + 'static,
    ) -> Self {
        self.authorize = Some(Arc::new(authorize));
        self
    }

    /// The server.
    ///
    /// # Errors
    ///
    /// [`McpServerError::ApprovalKey`] when the approval key is shorter than 32 bytes.
    pub fn build(self) -> Result<McpServer, McpServerError> {
        match self.approval_key.clone() {
            None => Ok(self.build_with_random_key()),
            Some(key) => {
                let codec = RequestStateCodec::try_new(key)
                    .map_err(|error| McpServerError::ApprovalKey(error.to_string()))?;
                Ok(self.finish(Some(codec)))
            }
        }
    }

    fn build_with_random_key(self) -> McpServer {
        let mut key = [0u8; 32];
        // `new_unchecked` only skips the length check, which a 32-byte key passes.
        let codec = match getrandom::fill(&mut key) {
            Ok(()) => Some(RequestStateCodec::new_unchecked(key.to_vec())),
            Err(_) => {
                tracing::warn!(target: "prism_tools", "no entropy for the approval key: 2026-07-28 clients cannot be asked for approvals until a key is given");
                None
            }
        };
        self.finish(codec)
    }

    fn finish(self, codec: Option<RequestStateCodec>) -> McpServer {
        let replays_effects = self.dispatcher.stores_effects();
        let shared = Shared {
            dispatcher: self.dispatcher,
            implementation: self.implementation,
            instructions: self.instructions,
            page_size: self.page_size,
            approvals: Arc::new(Approvals::new(codec, self.approval_ttl, replays_effects)),
            context: self.context,
            authorize: self.authorize,
            lowering: LoweringCache::default(),
            call_prefix: format!("mcp-{}-", &approval::nonce()[..16]),
            calls: AtomicU64::new(0),
            detached: Arc::default(),
        };
        let session = Arc::new(shared.new_session());
        McpServer {
            shared: Arc::new(shared),
            session,
        }
    }
}

/// The error answering a call whose answer could not be written as JSON (which a result made
/// of JSON values never fails).
fn unwritten() -> McpError {
    McpError::internal_error("The call's answer could not be written", None)
}

/// Why a server could not be built or served.
#[derive(Debug)]
#[non_exhaustive]
pub enum McpServerError {
    /// The approval key was refused (too short).
    ApprovalKey(String),
    /// The transport failed: the address could not be bound, or stdio closed during the handshake.
    Transport(std::io::Error),
}

impl fmt::Display for McpServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ApprovalKey(why) => write!(f, "the MCP approval key was refused: {why}"),
            Self::Transport(error) => write!(f, "the MCP transport failed: {error}"),
        }
    }
}

impl std::error::Error for McpServerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Transport(error) => Some(error),
            Self::ApprovalKey(_) => None,
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let mut info =
            ServerConfig::new(capabilities).with_server_info(self.shared.implementation.clone());
        if let Some(instructions) = &self.shared.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        // The handshake's token is cancelled once the session is over (rmcp drops the running
        // service), which ends the session's announcements.
        self.session.tool_list.opened(context.ct.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let changes = self.shared.dispatcher.registry().changes();
        self.session.tool_list.start(changes, context.peer);
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.session.tool_list.offered())
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        let changes = self.shared.dispatcher.registry().changes();
        self.session.tool_list.listen(changes, subscription).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // The scope `tools/call` applies.
        let scope = self
            .scope_for(&context)
            .or_else(|| self.shared.context.scope().cloned());
        let cursor = request
            .as_ref()
            .and_then(|request| request.cursor.as_deref());
        listing::list_page(
            &self.shared.dispatcher,
            &self.shared.lowering,
            scope.as_ref(),
            cursor,
            self.shared.page_size,
        )
        .map_err(|message| McpError::invalid_params(message, None))
    }

    // Boxed: rmcp moves the request's future several times on its way into a task, and this
    // moves a pointer instead of the call's state (which stays within the allocator's
    // per-thread cache, see `McpServer::call`).
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, McpError>> + MaybeSendFuture + '_ {
        Box::pin(self.call(request, None, context))
    }

    /// A `tools/call` rmcp could not read (its arguments are no object) is still one dispatch,
    /// refused as an invalid call (`isError`, with the reason) rather than answered "method not
    /// found"; any other method is unknown, and named in the error redacted and cut.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        if request.method != "tools/call" {
            // The client's text, of any length: shown as a requested tool name is, redacted
            // and cut.
            let method = shown_name(self.shared.dispatcher.redactor(), &request.method);
            return Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Unknown method: {method}"),
                None,
            ));
        }
        let current = calling::speaks_2026_07_28(&context);
        let (call, arguments) = calling::unread_call(request.params)?;
        let answer = Box::pin(self.call(call, Some(arguments), context)).await?;
        let mut result = match answer {
            CallToolResponse::Complete(result) => ServerResult::CallToolResult(result),
            CallToolResponse::InputRequired(asked) => ServerResult::InputRequiredResult(asked),
            // This server makes no tasks.
            _ => return Err(unwritten()),
        };
        // rmcp shapes the results it writes for a handshake-era client (no `resultType`, object
        // output only); this one it hands on as written, so it is shaped here the same way.
        if !current {
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
        }
        serde_json::to_value(result)
            .map(CustomResult::new)
            .map_err(|_| unwritten())
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        if let Some(id) = notification.request_id {
            self.session.cancel(&id);
        }
    }
}
