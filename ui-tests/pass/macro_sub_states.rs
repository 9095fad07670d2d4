//! One host state, several parts: `#[tool(state = AppState)]` names the state, and each
//! `State<T>` parameter is a part of it through `FromState<AppState>`; a `#[tools]` method takes a
//! part of `Self` the same way.

use std::sync::Arc;

use prism::{Dispatcher, State, ToolCall, ToolExecutionContext, ToolRegistry, tool, tools};
use prism::context::FromState;
use serde_json::json;

struct Users {
    names: Vec<String>,
}

struct Orders {
    count: usize,
}

struct AppState {
    users: Arc<Users>,
    orders: Arc<Orders>,
}

impl FromState<AppState> for Users {
    fn from_state(state: &Arc<AppState>) -> Arc<Users> {
        Arc::clone(&state.users)
    }
}

impl FromState<AppState> for Orders {
    fn from_state(state: &Arc<AppState>) -> Arc<Orders> {
        Arc::clone(&state.orders)
    }
}

/// Summarises a user's orders.
#[tool(state = AppState)]
fn summary(user: usize, users: State<Users>, orders: State<Orders>) -> String {
    format!("{} has {} orders", users.names[user], orders.count)
}

/// The shop, whose tools take a part of it.
struct Shop {
    orders: Arc<Orders>,
}

impl FromState<Shop> for Orders {
    fn from_state(state: &Arc<Shop>) -> Arc<Orders> {
        Arc::clone(&state.orders)
    }
}

#[tools]
impl Shop {
    /// Counts the orders.
    #[tool]
    fn order_count(&self, orders: State<Orders>) -> usize {
        let _ = self;
        orders.count
    }
}

fn main() {
    let state = AppState {
        users: Arc::new(Users { names: vec!["ada".to_owned()] }),
        orders: Arc::new(Orders { count: 3 }),
    };
    let shop = Arc::new(Shop { orders: Arc::clone(&state.orders) });
    let mut tools = vec![summary::definition(state)];
    tools.extend(shop.tools());
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(tools)).build();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let ctx = ToolExecutionContext::new();
        let call = ToolCall::new("c1", "summary", json!({"user": 0}));
        let result = dispatcher.dispatch(call, &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!("ada has 3 orders")));
        let call = ToolCall::new("c2", "order_count", json!({}));
        let result = dispatcher.dispatch(call, &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!(3)));
    });
}
