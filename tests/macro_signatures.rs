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

struct Ledger;

#[prism::tools]
impl Ledger {
    const HELP: &'static str = "Reads the ledger.";

    fn policy() -> prism::effects::EffectPolicy {
        prism::effects::EffectPolicy::new(std::time::Duration::from_secs(7)).with_scope("ledger")
    }

    #[tool(description = Self::HELP, effect = Self::policy())]
    fn read(&self) -> i64 {
        1
    }

    #[tool(description = <Self as Named>::NAME)]
    fn named(&self) -> i64 {
        2
    }
}

trait Named {
    const NAME: &'static str;
}

impl Named for Ledger {
    const NAME: &'static str = "Names the ledger.";
}

#[test]
fn self_in_a_key_of_a_tools_method_is_the_impl_blocks_type() {
    let tools = std::sync::Arc::new(Ledger).tools();
    assert_eq!(tools[0].description(), Some("Reads the ledger."));
    let effect = tools[0].effect().expect("the tool has an effect policy");
    assert_eq!(effect.scope.as_deref(), Some("ledger"));
    assert_eq!(effect.lease, std::time::Duration::from_secs(7));
    assert_eq!(tools[1].description(), Some("Names the ledger."));
}

/// Echoes `x` with the call's run id; the context is borrowed for a named lifetime.
#[tool]
async fn echo_with_lifetime<'a>(ctx: &'a ToolExecutionContext, x: String) -> String
where
    'a: 'a,
{
    format!("{x}{}", ctx.run_id().unwrap_or(""))
}

struct Greeter {
    greeting: String,
}

#[prism::tools]
impl Greeter {
    /// Greets, borrowing the greeting from the shared state.
    #[tool]
    async fn greet<'s>(&'s self, name: String) -> Result<String, String> {
        let greeting: &'s str = &self.greeting;
        Ok(format!("{greeting}, {name}"))
    }
}

#[tokio::test]
async fn a_tool_may_name_lifetimes() {
    let echo = echo_with_lifetime::definition();
    assert_eq!(call(&echo, json!({"x": "hi"})).await, json!("hi"));
    let tools = std::sync::Arc::new(Greeter {
        greeting: "hello".to_owned(),
    })
    .tools();
    assert_eq!(
        call(&tools[0], json!({"name": "Ada"})).await,
        json!("hello, Ada")
    );
}

/// Adds the arguments that are compiled in.
#[tool]
fn add_configured(
    a: i64,
    #[cfg(not(test))] b: i64,
    #[cfg(test)] c: i64,
    #[cfg(not(test))]
    #[serde(default)]
    d: i64,
    #[cfg(test)]
    #[serde(default)]
    e: i64,
    #[cfg(not(test))] ctx: ToolExecutionContext,
) -> i64 {
    a + c + e
}

/// Counts its one argument, compiled in, beside one that is compiled out; decoded by the
/// generated decoder.
#[tool]
fn count_configured(#[cfg(test)] items: Vec<String>, #[cfg(not(test))] other: u8) -> usize {
    items.len()
}

#[tokio::test]
async fn parameters_compiled_out_are_not_arguments() {
    let add = add_configured::definition();
    let schema = add.parameters().unwrap();
    assert_eq!(schema["required"], json!(["a", "c"]));
    assert!(schema["properties"].get("b").is_none());
    assert!(schema["properties"].get("d").is_none());
    assert_eq!(call(&add, json!({"a": 1, "c": 2, "e": 3})).await, json!(6));
    let refused = add.handler().prepare(
        &json!({"a": 1, "b": 2, "c": 3}),
        ToolExecutionContext::new(),
    );
    assert!(
        refused.is_err(),
        "`b` is compiled out, so it is an unknown argument"
    );

    let count = count_configured::definition();
    assert_eq!(count.parameters().unwrap()["required"], json!(["items"]));
    assert_eq!(call(&count, json!({"items": ["x", "y"]})).await, json!(2));
    let refused = count.handler().prepare(
        &json!({"items": [], "other": 1}),
        ToolExecutionContext::new(),
    );
    assert!(
        refused.is_err(),
        "`other` is compiled out, so it is an unknown argument"
    );
}

#[derive(Deserialize, JsonSchema, prism::Tool)]
#[serde(deny_unknown_fields)]
#[tool(description = Self::HELP, effect = Self::policy())]
struct Archive {
    path: String,
}

impl Archive {
    const HELP: &'static str = "Archives a file.";

    fn policy() -> prism::effects::EffectPolicy {
        prism::effects::EffectPolicy::new(std::time::Duration::from_secs(9))
    }

    async fn run(self, _ctx: ToolExecutionContext) -> Result<String, String> {
        Ok(self.path)
    }
}

#[test]
fn self_in_a_key_of_a_derived_tool_is_the_struct() {
    let archive = Archive::definition();
    assert_eq!(archive.description(), Some("Archives a file."));
    let effect = archive.effect().expect("the tool has an effect policy");
    assert_eq!(effect.lease, std::time::Duration::from_secs(9));
}

/// Echoes the limit, whose type depends on the build.
#[tool]
fn limited(#[cfg(test)] limit: u32, #[cfg(not(test))] limit: u64) -> String {
    limit.to_string()
}

#[tokio::test]
async fn one_parameter_may_have_a_version_per_configuration() {
    let limited = limited::definition();
    let schema = limited.parameters().unwrap();
    assert_eq!(schema["properties"]["limit"]["format"], "uint32");
    assert_eq!(call(&limited, json!({"limit": 7})).await, json!("7"));
}

/// Resets nothing; succeeds with no value.
#[tool]
fn reset() -> Result<(), String> {
    Ok(())
}

/// Resets nothing; succeeds with no value, through an alias of `Result`.
#[tool]
fn reset_io() -> std::io::Result<()> {
    Ok(())
}

#[tokio::test]
async fn a_result_of_unit_has_no_output_schema_as_unit_has_none() {
    for definition in [reset::definition(), reset_io::definition()] {
        assert_eq!(definition.output_schema(), None, "{}", definition.name());
        assert_eq!(call(&definition, json!({})).await, Value::Null);
    }
}
