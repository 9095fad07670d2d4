//! Arm d: `add` as an rmcp `#[tool]` method, called through `ToolRouter::call`.
//!
//! This is what an rmcp server does for every `tools/call` request once the JSON-RPC frame is
//! decoded: build the request context, wrap it with the call's name and argument object in a
//! `ToolCallContext`, and let the router find the route, extract `Parameters<AddArgs>` from the
//! owned object and turn the method's return value into a `CallToolResult`. The transport is not
//! timed: the arm starts from the same decoded [`ToolCall`] as every other arm.
//!
//! `RequestContext` needs a `Peer`, which rmcp only hands out from a running service, so the arm
//! serves its calculator over an in-memory duplex pipe that is never written to.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResponse, NumberOrString};
use rmcp::service::{Peer, RequestContext, RunningService, serve_directly};
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_router};
use serde_json::Value;
use tokio::io::DuplexStream;

use prism_tools::ToolCall;

use crate::{AddArgs, add};

/// The rmcp server: one tool, as rmcp's own calculator example writes it.
#[derive(Clone, Debug, Default)]
pub struct Calculator;

#[tool_router]
impl Calculator {
    /// Adds two integers.
    #[tool(description = "Adds two integers.")]
    fn add(&self, Parameters(args): Parameters<AddArgs>) -> String {
        add(args).to_string()
    }
}

impl ServerHandler for Calculator {}

/// The router, the server it routes to, and a live peer for request contexts.
pub struct RmcpArm {
    server: Calculator,
    router: ToolRouter<Calculator>,
    peer: Peer<RoleServer>,
    _service: RunningService<RoleServer, Calculator>,
    _client_end: DuplexStream,
}

impl RmcpArm {
    /// Starts the calculator's service; call from inside a Tokio runtime.
    pub fn start() -> Self {
        let (server_end, client_end) = tokio::io::duplex(4096);
        let service = serve_directly(Calculator, server_end, None);
        Self {
            server: Calculator,
            router: Calculator::tool_router(),
            peer: service.peer().clone(),
            _service: service,
            _client_end: client_end,
        }
    }

    /// Routes one call. A call whose arguments are not an object is sent without arguments, as
    /// an MCP client would have to.
    pub async fn call(&self, call: ToolCall) -> Result<CallToolResponse, ErrorData> {
        let mut params = CallToolRequestParams::new(call.name);
        if let Value::Object(arguments) = call.arguments {
            params = params.with_arguments(arguments);
        }
        let request = RequestContext::new(NumberOrString::Number(1), self.peer.clone());
        let context = ToolCallContext::new(&self.server, params, request);
        self.router.call(context).await
    }
}
