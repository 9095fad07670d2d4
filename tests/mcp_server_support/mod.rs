//! What the MCP server tests share: a registry with one tool per behaviour, a dispatcher with a
//! filter, a ledger and an effect store, and an rmcp client whose answers the test chooses.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use prism::definition::ToolAnnotations;
use prism::definition::ToolIcon;
use prism::dispatch::{InMemoryLedger, ToolEvent, ToolEventKind, event_fn};
use prism::effects::{EffectPolicy, InMemoryEffectStore};
use prism::mcp::McpServer;
use prism::registry::ToolFilter;
use prism::{Dispatcher, ToolDefinition, ToolExecutionContext, ToolRegistry};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, NotificationContext, RequestContext, RoleClient,
    serve_client_with_lifecycle,
};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};

/// The argument that makes a test binary the stdio server of [`fixture`] (an argument, not an
/// environment variable: the Python SDK starts servers with a reduced environment).
pub const SERVE_STDIO: &str = "--serve-mcp-stdio";

/// When this process was started with [`SERVE_STDIO`]: serves the fixture on stdin and stdout
/// until the client leaves, and says how that ended.
pub fn serve_stdio_when_asked() -> Option<std::process::ExitCode> {
    if !std::env::args().any(|arg| arg == SERVE_STDIO) {
        return None;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let served = runtime.block_on(fixture().server.serve_stdio());
    Some(if served.is_ok() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    })
}

/// The server under test and what it lets the test observe.
pub struct Fixture {
    pub server: McpServer,
    pub ledger: InMemoryLedger,
    /// How many times `wipe` ran.
    pub wiped: Arc<AtomicUsize>,
    /// How many times `pay` ran.
    pub paid: Arc<AtomicUsize>,
    /// The server's registry, which the test may change while the server runs.
    pub registry: ToolRegistry,
}

pub fn fixture() -> Fixture {
    fixture_with(|builder| builder)
}

pub fn fixture_with(
    configure: impl FnOnce(prism::mcp::McpServerBuilder) -> prism::mcp::McpServerBuilder,
) -> Fixture {
    let wiped = Arc::new(AtomicUsize::new(0));
    let paid = Arc::new(AtomicUsize::new(0));
    let ints = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": false
    });
    let add = ToolDefinition::builder("add")
        .title("Add")
        .icon(ToolIcon::new("https://example.com/add.svg").with_mime_type("image/svg+xml"))
        .description("Adds two integers.")
        .parameters(ints.clone())
        .annotations(ToolAnnotations {
            read_only: Some(true),
            ..ToolAnnotations::default()
        })
        .run_sync(
            |args: &Value, _| match (args["a"].as_i64(), args["b"].as_i64()) {
                (Some(a), Some(b)) => Ok(json!(a + b)),
                _ => Err("a and b must be integers".into()),
            },
        );
    let stats = ToolDefinition::builder("stats")
        .description("Sums and counts integers.")
        .parameters(json!({
            "type": "object",
            "properties": {"values": {"type": "array", "items": {"type": "integer"}}},
            "required": ["values"]
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"sum": {"type": "integer"}, "count": {"type": "integer"}}
        }))
        .run_sync(|args: &Value, _| {
            let values = args["values"].as_array().ok_or("values must be an array")?;
            let sum: i64 = values.iter().filter_map(Value::as_i64).sum();
            Ok(json!({"sum": sum, "count": values.len()}))
        });
    let wipe_count = Arc::clone(&wiped);
    let wipe = ToolDefinition::builder("wipe")
        .description("Deletes a directory.")
        .parameters(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}))
        .requires_approval(true)
        .run_sync(move |args: &Value, _| {
            wipe_count.fetch_add(1, Ordering::SeqCst);
            Ok(json!(format!("wiped {}", args["path"].as_str().unwrap_or("?"))))
        });
    let slow = ToolDefinition::builder("slow")
        .description("Reports progress, then waits until cancelled unless told to finish.")
        .parameters(json!({"type": "object", "properties": {"finish": {"type": "boolean"}}}))
        .run(|args: Value, ctx: ToolExecutionContext| async move {
            for step in 1..=3 {
                ctx.progress(
                    json!({"progress": step, "total": 3, "message": format!("step {step}")}),
                );
                tokio::task::yield_now().await;
            }
            ctx.progress(json!("almost"));
            if args["finish"] == json!(true) {
                return Ok(json!("finished"));
            }
            // Only the dispatcher's cancellation ends it.
            std::future::pending::<()>().await;
            Ok(Value::Null)
        });
    let hidden = ToolDefinition::builder("hidden")
        .parameters(json!({"type": "object"}))
        .run_sync(|_, _| Ok(json!("should never run")));
    let pay_count = Arc::clone(&paid);
    let pay = ToolDefinition::builder("pay")
        .parameters(json!({"type": "object", "properties": {"cents": {"type": "integer"}}}))
        .effect(EffectPolicy::default())
        .run(move |args: Value, _ctx| {
            let count = Arc::clone(&pay_count);
            async move {
                // Long enough for a client to give up on its stream first.
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                Ok(json!({"paid": args["cents"], "payment": n}))
            }
        });
    let cancelled = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&cancelled);
    let cancellations = ToolDefinition::builder("cancellations")
        .description("How many calls ended cancelled.")
        .parameters(json!({"type": "object"}))
        .run_sync(move |_, _| Ok(json!(counted.load(Ordering::SeqCst))));
    let registry = ToolRegistry::from_iter([
        add,
        stats,
        wipe,
        slow,
        hidden,
        pay,
        multiply::definition(),
        cancellations,
    ]);
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(registry.clone())
        .filter(ToolFilter::deny(["hidden"]))
        .effects(InMemoryEffectStore::new())
        .events(event_fn(move |event: &ToolEvent| {
            if let ToolEventKind::ToolExecutionError { error } = &event.kind
                && error.code.as_str() == "cancelled"
            {
                cancelled.fetch_add(1, Ordering::SeqCst);
            }
        }))
        .ledger(ledger.clone())
        .build();
    let server = configure(McpServer::builder(dispatcher).name("fixture", "1.0.0"))
        .build()
        .expect("the fixture's server builds");
    Fixture {
        server,
        ledger,
        wiped,
        paid,
        registry,
    }
}

/// A server whose one tool, `charge`, needs approval and has an effect policy, on a dispatcher
/// with an effect store and a ledger; the counter says how often it ran, and each run answers
/// `{"charge": n}` with its count.
pub fn charging(
    approval_ttl: std::time::Duration,
) -> (McpServer, InMemoryLedger, Arc<AtomicUsize>) {
    let charged = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&charged);
    let charge = ToolDefinition::builder("charge")
        .parameters(json!({"type": "object", "properties": {"cents": {"type": "integer"}}}))
        .requires_approval(true)
        .effect(EffectPolicy::default())
        .run_sync(move |_, _| Ok(json!({"charge": count.fetch_add(1, Ordering::SeqCst) + 1})));
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([charge]))
        .effects(InMemoryEffectStore::new())
        .ledger(ledger.clone())
        .build();
    let server = McpServer::builder(dispatcher)
        .approval_ttl(approval_ttl)
        .build()
        .expect("the charging server builds");
    (server, ledger, charged)
}

/// Multiplies two integers (a typed tool: its arguments are decoded before it runs).
#[prism::tool(read_only)]
fn multiply(a: i64, b: i64) -> i64 {
    a * b
}

/// An rmcp client whose capabilities, protocol version and approval answer the test picks.
#[derive(Clone)]
pub struct TestClient {
    pub version: ProtocolVersion,
    pub elicitation: bool,
    pub approve: bool,
    pub asked: Arc<Mutex<Vec<String>>>,
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    /// How many `notifications/tools/list_changed` reached the client outside a subscription.
    pub list_changes: Arc<tokio::sync::watch::Sender<usize>>,
}

impl TestClient {
    pub fn new(version: ProtocolVersion) -> Self {
        Self {
            version,
            elicitation: true,
            approve: true,
            asked: Arc::default(),
            progress: Arc::default(),
            list_changes: Arc::new(tokio::sync::watch::Sender::new(0)),
        }
    }

    pub fn current() -> Self {
        Self::new(ProtocolVersion::V_2026_07_28)
    }

    pub fn handshake_era() -> Self {
        Self::new(ProtocolVersion::V_2025_11_25)
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicitation {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("prism-test-client", "0.0.0"),
        )
        .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"approve": self.approve})))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changes.send_modify(|count| *count += 1);
    }
}

/// Starts `client` on `transport`: the 2026-07-28 lifecycle (`server/discover`, metadata on
/// every request) when it speaks that revision, the `initialize` handshake otherwise.
pub async fn start<T, E, A>(
    client: TestClient,
    transport: T,
) -> rmcp::service::RunningService<RoleClient, TestClient>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let lifecycle = if client.version == ProtocolVersion::V_2026_07_28 {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    } else {
        ClientLifecycleMode::Initialize
    };
    serve_client_with_lifecycle(client, transport, lifecycle)
        .await
        .expect("the client starts")
}

/// The first row of `status` in `ledger`, waited for (ten seconds at most, then a panic).
pub async fn wait_for_row(
    ledger: &InMemoryLedger,
    status: prism::dispatch::RecordStatus,
) -> prism::dispatch::ToolCallRecord {
    for _ in 0..1000 {
        if let Some(row) = ledger
            .records()
            .into_iter()
            .find(|row| row.status == status)
        {
            return row;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("no {status:?} row in {:?}", ledger.records());
}

/// The client's end of an in-memory connection (whose buffer holds `buffer` bytes) to a new
/// session of `server`, served on its own task.
pub fn serve_in_memory(server: &McpServer, buffer: usize) -> tokio::io::DuplexStream {
    let (server_end, client_end) = tokio::io::duplex(buffer);
    let server = server.for_session();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    client_end
}

/// The text of a result's first content block.
pub fn first_text(result: &rmcp::model::CallToolResult) -> String {
    let content = serde_json::to_value(&result.content).unwrap();
    content[0]["text"].as_str().unwrap_or_default().to_owned()
}

/// The `_meta` of a result, as JSON.
pub fn meta(result: &rmcp::model::CallToolResult) -> Value {
    serde_json::to_value(result).unwrap()["_meta"].clone()
}
