//! A `#[tools]` method may spell its receiver `self: &Self`, or name the type, as well as `&self`.

use std::sync::Arc;

use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry, tools};
use serde_json::json;

struct Greeter {
    greeting: String,
}

#[tools]
impl Greeter {
    /// Greets someone.
    #[tool]
    fn greet(self: &Self, name: String) -> String {
        format!("{}, {name}", self.greeting)
    }

    /// Says the greeting alone.
    #[tool]
    fn greeting<'a>(self: &'a Greeter) -> String {
        self.greeting.clone()
    }

    /// Says the greeting twice.
    #[tool]
    fn twice(&self) -> String {
        format!("{0} {0}", self.greeting)
    }
}

fn main() {
    let greeter = Arc::new(Greeter {
        greeting: "Hello".to_owned(),
    });
    let definitions = greeter.tools();
    let names: Vec<_> = definitions.iter().map(|d| d.name().to_owned()).collect();
    assert_eq!(names, ["greet", "greeting", "twice"]);

    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(definitions)).build();
    let ctx = ToolExecutionContext::new();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let result = dispatcher
            .dispatch(ToolCall::new("c1", "greet", json!({"name": "Ada"})), &ctx)
            .await
            .unwrap();
        assert_eq!(result.as_value(), Some(&json!("Hello, Ada")));
        let result = dispatcher.dispatch(ToolCall::new("c2", "greeting", json!({})), &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!("Hello")));
    });
}
