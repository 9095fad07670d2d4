//! The Chromium the library's browser tests drive: found on this machine, or the test skips
//! loudly (and fails under `PRISM_REQUIRE_BROWSER=1`).

use std::path::PathBuf;
use std::time::Duration;

use super::connection::Browser;
use super::launch::ChromiumLaunch;

/// Chromium at `PRISM_CHROMIUM` or `/usr/bin/chromium`; without it the test skips, unless
/// `PRISM_REQUIRE_BROWSER=1`.
pub(crate) fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PRISM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.exists() {
        return Some(path);
    }
    assert_ne!(
        std::env::var("PRISM_REQUIRE_BROWSER").as_deref(),
        Ok("1"),
        "PRISM_REQUIRE_BROWSER=1 but no Chromium at {}",
        path.display()
    );
    println!("SKIPPED: no Chromium at {}", path.display());
    None
}

/// A browser of the test's own (so what it holds is the test's alone), or `None` to skip.
pub(crate) async fn own_browser() -> Option<Browser> {
    let launch = ChromiumLaunch::new(chromium()?)
        .no_sandbox()
        .startup_timeout(Duration::from_secs(120));
    Some(Browser::launch(&launch).await.expect("Chromium starts"))
}
