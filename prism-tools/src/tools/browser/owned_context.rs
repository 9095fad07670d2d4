//! [`OwnedContext`]: a browser context Chromium created for a run, owned from the moment it
//! exists, so that however the run's use of it ends (closed, dropped, or its open given up on
//! part way by a timeout or a cancelled run) Chromium disposes of it and of the pages in it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::runtime::Handle;

use super::connection::Browser;
use super::error::BrowserError;
use super::proxy::PolicyProxy;

/// A browser context in Chromium, and the proxy its connections go through. Dropped before
/// [`dispose`](Self::dispose) finished, it disposes of the context on a task of its own.
pub(crate) struct OwnedContext {
    browser: Browser,
    id: String,
    /// How long a disposal may take.
    limit: Duration,
    /// Where a drop sends the disposal: a drop may happen off the runtime's threads.
    runtime: Handle,
    disposed: AtomicBool,
    /// Stopped only once the context is gone, so nothing of it connects meanwhile.
    proxy: Option<PolicyProxy>,
}

impl OwnedContext {
    /// Creates a context with `Target.createBrowserContext`'s `params`, which name `proxy`
    /// when there is one. `limit` bounds the creation and the disposal.
    pub(crate) async fn create(
        browser: &Browser,
        params: Value,
        proxy: Option<PolicyProxy>,
        limit: Duration,
    ) -> Result<OwnedContext, BrowserError> {
        let runtime = Handle::current();
        let browser = browser.clone();
        // On a task of its own, which runs to its end even when this call is given up on: a
        // context Chromium created before its answer arrived is then still owned, and the
        // unclaimed result, dropped, disposes of it.
        let creating = runtime.clone().spawn(async move {
            let create = browser.call("Target.createBrowserContext", params);
            let created = browser
                .bounded("creating a browser context", limit, create)
                .await?;
            let id = created
                .get("browserContextId")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    BrowserError::protocol("Target.createBrowserContext", "no context id")
                })?
                .to_string();
            Ok(OwnedContext {
                browser,
                id,
                limit,
                runtime,
                disposed: AtomicBool::new(false),
                proxy,
            })
        });
        creating
            .await
            .map_err(|error| BrowserError::protocol("Target.createBrowserContext", error))?
    }

    /// The context's id (`browserContextId`).
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Disposes of the context: its pages, cookies, storage and cache are gone. A disposal
    /// that did not finish (given up on, or refused) is tried again when this is dropped.
    pub(crate) async fn dispose(&self) {
        if self.disposed.load(Ordering::Acquire) || self.browser.is_closed() {
            return;
        }
        if dispose(&self.browser, &self.id, self.limit).await.is_ok() {
            self.disposed.store(true, Ordering::Release);
        }
    }
}

impl Drop for OwnedContext {
    fn drop(&mut self) {
        if *self.disposed.get_mut() || self.browser.is_closed() {
            return;
        }
        let browser = self.browser.clone();
        let id = std::mem::take(&mut self.id);
        let limit = self.limit;
        let proxy = self.proxy.take();
        // A runtime already shut down drops the task unrun; its browser is going too.
        self.runtime.spawn(async move {
            let _ = dispose(&browser, &id, limit).await;
            drop(proxy);
        });
    }
}

async fn dispose(browser: &Browser, id: &str, limit: Duration) -> Result<Value, BrowserError> {
    let call = browser.call(
        "Target.disposeBrowserContext",
        json!({"browserContextId": id}),
    );
    browser
        .bounded("closing the browser context", limit, call)
        .await
}
