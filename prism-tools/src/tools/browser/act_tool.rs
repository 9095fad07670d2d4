//! `browser_act`: one action on an element named by a ref of the latest snapshot.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::act::{Action, perform};
use super::browser_tools::BrowserTools;
use super::element::resolve;
use super::error::BrowserError;
use super::navigation::Settled;
use super::page_info::page_info;
use super::run_context::RunContext;
use super::tool_base::{browser_tool, run_call};
use crate::definition::ToolDefinition;
use crate::redact::SecretRedactor;
use crate::tools::web::tool_base::decode_args;

/// Arguments of `browser_act`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ActArgs {
    /// The element's ref from the latest browser_snapshot, such as `e12`.
    #[serde(rename = "ref")]
    reference: String,
    /// What to do: `click`, `type`, `select`, `press`, `hover` or `scroll`.
    action: Action,
    /// The text to type, the option to select (value or label), the key to press (`Enter`,
    /// `Tab`, `a`...), or `down`/`up` for scroll.
    #[serde(default)]
    text: Option<String>,
}

/// The `browser_act` tool: clicks, types into, selects in, presses a key on, hovers or scrolls
/// an element named by a ref of the latest snapshot. A ref from an earlier snapshot, or whose
/// element left the page, is a `stale_ref` error asking for a new snapshot. When the action
/// starts a navigation, the tool waits for the new page (or the URL policy's refusal) and says
/// so.
pub fn browser_act(tools: BrowserTools) -> ToolDefinition {
    browser_tool::<ActArgs>(
        "browser_act",
        "Acts on an element of the page by its ref from the latest browser_snapshot: click, \
         type (replaces the field's text), select (an option's value or label), press (a key \
         such as Enter), hover, or scroll. Take a new snapshot afterwards to see the result.",
        false,
    )
    .run(move |arguments, ctx| {
        let tools = tools.clone();
        async move {
            let args: ActArgs = decode_args(arguments)?;
            run_call(&ctx, async {
                let run = tools.context_for(&ctx).await?;
                let limit = run.limits.action_timeout + run.limits.navigation_timeout;
                run.bounded("the action", limit, act(&run, &args, ctx.redactor()))
                    .await
            })
            .await
        }
    })
}

async fn act(
    run: &RunContext,
    args: &ActArgs,
    redactor: &SecretRedactor,
) -> Result<Value, BrowserError> {
    let refs = run.lock().await;
    let element = resolve(run, &refs, &args.reference).await?;
    let before = run.navigation.counts();
    let limits = &run.limits;
    let facts = run
        .bounded(
            "the action",
            limits.action_timeout,
            perform(
                run,
                &element,
                &args.reference,
                args.action,
                args.text.as_deref(),
                redactor,
            ),
        )
        .await?;
    // Clicks, keys and choices can start a navigation a moment later; typing, hovering and
    // scrolling only count if one has already started.
    let window = match args.action {
        Action::Click | Action::Press | Action::Select => limits.settle_window,
        Action::Type | Action::Hover | Action::Scroll => Duration::ZERO,
    };
    let settled = run
        .navigation
        .settle(before, window, limits.navigation_timeout)
        .await;
    let mut value = page_info(run, redactor).await?;
    value["action"] = Value::from(args.action.name());
    value["ref"] = Value::from(args.reference.as_str());
    if let Value::Object(facts) = facts {
        for (key, fact) in facts {
            value[key] = fact;
        }
    }
    match settled {
        Settled::Quiet => value["navigated"] = Value::Bool(false),
        Settled::Loaded => value["navigated"] = Value::Bool(true),
        Settled::StillLoading => {
            value["navigated"] = Value::Bool(true);
            value["loading"] = Value::Bool(true);
        }
        Settled::Refused(refusal) => {
            value["navigated"] = Value::Bool(false);
            value["navigation_refused"] = Value::from(refusal.message(redactor));
        }
    }
    Ok(value)
}
