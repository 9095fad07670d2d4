//! The decoder `#[tool]` generates for arguments without serde attributes against serde's
//! derive, which decodes arguments that carry one: both must accept the same objects and refuse
//! the others with the same message, word for word, naming the same path.

use prism::{ToolDefinition, ToolExecutionContext, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Point {
    x: i64,
    y: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Order {
    Ascending,
    Descending,
}

/// Sums the arguments, through the generated decoder.
#[tool(name = "t")]
fn generated(
    count: i64,
    label: String,
    limit: Option<u32>,
    order: Option<Order>,
    points: Option<Vec<Point>>,
    #[serde(rename = "type")] kind: Option<String>,
) -> String {
    summary(count, &label, limit, order, points, kind)
}

/// The same tool, decoded by serde's derive: `alias` is a serde attribute the generated decoder
/// leaves to serde, and naming the field itself changes nothing else.
#[tool(name = "t")]
fn derived(
    #[serde(alias = "count")] count: i64,
    label: String,
    limit: Option<u32>,
    order: Option<Order>,
    points: Option<Vec<Point>>,
    #[serde(rename = "type")] kind: Option<String>,
) -> String {
    summary(count, &label, limit, order, points, kind)
}

fn summary(
    count: i64,
    label: &str,
    limit: Option<u32>,
    order: Option<Order>,
    points: Option<Vec<Point>>,
    kind: Option<String>,
) -> String {
    let order = match order {
        Some(Order::Ascending) => "ascending",
        Some(Order::Descending) => "descending",
        None => "none",
    };
    let points: Vec<(i64, Option<i64>)> = points
        .unwrap_or_default()
        .into_iter()
        .map(|point| (point.x, point.y))
        .collect();
    format!("{count} {label} {limit:?} {order} {points:?} {kind:?}")
}

/// What the tool made of `arguments`: the body's output, or the refusal's reason and message.
async fn outcome(tool: &ToolDefinition, arguments: &Value) -> Result<Value, String> {
    match tool
        .handler()
        .prepare(arguments, ToolExecutionContext::new())
    {
        Ok(prism::definition::Prepared::Ready(body)) => {
            let output = body.await.map_err(|error| format!("{error:?}"))?;
            Ok(output.value)
        }
        Ok(prism::definition::Prepared::Pending(_)) => {
            panic!("a tool without extractors is ready at once")
        }
        Err(refused) => Err(format!(
            "{:?}: {}",
            refused.reason(),
            refused.refusal().message
        )),
    }
}

#[tokio::test]
async fn the_generated_decoder_answers_as_serde_does() {
    let cases = [
        json!({"count": 3, "label": "a", "limit": 2, "order": "descending", "points": [{"x": 1}], "type": "k"}),
        json!({"label": "a", "count": 3}),
        json!({"count": 3, "label": "a", "limit": null, "order": null, "points": null}),
        json!({}),
        json!({"label": "a"}),
        json!({"count": 3}),
        json!({"count": "three", "label": "a"}),
        json!({"count": null, "label": "a"}),
        json!({"count": 1.5, "label": "a"}),
        json!({"count": 3, "label": 7}),
        json!({"count": 3, "label": "a", "limit": -1}),
        json!({"count": 3, "label": "a", "limit": 5_000_000_000_u64}),
        json!({"count": 3, "label": "a", "order": "sideways"}),
        json!({"count": 3, "label": "a", "order": {"ascending": 1}}),
        json!({"count": 3, "label": "a", "points": [{"x": 1}, {"x": "two"}]}),
        json!({"count": 3, "label": "a", "points": [{"x": 1, "z": 0}]}),
        json!({"count": 3, "label": "a", "points": [{"y": 1}]}),
        json!({"count": 3, "label": "a", "points": {"x": 1}}),
        json!({"count": 3, "label": "a", "kind": "k"}),
        json!({"unknown": 1, "count": "three"}),
        json!({"count": "three", "unknown": 1}),
        json!({"label": "a", "unknown": 1}),
        json!({"count": 3, "label": "a", "type": ["k"]}),
        json!({"count": 3, "label": "a", "a key with spaces and `ticks`": true}),
    ];
    let (generated, derived) = (generated::definition(), derived::definition());
    for arguments in &cases {
        let expected = outcome(&derived, arguments).await;
        assert_eq!(
            outcome(&generated, arguments).await,
            expected,
            "for {arguments}"
        );
    }
    // The cases cover both answers, and refusals name the path inside a field.
    let outcomes: Vec<Result<Value, String>> = {
        let mut all = Vec::new();
        for arguments in &cases {
            all.push(outcome(&generated, arguments).await);
        }
        all
    };
    assert_eq!(
        outcomes[0],
        Ok(json!(r#"3 a Some(2) descending [(1, None)] Some("k")"#))
    );
    assert!(outcomes.iter().any(|outcome| {
        outcome.as_ref().is_err_and(|message| {
            message
                == "InvalidArguments: Invalid arguments for tool `t` at `points[1].x`: invalid type: string \"two\", expected i64"
        })
    }));
    assert!(outcomes.iter().any(|outcome| {
        outcome
            .as_ref()
            .is_err_and(|message| message.ends_with("at the top level: missing field `count`"))
    }));
}

#[tokio::test]
async fn a_caller_going_around_the_dispatcher_with_no_object_is_refused() {
    let tool = generated::definition();
    for arguments in [json!(null), json!([3, "a"]), json!("text")] {
        let refused = outcome(&tool, &arguments).await.unwrap_err();
        assert!(
            refused.starts_with(
                "InvalidArguments: Invalid arguments for tool `t` at the top level: expected a JSON object of arguments"
            ),
            "{refused}"
        );
    }
}
