//! [`McpClient`]: one connection to an MCP server, and the definitions of its tools.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::{Map, Value};

use crate::call::{CallId, ToolOutput};
use crate::context::ToolExecutionContext;
use crate::definition::{NotPrepared, Prepared, ToolFuture, ToolHandler};
use crate::error::ToolError;
use crate::filter::CompiledFilters;
use crate::validation::JsonSchemaEngine;

use super::catalog::{self, RemoteTools};
use super::connect::{self, ProtocolEra, Session, StderrScrubber};
use super::error::McpClientError;
use super::listing;
use super::notifications::{BridgeHandler, ProgressRoutes};
use super::outcome::{InputRequired, RemoteOutcome};
use super::output_contract::{self, OutputContract};
use super::remote_call::{self, CallSite, Resume};
use super::server::RemoteServer;
use super::sessions::Sessions;

/// How many `input_required` outcomes of dispatched calls are kept for the host to read.
const KEPT_INPUT_REQUESTS: usize = 64;

/// A connection to one MCP server, whose tools become [`ToolDefinition`](crate::ToolDefinition)s
/// the host registers and dispatches like its own.
///
/// Each definition's handler calls the remote tool, so a call reaches the server only after the
/// dispatcher's whole pipeline let it through (filters, grants, permission, validation,
/// approvals, effects), and its result comes back through the same observers, marked untrusted.
/// A definition holds the connection: the server lives while its tools are registered, or until
/// [`close`](Self::close).
///
/// When the session ends (the child process exits or is killed, a message over the bound closes
/// the stream, the HTTP transport stops), the next call or listing opens a new one to the
/// same server, asking for the same protocol era, and the registered definitions go on working:
/// a long-running host need not rebuild anything when a server restarts. A call that was in flight
/// when the session ended fails with `mcp_connection_lost` and is never sent again, since what
/// it did on the server is unknown. A server that cannot be reached again is tried once per
/// delay (1 s, doubling up to 30 s); calls in between fail at once with `mcp_connection_lost`,
/// saying when the next attempt will be made. See the [module docs](super) for more.
///
/// ```no_run
/// use prism::mcp::{McpClient, RemoteServer};
/// use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};
/// use serde_json::json;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = RemoteServer::command("time", "python3")
///     .args(["-m", "mcp_server_time", "--local-timezone", "UTC"])
///     .prefixed(true);
/// let client = McpClient::connect(server).await?;
/// let registry = ToolRegistry::from_iter(client.tools().await?.into_definitions());
/// let dispatcher = Dispatcher::builder(registry).build();
/// let call = ToolCall::new("c1", "time__get_current_time", json!({"timezone": "Europe/Paris"}));
/// let result = dispatcher.dispatch(call, &ToolExecutionContext::new()).await?;
/// assert!(result.is_untrusted());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpClient {
    connection: Arc<Connection>,
    /// The kept list. Outside the connection, which the definitions in it hold: kept inside,
    /// the two would keep each other alive.
    listed: Arc<tokio::sync::Mutex<Option<KeptList>>>,
}

/// The last list, until when the server said it holds, and the session it was listed in.
type KeptList = (RemoteTools, Option<Instant>, u64);

struct Connection {
    server: RemoteServer,
    /// The live session, replaced when it ended (the definitions hold this connection, so what
    /// is replaced lives inside it).
    sessions: Sessions,
    input_required: Mutex<VecDeque<(CallId, InputRequired)>>,
    /// Compiles the tools' output schemas; its cache spares a relisting the same work.
    output_engine: JsonSchemaEngine,
    /// The output schemas the last listing declared, by remote name, for direct calls (a
    /// dispatched call's handler holds its definition's own).
    outputs: Mutex<HashMap<Arc<str>, Arc<OutputContract>>>,
    /// The host's filters, compiled: a tool they leave out is never called, however asked.
    filters: CompiledFilters,
}

impl McpClient {
    /// Connects with the default protocol era ([`ProtocolEra::Auto`]).
    ///
    /// # Errors
    ///
    /// [`McpClientError`] when the process cannot start, the HTTP client cannot be built, or
    /// the handshake fails or times out.
    pub async fn connect(server: RemoteServer) -> Result<Self, McpClientError> {
        Self::connect_with(server, ProtocolEra::Auto).await
    }

    /// Connects asking for `era`.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub async fn connect_with(
        server: RemoteServer,
        era: ProtocolEra,
    ) -> Result<Self, McpClientError> {
        server.check_prefix()?;
        let (handler, progress, tools_changed) = BridgeHandler::new(server.scrubber());
        let stderr = StderrScrubber::new(&server);
        let session = connect::open(&server, era, handler, &stderr).await?;
        Ok(Self::assemble(
            server,
            progress,
            tools_changed,
            session,
            Some(era),
            stderr,
        ))
    }

    /// Connects over a transport made by the caller (an in-memory pipe, in tests).
    #[cfg(test)]
    pub(crate) async fn connect_over<T, E, A>(
        server: RemoteServer,
        transport: T,
    ) -> Result<Self, McpClientError>
    where
        T: rmcp::transport::IntoTransport<rmcp::service::RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        server.check_prefix()?;
        let (handler, progress, tools_changed) = BridgeHandler::new(server.scrubber());
        let session = connect::open_over(&server, handler, transport).await?;
        // The caller's transport cannot be made again: nothing reconnects.
        let stderr = StderrScrubber::new(&server);
        Ok(Self::assemble(
            server,
            progress,
            tools_changed,
            session,
            None,
            stderr,
        ))
    }

    fn assemble(
        server: RemoteServer,
        progress: ProgressRoutes,
        tools_changed: Arc<AtomicBool>,
        session: Session,
        era: Option<ProtocolEra>,
        stderr: StderrScrubber,
    ) -> Self {
        Self {
            connection: Arc::new(Connection {
                sessions: Sessions::new(session, progress, tools_changed, era, stderr),
                input_required: Mutex::new(VecDeque::new()),
                output_engine: output_contract::engine(&server.bounds, server.scrubber()),
                outputs: Mutex::default(),
                filters: CompiledFilters::new(&server.filters),
                server,
            }),
            listed: Arc::default(),
        }
    }

    /// The server's name, as configured.
    pub fn name(&self) -> &str {
        &self.connection.server.name
    }

    /// The protocol version the current session speaks, e.g. `2026-07-28` or `2025-11-25`.
    pub fn protocol_version(&self) -> Option<String> {
        self.connection
            .sessions
            .current()
            .peer
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    }

    /// The server's own name and version, as it reported them in the current session
    /// (untrusted), with the endpoint's credentials taken out.
    pub fn server_info(&self) -> Option<(String, String)> {
        let live = self.connection.sessions.current();
        let info = live.peer.peer_info()?;
        let implementation = info.server_info.as_ref()?;
        let server = &self.connection.server;
        Some((
            server.scrub(&implementation.name),
            server.scrub(&implementation.version),
        ))
    }

    /// The child process's id, for a server started as one (while it runs): after a new
    /// session was opened, the new process's.
    pub fn process_id(&self) -> Option<u32> {
        self.connection.sessions.current().process_id
    }

    /// Sets the delays between attempts to open a new session.
    #[cfg(test)]
    pub(crate) fn set_backoff(&self, backoff: super::sessions::Backoff) {
        self.connection.sessions.set_backoff(backoff);
    }

    /// Lets the next attempt to open a session be made now, whatever the delay.
    #[cfg(test)]
    pub(crate) fn skip_reconnect_delay(&self) {
        self.connection.sessions.skip_delay();
    }

    /// Whether the current session ended (the next call opens a new one).
    #[cfg(test)]
    pub(crate) fn session_ended(&self) -> bool {
        self.connection.sessions.current().ended()
    }

    /// The server's tools as the host takes them. The list is asked for once and kept until
    /// the server's cache hint expires, the server says the list changed, or a new session is
    /// opened (a restarted server may offer other tools); every page is followed, within the
    /// list timeout. A session that ended is replaced first, as for a call.
    ///
    /// # Errors
    ///
    /// [`McpClientError`] when the server does not answer in time, the connection is gone and
    /// no new session could be opened (or the client was closed), or the pages do not end.
    pub async fn tools(&self) -> Result<RemoteTools, McpClientError> {
        let connection = &self.connection;
        let mut listed = self.listed.lock().await;
        let live = connection
            .sessions
            .live(&connection.server)
            .await
            .map_err(|unavailable| unavailable.list_error(&connection.server))?;
        let changed = live.tools_changed.swap(false, Ordering::AcqRel);
        if let Some((tools, expires_at, generation)) = listed.as_ref()
            && !changed
            && *generation == live.generation
            && expires_at.is_none_or(|at| Instant::now() < at)
        {
            return Ok(tools.clone());
        }
        let remote = listing::list(&connection.server, &live.peer, &live.overflow)
            .await
            // A change not taken stays to be taken: the next call asks again.
            .inspect_err(|_| {
                live.tools_changed.fetch_or(changed, Ordering::AcqRel);
            })?;
        let mut outputs = HashMap::new();
        let (definitions, built_skipped) = catalog::build(
            &connection.server,
            &remote.tools,
            remote.cut,
            &connection.output_engine,
            |name, output| {
                let remote_name: Arc<str> = Arc::from(name);
                if let Some(output) = &output {
                    outputs.insert(Arc::clone(&remote_name), Arc::clone(output));
                }
                Arc::new(RemoteToolHandler {
                    connection: Arc::clone(connection),
                    remote_name,
                    output,
                })
            },
        );
        *connection.kept_outputs() = outputs;
        // Tools the SDK could not read come first; pages left unread stay last.
        let mut skipped = remote.unreadable;
        skipped.extend(built_skipped);
        let skipped = catalog::capped(skipped);
        for tool in &skipped {
            tracing::warn!(
                target: "prism::mcp",
                server = %connection.server.name,
                tool = ?tool.name,
                reason = ?tool.reason,
                "remote tool skipped"
            );
        }
        let tools = RemoteTools {
            definitions,
            skipped,
            expires_in: remote
                .expires_at
                .map(|at| at.saturating_duration_since(Instant::now())),
        };
        *listed = Some((tools.clone(), remote.expires_at, live.generation));
        Ok(tools)
    }

    /// Forgets the kept list, so the next [`tools`](Self::tools) asks the server again.
    pub async fn refresh_tools(&self) {
        // Pages are asked for without the SDK's cache (see `listing`): only this list is kept.
        *self.listed.lock().await = None;
    }

    /// Calls the remote tool `tool` (its name on the server) directly, **outside the
    /// dispatcher**: no guard, event or ledger row. For what the dispatcher cannot express,
    /// such as answering an `input_required` ([`resume`](Self::resume)); everything else goes
    /// through the definitions. Bounded, timed out and cancelled as a dispatched call is, and
    /// held to the output schema the tool declared in the last [`tools`](Self::tools) listing
    /// (a tool not listed yet is not checked). A session that ended is replaced first, as for a
    /// dispatched call; a call in flight when its session ends is never sent again. A tool the
    /// host's [`filter`](RemoteServer::filter)s leave out is never called.
    ///
    /// # Errors
    ///
    /// A [`ToolError`] with one of the [`codes`](super::codes), `output_too_large`,
    /// `cancelled`, or `tool_denied` for a tool the filters leave out.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        ctx: &ToolExecutionContext,
    ) -> Result<RemoteOutcome, ToolError> {
        let output = self.connection.output_of(tool);
        self.connection
            .call(tool, arguments, None, output.as_deref(), ctx)
            .await
    }

    /// Calls `tool` again with the answers to its [`InputRequired`]: `responses` by the
    /// requests' keys, and the request state the server gave. The arguments must be the ones of
    /// the first call (the dispatcher already judged those).
    ///
    /// # Errors
    ///
    /// As [`call`](Self::call).
    pub async fn resume(
        &self,
        request: &InputRequired,
        arguments: Value,
        responses: BTreeMap<String, Value>,
        ctx: &ToolExecutionContext,
    ) -> Result<RemoteOutcome, ToolError> {
        let resume = Resume {
            responses,
            request_state: request.request_state.clone(),
        };
        let output = self.connection.output_of(&request.tool);
        self.connection
            .call(
                &request.tool,
                arguments,
                Some(resume),
                output.as_deref(),
                ctx,
            )
            .await
    }

    /// The [`InputRequired`] of the dispatched call `call_id`, which failed with code
    /// `mcp_input_required`; taken, so a second read gives `None`. The last 64 are kept; a
    /// call id used again names its latest call only.
    pub fn take_input_required(&self, call_id: &str) -> Option<InputRequired> {
        let mut kept = self.connection.kept_input();
        let index = kept.iter().position(|(id, _)| id.as_str() == call_id)?;
        kept.remove(index).map(|(_, request)| request)
    }

    /// Ends the session and, for a child process, stops it (closing its input first, then
    /// killing it if it does not exit). Calls still running fail with `mcp_connection_lost`,
    /// and so does every later call or listing, saying the client was closed: nothing opens a
    /// new session after this.
    pub async fn close(&self) {
        self.connection.sessions.close().await;
    }
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.connection.server.name)
            .field("process_id", &self.process_id())
            .finish_non_exhaustive()
    }
}

impl Connection {
    fn kept_input(&self) -> std::sync::MutexGuard<'_, VecDeque<(CallId, InputRequired)>> {
        // A queue of finished answers: nothing a panic could leave half-written.
        self.input_required
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn kept_outputs(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Arc<OutputContract>>> {
        // Replaced whole at each listing: nothing a panic could leave half-written.
        self.outputs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The output schema `tool` declared in the last listing, if it declared one.
    fn output_of(&self, tool: &str) -> Option<Arc<OutputContract>> {
        self.kept_outputs().get(tool).cloned()
    }

    async fn call(
        &self,
        tool: &str,
        arguments: Value,
        resume: Option<Resume>,
        output: Option<&OutputContract>,
        ctx: &ToolExecutionContext,
    ) -> Result<RemoteOutcome, ToolError> {
        // A direct call may name any tool; one the host's filters leave out is never sent.
        if !self.filters.allows(tool) {
            return Err(ToolError::with_code(
                "tool_denied",
                format!(
                    "the host's filter for MCP server `{}` leaves out `{tool}`; it was not called",
                    self.server.name
                ),
            ));
        }
        // The server may write what it is sent on its standard error, which the host's log
        // gets: scrubbed of the calling dispatcher's secrets too.
        self.sessions.stderr().learn(ctx.redactor());
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            _ => {
                return Err(ToolError::with_code(
                    "invalid_arguments",
                    "the arguments of an MCP tool are a JSON object",
                ));
            }
        };
        // Only a call that starts after the session ended gets a new one; one in flight when
        // it ended fails with the old one. Opening one waits at most the connect timeout, and
        // the caller may give up sooner.
        let live = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => return Err(ToolError::cancelled()),
            live = self.sessions.live(&self.server) => {
                live.map_err(|unavailable| unavailable.call_error(&self.server, tool))?
            }
        };
        let site = CallSite {
            server: &self.server,
            scrubber: live.progress.scrubber(),
            host: ctx.redactor(),
            peer: &live.peer,
            progress: &live.progress,
            overflow: &live.overflow,
            output,
        };
        remote_call::call(site, tool, arguments, resume, ctx).await
    }

    /// A dispatched call: the outcome as a tool's result.
    async fn dispatched(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        output: Option<&OutputContract>,
        ctx: ToolExecutionContext,
    ) -> Result<ToolOutput, ToolError> {
        match self
            .call(tool, Value::Object(arguments), None, output, &ctx)
            .await?
        {
            RemoteOutcome::Complete(output) => Ok(output),
            RemoteOutcome::Failed(message) => Err(ToolError::new(message)),
            RemoteOutcome::InputRequired(request) => {
                // One pass with the host's secrets (see `CallSite::scrubber`).
                let scrubber = self
                    .sessions
                    .current()
                    .progress
                    .scrubber()
                    .union(ctx.redactor());
                let error = request.to_tool_error(&scrubber);
                if let Some(id) = ctx.tool_call_id() {
                    let mut kept = self.kept_input();
                    // Models reuse call ids from turn to turn: an id names its latest call, so
                    // an earlier call's request under it is replaced, never handed out for it.
                    kept.retain(|(kept_id, _)| kept_id != id);
                    if kept.len() == KEPT_INPUT_REQUESTS {
                        kept.pop_front();
                    }
                    kept.push_back((id.clone(), request));
                }
                Err(error)
            }
        }
    }
}

/// The handler behind each remote tool's definition. It holds the connection, so the server
/// lives while the tool is registered.
struct RemoteToolHandler {
    connection: Arc<Connection>,
    remote_name: Arc<str>,
    /// The output schema the definition declares, compiled: results are held to it.
    output: Option<Arc<OutputContract>>,
}

impl ToolHandler for RemoteToolHandler {
    fn prepare(
        &self,
        arguments: &Value,
        ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        let Value::Object(arguments) = arguments else {
            return Err(NotPrepared::invalid_arguments(
                "the arguments of an MCP tool are a JSON object",
            ));
        };
        let connection = Arc::clone(&self.connection);
        let remote_name = Arc::clone(&self.remote_name);
        let output = self.output.clone();
        let arguments = arguments.clone();
        Ok(ToolFuture::new(async move {
            connection
                .dispatched(&remote_name, arguments, output.as_deref(), ctx)
                .await
        })
        .into())
    }
}
