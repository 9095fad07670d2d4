//! Signatures and names a tool may use freely: the generated code must not trip over them.

use prism::{ToolDefinition, ToolExecutionContext, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The body's output for `arguments`; panics on a refusal or an error.
async fn call(tool: &ToolDefinition, arguments: Value) -> Value {
    match tool
        .handler()
        .prepare(&arguments, ToolExecutionContext::new())
    {
        Ok(prism::definition::Prepared::Ready(body)) => {
            body.await.expect("the body succeeds").value
        }
        Ok(prism::definition::Prepared::Pending(_)) => panic!("no extractors, so ready at once"),
        Err(refused) => panic!("refused: {}", refused.refusal().message),
    }
}

/// A user type whose name is the kind a macro might pick for a type parameter.
#[derive(Deserialize, JsonSchema, Default)]
struct T0 {
    v: i64,
}

/// Adds `b.v` to `a`; `b` has a default, so serde's derive decodes the arguments.
#[tool]
fn add_t0(a: i64, #[serde(default)] b: T0) -> i64 {
    a + b.v
}

#[tokio::test]
async fn a_user_type_named_like_a_type_parameter_is_the_users() {
    let definition = add_t0::definition();
    let schema = definition.parameters().unwrap();
    assert_eq!(schema["required"], json!(["a"]));
    let output = call(&definition, json!({"a": 1, "b": {"v": 2}})).await;
    assert_eq!(output, json!(3));
}
