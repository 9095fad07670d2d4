//! JavaScript dialogs (`alert`, `confirm`, `prompt`, `beforeunload`). Nobody is there to answer
//! them, and an open one stalls the page's script and every call waiting on it, so each is
//! answered the moment it opens: questions are answered no, and leaving the page is allowed.

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{DialogType, EventJavascriptDialogOpening};
use futures_util::StreamExt;
use serde_json::json;

use tokio_util::task::AbortOnDropHandle;

use super::cdp::{RawCommand, cdp_error};
use super::error::BrowserError;

/// Starts answering `page`'s dialogs. Returns the task doing it (drop it to stop).
pub(crate) async fn answer_dialogs(page: &Page) -> Result<AbortOnDropHandle<()>, BrowserError> {
    let mut opening = page
        .event_listener::<EventJavascriptDialogOpening>()
        .await
        .map_err(|error| cdp_error("Page.javascriptDialogOpening", error))?;
    let page = page.clone();
    Ok(AbortOnDropHandle::new(tokio::spawn(async move {
        while let Some(dialog) = opening.next().await {
            // A navigation the tools asked for goes ahead; anything else is declined, as a
            // user who does not know the page would.
            let accept = dialog.r#type == DialogType::Beforeunload;
            let answer = RawCommand::new("Page.handleJavaScriptDialog", json!({"accept": accept}));
            // A page closed meanwhile has no dialog left to answer.
            let _ = page.execute(answer).await;
        }
    })))
}
