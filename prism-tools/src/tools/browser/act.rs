//! The actions `browser_act` performs on an element: click, type, select, press, hover, scroll,
//! through real input events where a user would use the mouse or keyboard.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::element::{Element, center, pointer_target};
use super::error::{BrowserError, BrowserErrorKind};
use super::page_info::call_on;
use super::run_context::RunContext;
use super::snapshot::{clean, quote};
use crate::redact::SecretRedactor;

/// What `browser_act` does to the element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Action {
    /// Click it with the left mouse button.
    Click,
    /// Replace its text with `text` (inputs, text areas, editable elements).
    Type,
    /// Choose the option whose value or label is `text` (select elements).
    Select,
    /// Press the key `text` (`Enter`, `Tab`, `Escape`, `ArrowDown`, `a`...) with it focused.
    Press,
    /// Move the mouse over it.
    Hover,
    /// Scroll it into view; with `text` `down` or `up`, also scroll by most of a screen there.
    Scroll,
}

impl Action {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Action::Click => "click",
            Action::Type => "type",
            Action::Select => "select",
            Action::Press => "press",
            Action::Hover => "hover",
            Action::Scroll => "scroll",
        }
    }
}

/// Performs `action` on `element`; returns facts to report (the option chosen, say). Option
/// labels it quotes are cut as a snapshot cuts names, once `redactor`'s secrets are out of them.
pub(crate) async fn perform(
    run: &RunContext,
    element: &Element,
    reference: &str,
    action: Action,
    text: Option<&str>,
    redactor: &SecretRedactor,
) -> Result<Value, BrowserError> {
    match action {
        Action::Click => {
            let (x, y) = pointer_target(run, element, reference).await?;
            mouse(run, "mouseMoved", x, y).await?;
            mouse(run, "mousePressed", x, y).await?;
            mouse(run, "mouseReleased", x, y).await?;
            Ok(json!({}))
        }
        Action::Hover => {
            let (x, y) = pointer_target(run, element, reference).await?;
            mouse(run, "mouseMoved", x, y).await?;
            Ok(json!({}))
        }
        Action::Type => {
            let text = needs_text(action, text)?;
            let focused = call_on(run, &element.object_id, SELECT_CONTENT, &[]).await?;
            if focused != Value::Bool(true) {
                // The text would go to whatever had the focus before: another field.
                return Err(BrowserError::new(
                    BrowserErrorKind::Action,
                    format!(
                        "`{reference}` cannot take the focus, so it takes no typed text; \
                         type into a text field instead"
                    ),
                ));
            }
            if text.is_empty() {
                key(run, "Delete").await?;
            } else {
                run.call("Input.insertText", json!({"text": text})).await?;
            }
            Ok(json!({}))
        }
        Action::Select => {
            let wanted = needs_text(action, text)?;
            let outcome = call_on(run, &element.object_id, CHOOSE_OPTION, &[json!(wanted)]).await?;
            let label = |label: &Value| {
                let label = redactor.redact_str(label.as_str().unwrap_or_default());
                clean(&label, run.limits.snapshot_max_text)
            };
            match outcome.get("error").and_then(Value::as_str) {
                Some(error) => {
                    let mut message = format!("cannot select `{wanted}` in `{reference}`: {error}");
                    if let Some(options) = outcome.get("options").and_then(Value::as_array) {
                        let options: Vec<String> =
                            options.iter().map(|option| quote(&label(option))).collect();
                        message.push_str(&format!("; the options are {}", options.join(", ")));
                    }
                    Err(BrowserError::new(BrowserErrorKind::Action, message))
                }
                None => {
                    let selected = outcome.get("selected").map(label);
                    Ok(json!({ "selected": selected }))
                }
            }
        }
        Action::Press => {
            let name = needs_text(action, text)?;
            run.call("DOM.focus", json!({"backendNodeId": element.backend_node}))
                .await?;
            key(run, name).await?;
            Ok(json!({}))
        }
        Action::Scroll => {
            let (x, y) = center(run, element, reference).await?;
            let screen = f64::from(run.limits.viewport.1) * 0.8;
            let delta = match text.map(str::trim) {
                Some("down") => screen,
                Some("up") => -screen,
                None | Some("") => return Ok(json!({})),
                Some(other) => {
                    return Err(BrowserError::new(
                        BrowserErrorKind::Action,
                        format!("scroll takes `down`, `up` or no text, not `{other}`"),
                    ));
                }
            };
            run.call(
                "Input.dispatchMouseEvent",
                json!({"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": delta}),
            )
            .await?;
            Ok(json!({}))
        }
    }
}

fn needs_text(action: Action, text: Option<&str>) -> Result<&str, BrowserError> {
    text.ok_or_else(|| {
        BrowserError::new(
            BrowserErrorKind::Action,
            format!("the `{}` action needs `text`", action.name()),
        )
    })
}

async fn mouse(run: &RunContext, kind: &str, x: f64, y: f64) -> Result<(), BrowserError> {
    let mut event = json!({"type": kind, "x": x, "y": y});
    if kind != "mouseMoved" {
        event["button"] = json!("left");
        event["clickCount"] = json!(1);
    }
    run.call("Input.dispatchMouseEvent", event).await?;
    Ok(())
}

/// Presses and releases one key of the US layout by its name.
async fn key(run: &RunContext, name: &str) -> Result<(), BrowserError> {
    let definition = chromiumoxide::keys::get_key_definition(name).ok_or_else(|| {
        BrowserError::new(
            BrowserErrorKind::Action,
            format!(
                "`{name}` is not a key name; use names such as Enter, Tab, Escape, Backspace, \
                 ArrowDown or a single character"
            ),
        )
    })?;
    let mut down = json!({
        "type": if definition.text.is_some() { "keyDown" } else { "rawKeyDown" },
        "key": definition.key,
        "code": definition.code,
        "windowsVirtualKeyCode": definition.key_code,
    });
    if let Some(text) = definition.text {
        down["text"] = json!(text);
    }
    run.call("Input.dispatchKeyEvent", down).await?;
    run.call(
        "Input.dispatchKeyEvent",
        json!({
            "type": "keyUp",
            "key": definition.key,
            "code": definition.code,
            "windowsVirtualKeyCode": definition.key_code,
        }),
    )
    .await?;
    Ok(())
}

/// Focuses the element and selects its content, so inserted text replaces it. Answers whether
/// the focus is now on it (or inside it, or on the editable host it is part of); when it is not,
/// nothing is selected.
const SELECT_CONTENT: &str = "function() {
  this.focus();
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) {
    active = active.shadowRoot.activeElement;
  }
  const focused = !!active && (active === this || this.contains(active)
    || (this.isContentEditable && active.contains(this)));
  if (!focused) return false;
  if (typeof this.select === 'function') { this.select(); return true; }
  const range = document.createRange();
  range.selectNodeContents(this);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return true;
}";

/// Chooses the option whose value, or else whose label, is the argument, and fires the events a
/// user's choice fires. Labels come back whole, to be redacted before they are cut.
const CHOOSE_OPTION: &str = "function(wanted) {
  if (!(this instanceof HTMLSelectElement)) return { error: 'it is not a select element' };
  const options = Array.from(this.options);
  const hit = options.find(o => o.value === wanted)
    || options.find(o => o.label.trim() === String(wanted).trim());
  if (!hit) {
    return { error: 'no such option', options: options.slice(0, 30).map(o => o.label) };
  }
  this.value = hit.value;
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return { selected: hit.label };
}";
