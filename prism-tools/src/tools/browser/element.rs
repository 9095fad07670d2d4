//! From a ref to a live element: the checks that make a stale ref an error instead of an action
//! on the wrong element, and the element's place on screen.

use serde_json::{Value, json};

use super::error::{BrowserError, BrowserErrorKind};
use super::page_info::call_on;
use super::refs::stale;
use super::run_context::{PageRefs, RunContext};

/// An element of the page that a ref of the latest snapshot names and that is still attached.
#[derive(Debug)]
pub(crate) struct Element {
    pub(crate) backend_node: i64,
    pub(crate) object_id: String,
}

/// The element `reference` names, or a stale-ref error when the page changed since the
/// snapshot (a new document, or the element removed), or an unknown-ref error.
pub(crate) async fn resolve(
    run: &RunContext,
    refs: &PageRefs,
    reference: &str,
) -> Result<Element, BrowserError> {
    let backend_node = refs.table.resolve(reference)?;
    if run.navigation.counts().committed != refs.document {
        return Err(stale(reference));
    }
    let resolved = run
        .call("DOM.resolveNode", json!({"backendNodeId": backend_node}))
        .await
        .map_err(|error| match error.kind() {
            BrowserErrorKind::Protocol => stale(reference),
            _ => error,
        })?;
    let object_id = resolved
        .pointer("/object/objectId")
        .and_then(Value::as_str)
        .ok_or_else(|| stale(reference))?
        .to_string();
    let element = Element {
        backend_node,
        object_id,
    };
    let attached = call_on(
        run,
        &element.object_id,
        "function() { return this.isConnected; }",
        &[],
    )
    .await?;
    if attached != Value::Bool(true) {
        return Err(stale(reference));
    }
    Ok(element)
}

/// The element scrolled into view, and the centre of its first box in viewport pixels.
pub(crate) async fn center(
    run: &RunContext,
    element: &Element,
    reference: &str,
) -> Result<(f64, f64), BrowserError> {
    let _ = run
        .call(
            "DOM.scrollIntoViewIfNeeded",
            json!({"backendNodeId": element.backend_node}),
        )
        .await;
    let quads = run
        .call(
            "DOM.getContentQuads",
            json!({"backendNodeId": element.backend_node}),
        )
        .await
        .ok()
        .and_then(|answer| answer.get("quads").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    let quad: Vec<f64> = quads
        .first()
        .and_then(Value::as_array)
        .map(|points| points.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    if quad.len() != 8 {
        return Err(BrowserError::new(
            BrowserErrorKind::Action,
            format!("`{reference}` has no visible box to act on (hidden, or outside the page)"),
        ));
    }
    let x = (quad[0] + quad[2] + quad[4] + quad[6]) / 4.0;
    let y = (quad[1] + quad[3] + quad[5] + quad[7]) / 4.0;
    Ok((x, y))
}

/// [`center`], once it is known that a pointer there reaches the element: mouse events go to
/// whatever is on top at that point, and an overlay, a banner or a point outside the viewport
/// would otherwise take a click meant for the element.
pub(crate) async fn pointer_target(
    run: &RunContext,
    element: &Element,
    reference: &str,
) -> Result<(f64, f64), BrowserError> {
    let (x, y) = center(run, element, reference).await?;
    let covered = call_on(run, &element.object_id, HIT_TEST, &[json!(x), json!(y)]).await?;
    match covered.as_str() {
        None => Ok((x, y)),
        Some(cover) => Err(BrowserError::new(
            BrowserErrorKind::Action,
            format!(
                "`{reference}` is covered by {cover} at its centre, which would get the \
                 pointer instead; close or scroll away what covers it, then try again"
            ),
        )),
    }
}

/// `null` when the topmost element at (x, y) is the element, inside it (through open shadow
/// roots too) or a label of it; otherwise a short description of what is on top.
const HIT_TEST: &str = "function(x, y) {
  let hit = document.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  for (let node = hit; node; node = node.parentNode || node.host) {
    if (node === this) return null;
  }
  if (hit && hit.control === this) return null;
  return hit ? 'another element (' + hit.localName + ')' : 'nothing (it is outside the viewport)';
}";
