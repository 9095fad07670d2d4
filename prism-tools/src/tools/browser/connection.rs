//! [`Browser`]: the host-supplied Chromium the tools drive, launched by the host or reached at
//! its DevTools address, and the one place that knows whether it is still there.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::handler::HandlerConfig;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::cdp::{RawCommand, cdp_error};
use super::error::{BrowserError, BrowserErrorKind};
use super::launch::ChromiumLaunch;

/// A Chromium the browser tools drive over the DevTools protocol. Cheap to clone; the process
/// (when this crate launched it) is killed when the last clone is dropped.
///
/// Nothing here downloads a browser: the host names an executable ([`Browser::launch`]) or
/// hands over one it runs itself ([`Browser::connect`]).
#[derive(Clone)]
pub struct Browser {
    inner: Arc<BrowserInner>,
}

struct BrowserInner {
    cdp: chromiumoxide::Browser,
    address: String,
    process_id: Option<u32>,
    gone: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    _profile: Option<tempfile::TempDir>,
}

impl Drop for BrowserInner {
    fn drop(&mut self) {
        // Aborting the process watcher drops the child, which kills it (kill_on_drop).
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Browser {
    /// Starts `launch`'s executable with its flags and connects to it.
    pub async fn launch(launch: &ChromiumLaunch) -> Result<Browser, BrowserError> {
        let launched = launch.spawn().await?;
        let mut child = launched.child;
        let process_id = child.id();
        let gone = CancellationToken::new();
        let watch_gone = gone.clone();
        let drain = launched.drain;
        let watcher = tokio::spawn(async move {
            let _ = child.wait().await;
            drain.abort();
            watch_gone.cancel();
        });
        let mut inner = match Browser::attach(&launched.address, gone).await {
            Ok(inner) => inner,
            Err(error) => {
                watcher.abort();
                return Err(error);
            }
        };
        inner.tasks.push(watcher);
        inner.process_id = process_id;
        inner._profile = Some(launched.profile);
        Ok(Browser {
            inner: Arc::new(inner),
        })
    }

    /// Connects to a browser the host runs itself, at its DevTools WebSocket address
    /// (`ws://127.0.0.1:9222/devtools/browser/…`, printed by Chromium at startup and served at
    /// `/json/version`). Start that browser with the URL policy's flags from
    /// [`DEFAULT_CHROMIUM_FLAGS`](super::DEFAULT_CHROMIUM_FLAGS) (no site isolation): without
    /// them, frames from other sites fetch unchecked. A browser on this machine (a loopback
    /// address) gets each run's filtering proxy, as a launched one does; a browser elsewhere
    /// cannot reach that proxy, so there only the page's own requests are checked, and its
    /// WebSockets, the windows it opens and its workers connect unchecked.
    pub async fn connect(address: &str) -> Result<Browser, BrowserError> {
        if !(address.starts_with("ws://") || address.starts_with("wss://")) {
            return Err(BrowserError::new(
                BrowserErrorKind::Launch,
                format!(
                    "`{address}` is not a DevTools WebSocket address (ws://…); \
                     read `webSocketDebuggerUrl` from the browser's /json/version"
                ),
            ));
        }
        let inner = Browser::attach(address, CancellationToken::new()).await?;
        Ok(Browser {
            inner: Arc::new(inner),
        })
    }

    async fn attach(address: &str, gone: CancellationToken) -> Result<BrowserInner, BrowserError> {
        let config = HandlerConfig {
            // The tools bound every call themselves; this is only a backstop.
            request_timeout: Duration::from_secs(600),
            viewport: None,
            ..HandlerConfig::default()
        };
        let (cdp, mut handler) = chromiumoxide::Browser::connect_with_config(address, config)
            .await
            .map_err(|error| {
                BrowserError::new(
                    BrowserErrorKind::Launch,
                    format!("no DevTools connection at `{address}`: {error}"),
                )
            })?;
        let driver_gone = gone.clone();
        let driver = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(chromiumoxide::error::CdpError::Ws(_)) = event {
                    break;
                }
            }
            driver_gone.cancel();
        });
        Ok(BrowserInner {
            cdp,
            address: address.to_string(),
            process_id: None,
            gone,
            tasks: vec![driver],
            _profile: None,
        })
    }

    /// The DevTools WebSocket address.
    pub fn devtools_address(&self) -> &str {
        &self.inner.address
    }

    /// Whether the browser runs on this machine (its DevTools address is a loopback one), and so
    /// can reach a proxy listening on loopback.
    pub(crate) fn is_on_this_machine(&self) -> bool {
        is_on_this_machine(&self.inner.address)
    }

    /// The browser process's id, when this crate launched it.
    pub fn process_id(&self) -> Option<u32> {
        self.inner.process_id
    }

    /// Whether the browser is known to be gone (its process exited or its connection dropped).
    pub fn is_closed(&self) -> bool {
        self.inner.gone.is_cancelled()
    }

    pub(crate) fn cdp(&self) -> &chromiumoxide::Browser {
        &self.inner.cdp
    }

    /// `work`'s result, a timeout error after `limit`, or a closed-browser error as soon as the
    /// browser is known to be gone: a dead browser never leaves a call hanging.
    pub(crate) async fn bounded<T>(
        &self,
        what: &str,
        limit: Duration,
        work: impl Future<Output = Result<T, BrowserError>>,
    ) -> Result<T, BrowserError> {
        if self.is_closed() {
            return Err(BrowserError::closed());
        }
        tokio::select! {
            biased;
            () = self.inner.gone.cancelled() => Err(BrowserError::closed()),
            result = tokio::time::timeout(limit, work) => match result {
                Ok(Err(_)) | Err(_) if self.is_closed() => Err(BrowserError::closed()),
                Ok(result) => result,
                Err(_) => Err(BrowserError::timeout(what, limit)),
            },
        }
    }

    /// One browser-level protocol call.
    pub(crate) async fn call(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<Value, BrowserError> {
        if self.is_closed() {
            return Err(BrowserError::closed());
        }
        self.inner
            .cdp
            .execute(RawCommand::new(method, params))
            .await
            .map(|response| response.result)
            .map_err(|error| cdp_error(method, error))
    }
}

impl fmt::Debug for Browser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Browser")
            .field("address", &self.inner.address)
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// Whether the DevTools address `address` names this machine. Read wrongly, a browser here
/// would get no proxy and its connections would go unchecked, so every spelling counts: a
/// trailing dot, a `.localhost` name, the unspecified address (a browser started with
/// `--remote-debugging-address=0.0.0.0` prints `ws://0.0.0.0:…`, which reaches this machine), an
/// IPv4 address written as IPv6.
fn is_on_this_machine(address: &str) -> bool {
    let local_v4 = |ip: std::net::Ipv4Addr| ip.is_loopback() || ip.is_unspecified();
    match url::Url::parse(address) {
        Ok(address) => match address.host() {
            Some(url::Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                name == "localhost" || name.ends_with(".localhost")
            }
            Some(url::Host::Ipv4(ip)) => local_v4(ip),
            Some(url::Host::Ipv6(ip)) => {
                ip.is_loopback() || ip.is_unspecified() || ip.to_ipv4_mapped().is_some_and(local_v4)
            }
            None => false,
        },
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_of_writing_this_machine_is_on_this_machine() {
        for address in [
            "ws://127.0.0.1:9222/devtools/browser/x",
            "ws://127.1:9222/devtools/browser/x",
            "ws://[::1]:9222/devtools/browser/x",
            "ws://localhost:9222/devtools/browser/x",
            // Each of these reaches a browser listening on this machine's loopback.
            "ws://LOCALHOST.:9222/devtools/browser/x",
            "ws://devtools.localhost:9222/devtools/browser/x",
            "ws://0.0.0.0:9222/devtools/browser/x",
            "ws://[::]:9222/devtools/browser/x",
            "ws://[::ffff:127.0.0.1]:9222/devtools/browser/x",
        ] {
            assert!(is_on_this_machine(address), "{address}");
        }
        for address in [
            "ws://192.0.2.10:9222/devtools/browser/x",
            "ws://browser.example:9222/devtools/browser/x",
            "ws://notlocalhost:9222/devtools/browser/x",
        ] {
            assert!(!is_on_this_machine(address), "{address}");
        }
    }
}
