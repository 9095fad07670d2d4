//! `requires_approval` declared by the tool itself: `#[tool(requires_approval)]`, a `#[tools]`
//! method, `#[derive(Tool)]` and a hand-written `Tool` all say so in their definition, and a run
//! with an approval store suspends before such a call's side effect.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use prism::run::{ApprovalDecision, InMemoryApprovalStore, RunEnd, ScriptedProvider};
use prism::{
    Agent, Dispatcher, ProviderResponse, RunOptions, Tool, ToolCall, ToolDefinition,
    ToolExecutionContext, ToolRegistry, schema, tool, tools,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

static PAYMENTS: AtomicUsize = AtomicUsize::new(0);

/// Pays an amount, in cents.
#[tool(requires_approval)]
fn pay(cents: u64) -> String {
    PAYMENTS.fetch_add(1, Ordering::SeqCst);
    format!("paid {cents}")
}

/// Reads the balance.
#[tool(requires_approval = false)]
fn balance() -> u64 {
    0
}

struct Bank;

#[tools]
impl Bank {
    /// Closes the account.
    #[tool(requires_approval = true, destructive)]
    fn close(&self) -> &'static str {
        "closed"
    }

    /// Opens an account.
    #[tool]
    fn open(&self) -> &'static str {
        "opened"
    }
}

/// Refunds a payment.
#[derive(prism::Tool, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[tool(requires_approval)]
struct Refund {
    /// The payment to refund.
    payment: String,
}

impl Refund {
    async fn run(self, _ctx: ToolExecutionContext) -> Result<String, String> {
        Ok(format!("refunded {}", self.payment))
    }
}

#[derive(Deserialize, JsonSchema)]
struct WireArgs {
    to: String,
}

/// A hand-written tool that asks for approval.
#[derive(Clone)]
struct Wire;

impl Tool for Wire {
    const NAME: &'static str = "wire";
    type Args = WireArgs;
    type Output = String;
    type Error = std::convert::Infallible;

    fn parameters(&self) -> Option<serde_json::Value> {
        Some(schema::parameters_for::<WireArgs>())
    }

    fn requires_approval(&self) -> bool {
        true
    }

    async fn call(self, args: WireArgs, _ctx: ToolExecutionContext) -> Result<String, Self::Error> {
        Ok(format!("wired to {}", args.to))
    }
}

#[test]
fn every_form_declares_requires_approval_in_its_definition() {
    assert!(pay::definition().requires_approval());
    assert!(!balance::definition().requires_approval());
    let bank: Vec<_> = Arc::new(Bank)
        .tools()
        .into_iter()
        .map(|tool| (tool.name().to_owned(), tool.requires_approval()))
        .collect();
    assert_eq!(
        bank,
        [("close".to_owned(), true), ("open".to_owned(), false)]
    );
    assert!(Refund::definition().requires_approval());
    assert!(ToolDefinition::from_tool(Wire).requires_approval());
}

#[tokio::test]
async fn a_run_suspends_on_a_tool_that_requires_approval_and_runs_it_once_approved() {
    let store = Arc::new(InMemoryApprovalStore::new());
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "pay", json!({"cents": 250}))]),
        ProviderResponse::text("done"),
    ]);
    let agent = Agent::new(
        Dispatcher::builder(ToolRegistry::from_iter([pay::definition()])).build(),
        provider,
    )
    .with_approvals(Arc::clone(&store));
    let mut session = agent.session("s1");
    let outcome = session.run("pay", RunOptions::new()).await.unwrap();

    assert!(outcome.is_suspended());
    let pending = outcome.pending_approvals().to_vec();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].key.tool, "pay");
    assert_eq!(pending[0].arguments, json!({"cents": 250}));
    assert_eq!(
        PAYMENTS.load(Ordering::SeqCst),
        0,
        "suspended before the body"
    );

    let outcome = session
        .resume([ApprovalDecision::approve(&pending[0].key)])
        .await
        .unwrap();
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(PAYMENTS.load(Ordering::SeqCst), 1);
}

/// Dispatched where nobody can be asked (no run, no MCP client), a tool that requires approval
/// is refused before its side effect rather than run unapproved.
#[tokio::test]
async fn a_direct_dispatch_refuses_a_tool_that_requires_approval() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let wipe = ToolDefinition::builder("wipe")
        .requires_approval(true)
        .run_sync(move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(json!("wiped"))
        });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([wipe])).build();
    let result = dispatcher
        .dispatch(
            ToolCall::new("c1", "wipe", json!({})),
            &ToolExecutionContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        result.block_reason(),
        Some(prism::call::BlockReason::PermissionDenied)
    );
    let message = &result.error_info().unwrap().message;
    assert!(message.contains("requires an approval"), "{message}");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool never ran");
}
