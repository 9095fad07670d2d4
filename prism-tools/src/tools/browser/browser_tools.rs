//! [`BrowserTools`]: the browser, the URL policy and the limits the four tools share, and the
//! browser context each run owns.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use super::connection::Browser;
use super::error::{BrowserError, BrowserErrorKind};
use super::limits::BrowserLimits;
use super::run_context::RunContext;
use crate::context::ToolExecutionContext;
use crate::run::{RunEvent, RunEventKind, RunEventSink};
use crate::tools::web::UrlPolicy;

/// What the browser tools share: a host-supplied [`Browser`], the [`UrlPolicy`] every request of
/// every page obeys, the [`BrowserLimits`], and one browser context per run. Cheap to clone.
///
/// A run's context (its cookies, storage and cache, and its one page) is created by the run's
/// first browser call and closed by [`close_run`](Self::close_run). Given to the agent as a run
/// event sink ([`Agent::with_events`](crate::run::Agent::with_events)), it closes each run's
/// context when the run finishes, fails or is cancelled. A host that drops a run's future
/// without letting it end calls `close_run` itself.
///
/// ```no_run
/// # async fn demo() -> Result<(), prism::tools::browser::BrowserError> {
/// use prism::ToolRegistry;
/// use prism::tools::browser::{Browser, BrowserLimits, BrowserTools, ChromiumLaunch};
/// use prism::tools::web::UrlPolicy;
///
/// let browser = Browser::launch(&ChromiumLaunch::new("/usr/bin/chromium")).await?;
/// let tools = BrowserTools::new(browser, UrlPolicy::new(), BrowserLimits::default());
/// let registry = ToolRegistry::from_iter(tools.definitions());
/// # let _ = registry;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct BrowserTools {
    inner: Arc<ToolsInner>,
}

struct ToolsInner {
    browser: Browser,
    policy: UrlPolicy,
    limits: BrowserLimits,
    runs: Mutex<HashMap<Arc<str>, RunSlot>>,
}

/// A run's context, or the place it is being created in (concurrent first calls share it).
type RunSlot = Arc<OnceCell<Arc<RunContext>>>;

impl BrowserTools {
    /// Tools over `browser`, under `policy` and `limits`.
    pub fn new(browser: Browser, policy: UrlPolicy, limits: BrowserLimits) -> Self {
        BrowserTools {
            inner: Arc::new(ToolsInner {
                browser,
                policy,
                limits,
                runs: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The browser.
    pub fn browser(&self) -> &Browser {
        &self.inner.browser
    }

    /// The URL policy.
    pub fn policy(&self) -> &UrlPolicy {
        &self.inner.policy
    }

    /// The limits.
    pub fn limits(&self) -> &BrowserLimits {
        &self.inner.limits
    }

    /// How many runs have a browser context open.
    pub fn open_contexts(&self) -> usize {
        self.inner.runs.lock().map(|runs| runs.len()).unwrap_or(0)
    }

    /// Closes `run_id`'s browser context, if it has one: its page, cookies, storage and cache
    /// are gone. Returns whether there was one.
    pub async fn close_run(&self, run_id: &str) -> bool {
        let cell = match self.inner.runs.lock() {
            Ok(mut runs) => runs.remove(run_id),
            Err(_) => None,
        };
        let Some(cell) = cell else {
            return false;
        };
        if let Some(context) = cell.get() {
            context.close().await;
        }
        true
    }

    /// The calling run's context, created on its first use.
    pub(crate) async fn context_for(
        &self,
        ctx: &ToolExecutionContext,
    ) -> Result<Arc<RunContext>, BrowserError> {
        let run_id = ctx.run_id().ok_or_else(|| {
            BrowserError::new(
                BrowserErrorKind::NoRun,
                "browser tools keep one browser context per run, and this call has no run id",
            )
        })?;
        let opening = {
            let mut runs =
                self.inner.runs.lock().map_err(|_| {
                    BrowserError::protocol("browser contexts", "a lock was poisoned")
                })?;
            if !runs.contains_key(run_id) && runs.len() >= self.inner.limits.max_contexts {
                return Err(BrowserError::new(
                    BrowserErrorKind::TooManyContexts,
                    format!(
                        "{} browser contexts are open, the host's limit; try again when a run ends",
                        runs.len()
                    ),
                ));
            }
            Opening {
                runs: &self.inner.runs,
                run_id,
                cell: runs.entry(Arc::from(run_id)).or_default().clone(),
            }
        };
        let limits = &self.inner.limits;
        let context = opening
            .cell
            .get_or_try_init(|| async {
                let open = RunContext::open(&self.inner.browser, self.inner.policy.clone(), limits);
                self.inner
                    .browser
                    .bounded("opening a browser context", limits.action_timeout, open)
                    .await
                    .map(Arc::new)
            })
            .await;
        context.cloned()
    }
}

/// A call waiting for its run's context. Dropped while the context is not open (its open
/// failed, or the call was given up on) and no other call waits for it, it gives up the run's
/// place: a context that could not be opened holds no place under the limit.
struct Opening<'a> {
    runs: &'a Mutex<HashMap<Arc<str>, RunSlot>>,
    run_id: &'a str,
    cell: RunSlot,
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        if self.cell.get().is_some() {
            return;
        }
        if let Ok(mut runs) = self.runs.lock()
            // Held by the map and this call alone: no other call waits to take the open over.
            && runs.get(self.run_id).is_some_and(|slot| {
                Arc::ptr_eq(slot, &self.cell) && Arc::strong_count(slot) == 2
            })
        {
            runs.remove(self.run_id);
        }
    }
}

impl RunEventSink for BrowserTools {
    fn emit(&self, event: &RunEvent) {
        if matches!(
            event.kind,
            RunEventKind::RunFinished { .. } | RunEventKind::RunFailed { .. }
        ) {
            let tools = self.clone();
            let run_id = event.run_id.clone();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    tools.close_run(&run_id).await;
                });
            }
        }
    }
}

impl fmt::Debug for BrowserTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrowserTools")
            .field("browser", &self.inner.browser)
            .field("open_contexts", &self.open_contexts())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};

    use super::*;
    use crate::tools::browser::test_chromium::own_browser;

    /// The browser contexts Chromium holds, besides its default one.
    async fn contexts_in(browser: &Browser) -> Vec<Value> {
        let answer = browser
            .call("Target.getBrowserContexts", json!({}))
            .await
            .expect("Chromium lists its contexts");
        answer["browserContextIds"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The contexts still there once disposals under way have had a minute to finish.
    async fn contexts_left(browser: &Browser) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = contexts_in(browser).await;
            if left.is_empty() || Instant::now() > deadline {
                return left;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A run's first call given up on part way (its timeout, its run cancelled), at points
    /// spread over the whole open: once the run ends, Chromium holds none of the contexts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_open_given_up_part_way_leaves_no_browser_context() {
        let Some(browser) = own_browser().await else {
            return;
        };
        let limits = BrowserLimits {
            action_timeout: Duration::from_secs(60),
            ..BrowserLimits::default()
        };
        let tools = BrowserTools::new(browser.clone(), UrlPolicy::new(), limits);
        let ctx = ToolExecutionContext::new().with_run_id("cut");
        let mut given_up = 0;
        // Each wait a tenth longer than the last, until the open completes.
        let mut wait = Duration::from_micros(200);
        loop {
            match tokio::time::timeout(wait, tools.context_for(&ctx)).await {
                Ok(opened) => {
                    opened.expect("the open succeeds");
                    break;
                }
                Err(_) => given_up += 1,
            }
            tools.close_run("cut").await;
            wait = wait.mul_f64(1.1);
            assert!(wait < Duration::from_secs(120), "the open never completes");
        }
        assert!(given_up > 0);
        assert!(tools.close_run("cut").await);
        let left = contexts_left(&browser).await;
        assert!(
            left.is_empty(),
            "{} of {given_up} opens given up on left their context",
            left.len()
        );
    }

    /// A run whose first call was given up on holds no place under the limit: with room for
    /// one context, another run still gets one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_open_given_up_on_holds_no_place_under_the_limit() {
        let Some(browser) = own_browser().await else {
            return;
        };
        let limits = BrowserLimits {
            action_timeout: Duration::from_secs(60),
            max_contexts: 1,
            ..BrowserLimits::default()
        };
        let tools = BrowserTools::new(browser.clone(), UrlPolicy::new(), limits);
        let given_up = ToolExecutionContext::new().with_run_id("given-up");
        let opening = tools.context_for(&given_up);
        assert!(tokio::time::timeout(Duration::ZERO, opening).await.is_err());
        assert_eq!(tools.open_contexts(), 0);
        let other = ToolExecutionContext::new().with_run_id("other");
        tools.context_for(&other).await.expect("a place is free");
        assert_eq!(tools.open_contexts(), 1);
        assert!(tools.close_run("other").await);
        assert!(contexts_left(&browser).await.is_empty());
    }
}
