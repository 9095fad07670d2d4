//! A browser killed in the middle of an action: the call ends with `browser_closed` (not a
//! timeout, not a hang), and every later call says the same at once. Its own test binary, so
//! the browser it kills is its own.

mod browser_support;
mod web_support;

use std::time::Duration;

use browser_support::{Harness, chromium, launch, test_limits};
use prism::tools::browser::{Browser, BrowserLimits};
use prism::tools::web::UrlPolicy;
use serde_json::json;
use web_support::{Reply, serve};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_killed_mid_action_is_a_tool_error_not_a_hang() {
    let Some(path) = chromium() else { return };
    let browser = Browser::launch(&launch(path))
        .await
        .expect("Chromium starts");
    let (arrived, mut requests) = tokio::sync::mpsc::unbounded_channel();
    let site = serve("127.0.0.2", move |request| {
        let _ = arrived.send(request.target.clone());
        Reply::Stall {
            wait: Duration::from_secs(600),
        }
    })
    .await;
    // Waits far longer than the test takes, so only the crash can end the call.
    let limits = BrowserLimits {
        navigation_timeout: Duration::from_secs(3_000),
        ..test_limits()
    };
    let policy = UrlPolicy::new().allow_ip("127.0.0.2".parse().unwrap());
    let harness = Harness::new(browser.clone(), policy, limits);
    let pid = browser.process_id().expect("launched here");

    let navigation = harness.call(
        "crash",
        "browser_navigate",
        json!({"url": format!("http://{site}/slow")}),
    );
    let kill = async {
        assert_eq!(requests.recv().await.as_deref(), Some("/slow"));
        let status = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    };
    let (result, ()) = tokio::time::timeout(Duration::from_secs(300), async {
        tokio::join!(navigation, kill)
    })
    .await
    .expect("the call ends once the browser is gone");
    let error = result.error_info().expect("the call fails");
    assert_eq!(error.code.as_str(), "browser_closed", "{error:?}");
    assert!(browser.is_closed());

    let later = harness.call("crash", "browser_snapshot", json!({})).await;
    assert_eq!(later.error_info().unwrap().code.as_str(), "browser_closed");
    let fresh_run = harness.call("other", "browser_snapshot", json!({})).await;
    assert_eq!(
        fresh_run.error_info().unwrap().code.as_str(),
        "browser_closed"
    );
}
