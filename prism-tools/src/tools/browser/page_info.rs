//! Reading the page through script: the URL, title and HTTP status the tools report, and the
//! script calls the actions are made of.

use serde_json::{Value, json};

use super::error::{BrowserError, BrowserErrorKind};
use super::run_context::RunContext;
use crate::redact::SecretRedactor;

/// Characters of a URL or title a tool hands back.
const MAX_FIELD_CHARS: usize = 2_000;

/// The page's URL, title and the HTTP status of its document (`null` for pages not loaded over
/// HTTP, such as error pages). The URL and title are cut once `redactor`'s secrets are taken out
/// of them: a cut could leave part of a secret that the dispatcher would no longer find.
pub(crate) async fn page_info(
    run: &RunContext,
    redactor: &SecretRedactor,
) -> Result<Value, BrowserError> {
    let info = evaluate(
        run,
        "(() => { const entry = performance.getEntriesByType('navigation')[0]; \
         return { url: location.href, title: document.title, \
         status: entry && entry.responseStatus ? entry.responseStatus : null }; })()",
    )
    .await?;
    Ok(json!({
        "url": redacted_cut(info.get("url"), redactor),
        "title": redacted_cut(info.get("title"), redactor),
        "status": info.get("status").cloned().unwrap_or(Value::Null),
    }))
}

/// The value of `expression` in the page.
pub(crate) async fn evaluate(run: &RunContext, expression: &str) -> Result<Value, BrowserError> {
    let answer = run
        .call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        )
        .await?;
    script_value(answer)
}

/// Calls `function` with `this` bound to the object `object_id`, passing `arguments` as JSON.
pub(crate) async fn call_on(
    run: &RunContext,
    object_id: &str,
    function: &str,
    arguments: &[Value],
) -> Result<Value, BrowserError> {
    let arguments: Vec<Value> = arguments
        .iter()
        .map(|value| json!({"value": value}))
        .collect();
    let answer = run
        .call(
            "Runtime.callFunctionOn",
            json!({
                "objectId": object_id,
                "functionDeclaration": function,
                "arguments": arguments,
                "returnByValue": true,
            }),
        )
        .await?;
    script_value(answer)
}

fn script_value(answer: Value) -> Result<Value, BrowserError> {
    if let Some(details) = answer.get("exceptionDetails") {
        let text = details
            .pointer("/exception/description")
            .or_else(|| details.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("script error");
        return Err(BrowserError::new(BrowserErrorKind::Action, cut_str(text)));
    }
    Ok(answer
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Null))
}

fn redacted_cut(value: Option<&Value>, redactor: &SecretRedactor) -> Value {
    match value.and_then(Value::as_str) {
        Some(text) => Value::from(cut_str(&redactor.redact_str(text))),
        None => Value::Null,
    }
}

fn cut_str(text: &str) -> String {
    match text.char_indices().nth(MAX_FIELD_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}
