//! The URL policy inside the browser: every request a page makes (its documents, each redirect
//! hop, navigations the page starts itself, frames, scripts, images, fetches) is paused before
//! it leaves, checked against the [`UrlPolicy`], and then continued or failed.
//!
//! The address check resolves the name itself ([`UrlPolicy::resolve`]). Chromium does not
//! resolve it again: it hands the name to the run's proxy ([`proxy`](super::proxy)), which
//! checks it once more and connects to the very address it checked, so a DNS answer that changes
//! in between (rebinding) is not followed. The proxy also judges what these checks never see:
//! WebSockets, windows the page opens, workers.

use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use chromiumoxide::cdp::browser_protocol::network::ResourceType;
use futures_util::StreamExt;
use serde_json::json;
use url::{Host, Url};

use tokio_util::task::AbortOnDropHandle;

use super::cdp::{RawCommand, cdp_error};
use super::error::BrowserError;
use super::navigation::NavigationState;
use crate::tools::web::UrlPolicy;

/// Starts checking every request of `page` against `policy`; main-frame document requests and
/// refusals are counted in `navigation`. Returns the task doing it (drop it to stop).
pub(crate) async fn guard_requests(
    page: &Page,
    policy: UrlPolicy,
    main_frame: String,
    navigation: Arc<NavigationState>,
) -> Result<AbortOnDropHandle<()>, BrowserError> {
    let mut paused = page
        .event_listener::<EventRequestPaused>()
        .await
        .map_err(|error| cdp_error("Fetch.requestPaused", error))?;
    let listener_page = page.clone();
    let task = AbortOnDropHandle::new(tokio::spawn(async move {
        while let Some(event) = paused.next().await {
            let page = listener_page.clone();
            let policy = policy.clone();
            let navigation = navigation.clone();
            let main_frame = main_frame.clone();
            // Each request is judged on its own task: a slow DNS answer holds up only its own.
            tokio::spawn(async move {
                let is_main_document = event.resource_type == ResourceType::Document
                    && event.frame_id.as_ref() == main_frame;
                if is_main_document && event.redirected_request_id.is_none() {
                    navigation.record(|counts| counts.requested += 1);
                }
                let id = event.request_id.inner().clone();
                let verdict = check(&policy, &event.request.url).await;
                let command = match verdict {
                    Ok(()) => {
                        if is_main_document {
                            // Where the run's proxy may still refuse it (see `navigate_page`).
                            navigation.record_document(event.request.url.clone());
                        }
                        RawCommand::new("Fetch.continueRequest", json!({"requestId": id}))
                    }
                    Err(error) => {
                        if is_main_document {
                            // Quoted (and cut) by the tool that waits for the navigation, which
                            // knows the secrets to take out of it first.
                            navigation.record_refusal(
                                event.request.url.clone(),
                                error.message().to_owned(),
                            );
                        }
                        // A navigation the page started is aborted, which leaves the page in
                        // place. One `browser_navigate` asked for is blocked instead: Chromium
                        // answers `Page.navigate` for a blocked navigation (with its error page),
                        // but not always for an aborted one.
                        let reason = if is_main_document && !navigation.is_by_tool() {
                            "Aborted"
                        } else {
                            "BlockedByClient"
                        };
                        RawCommand::new(
                            "Fetch.failRequest",
                            json!({"requestId": id, "errorReason": reason}),
                        )
                    }
                };
                // A page closed meanwhile has nothing left to continue.
                let _ = page.execute(command).await;
            });
        }
    }));
    page.execute(RawCommand::new(
        "Fetch.enable",
        json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}),
    ))
    .await
    .map_err(|error| cdp_error("Fetch.enable", error))?;
    Ok(task)
}

/// The policy's verdict on `url`: the URL itself, then every address its host resolves to.
pub(crate) async fn check(policy: &UrlPolicy, url: &str) -> Result<(), BrowserError> {
    let parsed: Url = policy.check_url(url)?;
    if let Some(Host::Domain(domain)) = parsed.host() {
        policy.resolve(domain).await?;
    }
    Ok(())
}
