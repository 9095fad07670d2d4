//! One run's browser context: its own cookies, storage and cache, one page, the URL policy
//! watching every request of that page, and the refs of its latest snapshot.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{EventFrameNavigated, EventLoadEventFired};
use chromiumoxide::cdp::browser_protocol::target::CreateTargetParams;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use tokio_util::task::AbortOnDropHandle;

use super::cdp::{RawCommand, cdp_error};
use super::connection::Browser;
use super::dialogs::answer_dialogs;
use super::error::BrowserError;
use super::guard::guard_requests;
use super::limits::BrowserLimits;
use super::navigation::NavigationState;
use super::owned_context::OwnedContext;
use super::proxy::{PolicyProxy, ProxyRefusals};
use super::refs::RefTable;
use crate::tools::web::UrlPolicy;

/// A run's context. Tools take [`RunContext::lock`] for the whole of one action, so actions on
/// one context never interleave.
pub(crate) struct RunContext {
    pub(crate) browser: Browser,
    pub(crate) page: Page,
    pub(crate) navigation: Arc<NavigationState>,
    pub(crate) limits: BrowserLimits,
    /// What the run's proxy refused lately (none without a proxy).
    pub(crate) proxy_refusals: Option<Arc<ProxyRefusals>>,
    refs: Mutex<PageRefs>,
    tasks: Vec<AbortOnDropHandle<()>>,
    /// Declared last: dropped after the tasks serving its page have stopped.
    context: OwnedContext,
}

/// The refs and the document they belong to.
#[derive(Debug, Default)]
pub(crate) struct PageRefs {
    pub(crate) table: RefTable,
    /// The main-frame commit count the table's nodes belong to.
    pub(crate) document: u64,
}

impl RunContext {
    /// Creates a fresh browser context with one blank page, sized and guarded.
    pub(crate) async fn open(
        browser: &Browser,
        policy: UrlPolicy,
        limits: &BrowserLimits,
    ) -> Result<RunContext, BrowserError> {
        RunContext::open_with_proxy_policy(browser, policy.clone(), policy, limits).await
    }

    /// [`open`](Self::open), the proxy judging by `proxy_policy`: the same policy, except in
    /// tests that make the proxy's answer differ from the page's checks, as a name rebound
    /// between the two would.
    pub(crate) async fn open_with_proxy_policy(
        browser: &Browser,
        policy: UrlPolicy,
        proxy_policy: UrlPolicy,
        limits: &BrowserLimits,
    ) -> Result<RunContext, BrowserError> {
        let mut params = json!({"disposeOnDetach": true});
        // A browser elsewhere could not reach a proxy on this machine's loopback. Every
        // connection of the context goes through it; it stops with the context.
        let proxy = if browser.is_on_this_machine() {
            let proxy = PolicyProxy::start(proxy_policy).await?;
            params["proxyServer"] = json!(proxy.server());
            // Loopback too, which Chromium would otherwise reach directly.
            params["proxyBypassList"] = json!("<-loopback>");
            Some(proxy)
        } else {
            None
        };
        let proxy_refusals = proxy.as_ref().map(PolicyProxy::refusals);
        // Owned from here on: given up on at any later await, the context is still disposed of.
        let context = OwnedContext::create(browser, params, proxy, limits.action_timeout).await?;
        match RunContext::open_page(browser, context.id(), policy, limits).await {
            Ok((page, navigation, tasks)) => Ok(RunContext {
                browser: browser.clone(),
                page,
                navigation,
                limits: limits.clone(),
                proxy_refusals,
                refs: Mutex::new(PageRefs::default()),
                tasks,
                context,
            }),
            Err(error) => {
                context.dispose().await;
                Err(error)
            }
        }
    }

    async fn open_page(
        browser: &Browser,
        context_id: &str,
        policy: UrlPolicy,
        limits: &BrowserLimits,
    ) -> Result<(Page, Arc<NavigationState>, Vec<AbortOnDropHandle<()>>), BrowserError> {
        let params = CreateTargetParams::builder()
            .url("about:blank")
            .browser_context_id(context_id.to_string())
            .build()
            .map_err(|error| BrowserError::protocol("Target.createTarget", error))?;
        let page = browser
            .cdp()
            .new_page(params)
            .await
            .map_err(|error| cdp_error("Target.createTarget", error))?;
        let (width, height) = limits.viewport;
        call(
            &page,
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await?;
        let tree = call(&page, "Page.getFrameTree", json!({})).await?;
        let main_frame = tree
            .pointer("/frameTree/frame/id")
            .and_then(Value::as_str)
            .ok_or_else(|| BrowserError::protocol("Page.getFrameTree", "no main frame"))?
            .to_string();
        let navigation = Arc::new(NavigationState::new());
        let dialogs = answer_dialogs(&page).await?;
        let lifecycle = watch_lifecycle(&page, main_frame.clone(), navigation.clone()).await?;
        let guard = guard_requests(&page, policy, main_frame, navigation.clone()).await?;
        Ok((page, navigation, vec![dialogs, lifecycle, guard]))
    }

    /// The refs, held for the length of one action.
    pub(crate) async fn lock(&self) -> tokio::sync::MutexGuard<'_, PageRefs> {
        self.refs.lock().await
    }

    /// One protocol call on the page.
    pub(crate) async fn call(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<Value, BrowserError> {
        if self.browser.is_closed() {
            return Err(BrowserError::closed());
        }
        call(&self.page, method, params).await
    }

    /// `work`, bounded by `limit` and by the browser's life.
    pub(crate) async fn bounded<T>(
        &self,
        what: &str,
        limit: Duration,
        work: impl Future<Output = Result<T, BrowserError>>,
    ) -> Result<T, BrowserError> {
        self.browser.bounded(what, limit, work).await
    }

    /// Closes the context: its page, cookies, storage and cache are gone.
    pub(crate) async fn close(&self) {
        for task in &self.tasks {
            task.abort();
        }
        self.context.dispose().await;
    }
}

pub(crate) async fn call(
    page: &Page,
    method: &'static str,
    params: Value,
) -> Result<Value, BrowserError> {
    page.execute(RawCommand::new(method, params))
        .await
        .map(|response| response.result)
        .map_err(|error| cdp_error(method, error))
}

/// Counts the main frame's commits and load events.
async fn watch_lifecycle(
    page: &Page,
    main_frame: String,
    navigation: Arc<NavigationState>,
) -> Result<AbortOnDropHandle<()>, BrowserError> {
    let mut navigated = page
        .event_listener::<EventFrameNavigated>()
        .await
        .map_err(|error| cdp_error("Page.frameNavigated", error))?;
    let mut loaded = page
        .event_listener::<EventLoadEventFired>()
        .await
        .map_err(|error| cdp_error("Page.loadEventFired", error))?;
    Ok(AbortOnDropHandle::new(tokio::spawn(async move {
        loop {
            tokio::select! {
                event = navigated.next() => match event {
                    Some(event) if event.frame.id.as_ref() == main_frame.as_str() => {
                        navigation.record(|counts| counts.committed += 1);
                    }
                    Some(_) => {}
                    None => break,
                },
                event = loaded.next() => match event {
                    Some(_) => navigation.record(|counts| counts.loaded += 1),
                    None => break,
                },
            }
        }
    })))
}
