//! `#[tools]` on impl blocks: methods over one shared `Arc<Self>`, and two blocks of one type
//! kept apart by `name`.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry, tools};
use serde_json::json;

struct Account {
    balance: AtomicI64,
}

#[tools]
impl Account {
    /// Adds money to the account.
    #[tool]
    fn deposit(&self, amount: i64) -> i64 {
        self.balance.fetch_add(amount, Ordering::SeqCst) + amount
    }

    /// Reads the balance.
    #[tool(read_only, name = "balance")]
    async fn read_balance(&self, ctx: ToolExecutionContext) -> i64 {
        let _ = ctx;
        self.balance.load(Ordering::SeqCst)
    }

    /// Not a tool: stays an ordinary method.
    fn reset(&self) {
        self.balance.store(0, Ordering::SeqCst);
    }

    /// Compiled out, and its tool with it.
    #[cfg(any())]
    #[tool]
    fn audit(&self) {}

    /// The currency, for every account.
    #[tool]
    fn currency() -> &'static str {
        "EUR"
    }
}

#[tools(name = admin_tools)]
impl Account {
    /// Closes the account.
    #[tool(destructive)]
    fn close(&self) -> Result<Self, String> {
        Err("accounts cannot be closed here".to_owned())
    }
}

impl serde::Serialize for Account {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.balance.load(Ordering::SeqCst))
    }
}

fn main() {
    let account = Arc::new(Account { balance: AtomicI64::new(10) });
    let mut definitions = Arc::clone(&account).tools();
    let names: Vec<_> = definitions.iter().map(|d| d.name().to_owned()).collect();
    assert_eq!(names, ["deposit", "balance", "currency"]);
    assert_eq!(definitions[1].annotations().read_only, Some(true));
    definitions.extend(Arc::clone(&account).admin_tools());

    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(definitions)).build();
    let ctx = ToolExecutionContext::new();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let result = dispatcher
            .dispatch(ToolCall::new("c1", "deposit", json!({"amount": 5})), &ctx)
            .await
            .unwrap();
        assert_eq!(result.as_value(), Some(&json!(15)));
        let result = dispatcher.dispatch(ToolCall::new("c2", "balance", json!({})), &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!(15)));
        let result = dispatcher.dispatch(ToolCall::new("c3", "close", json!({})), &ctx).await.unwrap();
        assert_eq!(result.error_info().unwrap().message, "accounts cannot be closed here");
    });
    // The shared Arc is the caller's account.
    assert_eq!(account.balance.load(Ordering::SeqCst), 15);
    account.reset();
    assert_eq!(Account::currency(), "EUR");
}
