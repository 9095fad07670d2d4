//! How a host starts Chromium for the browser tools: its own executable and flags, a fresh
//! profile directory, and the DevTools address read from the browser's own output.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::error::{BrowserError, BrowserErrorKind};

/// The flags [`ChromiumLaunch::new`] starts with: headless, no GPU, no QUIC, and none of the
/// background traffic (updates, sync, safe browsing lists...) a tool browser has no use for,
/// plus `--block-new-web-contents` and site isolation turned off, so a frame from another site
/// runs in its page's process, where the page's request checks see its requests (a frame moved
/// to a process of its own would fetch unchecked). What those checks never see (a WebSocket, a
/// tab or window the page opens, a worker's connections) goes through each run's filtering
/// proxy. WebRTC would send UDP straight from the browser, past that proxy, to any address a
/// page names (a STUN or TURN server, a peer): `--webrtc-ip-handling-policy` keeps it to
/// connections through the proxy.
pub const DEFAULT_CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-breakpad",
    "--mute-audio",
    "--hide-scrollbars",
    "--block-new-web-contents",
    "--disable-site-isolation-trials",
    "--disable-features=IsolateOrigins,site-per-process",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
];

/// What the host launches: a Chromium executable with its flags, in a fresh profile directory
/// that is deleted when the browser is dropped.
///
/// The process is killed when the last [`Browser`](super::Browser) clone is dropped. A host
/// process that dies without dropping it (a crash, `std::process::exit`) leaves Chromium
/// running; on Linux, launching through `setpriv --pdeathsig KILL -- chromium …`
/// ([`ChromiumLaunch::with_flags`]) makes the kernel kill it with its parent.
///
/// ```
/// use prism::tools::browser::ChromiumLaunch;
///
/// let launch = ChromiumLaunch::new("/usr/bin/chromium").no_sandbox().flag("--lang=en-GB");
/// assert!(launch.flags().iter().any(|flag| flag == "--no-sandbox"));
/// ```
#[derive(Clone, Debug)]
pub struct ChromiumLaunch {
    executable: PathBuf,
    flags: Vec<String>,
    startup_timeout: Duration,
    profile_parent: Option<PathBuf>,
}

impl ChromiumLaunch {
    /// `executable` with [`DEFAULT_CHROMIUM_FLAGS`] and a 30 second startup limit.
    pub fn new(executable: impl Into<PathBuf>) -> Self {
        ChromiumLaunch {
            executable: executable.into(),
            flags: DEFAULT_CHROMIUM_FLAGS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            startup_timeout: Duration::from_secs(30),
            profile_parent: None,
        }
    }

    /// `executable` with exactly `flags` (the profile directory and the DevTools port are still
    /// added). Keep the policy's flags from [`DEFAULT_CHROMIUM_FLAGS`] among them.
    pub fn with_flags(
        executable: impl Into<PathBuf>,
        flags: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        ChromiumLaunch {
            flags: flags.into_iter().map(Into::into).collect(),
            ..ChromiumLaunch::new(executable)
        }
    }

    /// Adds one flag.
    pub fn flag(mut self, flag: impl Into<String>) -> Self {
        self.flags.push(flag.into());
        self
    }

    /// Adds `--no-sandbox`, which Chromium needs when it runs as root (in most containers).
    pub fn no_sandbox(self) -> Self {
        self.flag("--no-sandbox")
    }

    /// How long the browser may take to print its DevTools address.
    pub fn startup_timeout(mut self, limit: Duration) -> Self {
        self.startup_timeout = limit;
        self
    }

    /// Creates the fresh profile directory inside `parent` instead of the system's temporary
    /// directory.
    pub fn profile_in(mut self, parent: impl Into<PathBuf>) -> Self {
        self.profile_parent = Some(parent.into());
        self
    }

    /// The executable.
    pub fn executable(&self) -> &Path {
        &self.executable
    }

    /// The flags, without the profile directory and port added at launch.
    pub fn flags(&self) -> &[String] {
        &self.flags
    }

    /// Starts the process and waits for its DevTools WebSocket address.
    pub(crate) async fn spawn(&self) -> Result<LaunchedChromium, BrowserError> {
        let mut profile = tempfile::Builder::new();
        profile.prefix("prism-chromium-");
        let profile = match &self.profile_parent {
            Some(parent) => profile.tempdir_in(parent),
            None => profile.tempdir(),
        }
        .map_err(|error| launch_error(format!("no profile directory: {error}")))?;
        let mut child = Command::new(&self.executable)
            .args(&self.flags)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("--remote-debugging-port=0")
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| {
                launch_error(format!(
                    "`{}` did not start: {error}",
                    self.executable.display()
                ))
            })?;
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| launch_error("the browser's output is not readable".into()))?;
        let mut lines = BufReader::new(stderr).lines();
        let mut seen = String::new();
        let address = tokio::time::timeout(self.startup_timeout, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(address) = line.strip_prefix("DevTools listening on ") {
                    return Some(address.trim().to_string());
                }
                if seen.len() < 2_000 {
                    seen.push_str(&line);
                    seen.push('\n');
                }
            }
            None
        })
        .await;
        let address = match address {
            Ok(Some(address)) => address,
            Ok(None) => {
                return Err(launch_error(format!(
                    "`{}` exited before it listened: {}",
                    self.executable.display(),
                    seen.trim()
                )));
            }
            Err(_) => {
                return Err(BrowserError::timeout(
                    "starting the browser",
                    self.startup_timeout,
                ));
            }
        };
        // Keep reading what the browser prints, so a full pipe never blocks it.
        let drain = tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(LaunchedChromium {
            address,
            child,
            profile,
            drain,
        })
    }
}

/// A running browser process this crate started (killed when `child` is dropped), its
/// profile directory (deleted when dropped) and the task reading its output.
#[derive(Debug)]
pub(crate) struct LaunchedChromium {
    pub(crate) address: String,
    pub(crate) child: Child,
    pub(crate) profile: tempfile::TempDir,
    pub(crate) drain: tokio::task::JoinHandle<()>,
}

fn launch_error(message: String) -> BrowserError {
    BrowserError::new(BrowserErrorKind::Launch, message)
}
