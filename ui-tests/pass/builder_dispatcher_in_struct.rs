//! A built dispatcher is one plain type: it fits in a struct field without naming a type stack,
//! and is cheap to clone and share between tasks.
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry, ToolResult};
use prism::guard::validator_fn;
use prism::registry::ToolFilter;
use serde_json::json;

#[derive(Clone)]
struct App {
    dispatcher: Dispatcher,
}

impl App {
    fn new(strict: bool) -> Self {
        let registry = ToolRegistry::from_iter([
            ToolDefinition::builder("echo").run_sync(|args, _| Ok(args.clone()))
        ]);
        let builder = Dispatcher::builder(registry).filter(ToolFilter::deny(["shell"]));
        // Different guard configurations still produce the same field type.
        let dispatcher = if strict {
            builder
                .validate(validator_fn(|_tool, _args| Ok(())))
                .build()
        } else {
            builder.build()
        };
        Self { dispatcher }
    }

    async fn handle(&self, call: ToolCall) -> ToolResult {
        self.dispatcher
            .dispatch(call, &ToolExecutionContext::new())
            .await
            .unwrap()
    }
}

fn assert_shareable<T: Clone + Send + Sync + 'static>(_: &T) {}

fn main() {
    let app = App::new(true);
    assert_shareable(&app.dispatcher);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let results = runtime.block_on(async {
        let tasks: Vec<_> = (0..4)
            .map(|n| {
                let app = app.clone();
                tokio::spawn(async move {
                    app.handle(ToolCall::new(format!("c{n}"), "echo", json!({"n": n})))
                        .await
                })
            })
            .collect();
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await.unwrap());
        }
        results
    });
    for (n, result) in results.iter().enumerate() {
        assert_eq!(result.as_value(), Some(&json!({"n": n})));
    }
    let _lenient = App::new(false);
}
