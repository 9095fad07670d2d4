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
        // Read through the page's own script objects, which the page can replace with anything:
        // only an HTTP status code is passed on.
        "status": info
            .get("status")
            .and_then(Value::as_u64)
            .filter(|status| (100..1000).contains(status)),
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

/// The script's value, or its exception as an action error. The exception's text is kept whole:
/// the page wrote it and may quote a secret, which the dispatcher takes out before it bounds
/// the message; cut here first, the end of a secret could be left where it can no longer be
/// recognised.
fn script_value(answer: Value) -> Result<Value, BrowserError> {
    if let Some(details) = answer.get("exceptionDetails") {
        let text = details
            .pointer("/exception/description")
            .or_else(|| details.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("script error");
        return Err(BrowserError::new(BrowserErrorKind::Action, text));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_exception_keeps_a_secret_whole_for_the_redactor() {
        let secret = "sk-live-0123456789abcdef0123456789";
        let padding = "x".repeat(MAX_FIELD_CHARS - 10);
        let answer = json!({"exceptionDetails": {
            "text": "Uncaught",
            "exception": {"description": format!("Error: {padding}{secret} at page.js:1")},
        }});
        let error = script_value(answer).unwrap_err();
        assert_eq!(error.kind(), BrowserErrorKind::Action);
        assert!(error.message().contains(secret), "{}", error.message());
        let redacted = SecretRedactor::new([secret])
            .redact_str(error.message())
            .into_owned();
        assert!(!redacted.contains("sk-live"), "{redacted}");
    }

    #[test]
    fn a_script_value_is_its_result() {
        let answer = json!({"result": {"type": "number", "value": 3}});
        assert_eq!(script_value(answer).unwrap(), json!(3));
        assert_eq!(script_value(json!({})).unwrap(), Value::Null);
    }
}
