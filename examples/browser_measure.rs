//! Measures the browser tools on this machine, on headless Chromium through the dispatcher:
//! snapshot size and time over the 65 Readability reference pages served locally, and actions
//! per second on a local form.
//!
//! ```text
//! cargo run --release --features browser --example browser_measure
//! ```
//!
//! Chromium comes from `PRISM_CHROMIUM`, else `/usr/bin/chromium`. Snapshots are taken with no
//! character limit so the sizes are the pages' own; the count over the default limit
//! (`BrowserLimits::default().snapshot_max_chars`) is printed beside them.

#[path = "../tests/web_support/mod.rs"]
mod web_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prism::tools::browser::{Browser, BrowserLimits, BrowserTools, ChromiumLaunch};
use prism::tools::web::UrlPolicy;
use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};
use serde_json::{Value, json};
use web_support::{Reply, serve};

const SERVER_IP: &str = "127.0.0.2";

struct Tools {
    dispatcher: Dispatcher,
    ctx: ToolExecutionContext,
    calls: usize,
}

impl Tools {
    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.calls += 1;
        let call = ToolCall::new(format!("c{}", self.calls), name, arguments);
        let result = self.dispatcher.dispatch(call, &self.ctx).await.unwrap();
        match result.as_value() {
            Some(value) => value.clone(),
            None => panic!("{name}: {result:?}"),
        }
    }
}

fn median_and_max(values: &mut [f64]) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[values.len() - 1])
}

#[tokio::main]
async fn main() {
    let chromium = std::env::var_os("PRISM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let browser = Browser::launch(&ChromiumLaunch::new(chromium).no_sandbox())
        .await
        .expect("Chromium starts");
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/web-pages/readability/test-pages"
    ));
    let mut pages: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let source = std::fs::read(dir.join(&name).join("source.html")).unwrap();
            (name, source)
        })
        .collect();
    pages.sort();
    let served = Arc::new(pages.clone());
    let address = serve(SERVER_IP, move |request| {
        let name = request.target.trim_matches('/');
        match served.iter().find(|(n, _)| n == name) {
            Some(page) => Reply::ok("text/html; charset=utf-8", page.1.clone()),
            None if name.starts_with("form") => Reply::ok("text/html", FORM),
            None => Reply::Bytes {
                status: 404,
                headers: Vec::new(),
                body: Vec::new(),
            },
        }
    })
    .await;
    // The local server only: every other host is refused by name, before any DNS lookup.
    let policy = UrlPolicy::new()
        .allow_host(SERVER_IP)
        .allow_ip(SERVER_IP.parse().unwrap());
    let limits = BrowserLimits {
        snapshot_max_chars: usize::MAX,
        snapshot_max_text: 200,
        ..BrowserLimits::default()
    };
    let default_cap = BrowserLimits::default().snapshot_max_chars;
    let tools = BrowserTools::new(browser, policy, limits);
    let mut run = Tools {
        dispatcher: Dispatcher::builder(ToolRegistry::from_iter(tools.definitions())).build(),
        ctx: ToolExecutionContext::new().with_run_id("measure"),
        calls: 0,
    };

    let (mut sizes, mut times, mut refs) = (Vec::new(), Vec::new(), Vec::new());
    let mut over_cap = 0;
    for (name, _) in &pages {
        run.call(
            "browser_navigate",
            json!({"url": format!("http://{address}/{name}")}),
        )
        .await;
        let started = Instant::now();
        let snapshot = run.call("browser_snapshot", json!({})).await;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        let chars = snapshot["snapshot"].as_str().unwrap().chars().count();
        over_cap += usize::from(chars > default_cap);
        sizes.push(chars as f64);
        refs.push(snapshot["refs"].as_f64().unwrap());
    }
    let (size_median, size_max) = median_and_max(&mut sizes);
    let (time_median, time_max) = median_and_max(&mut times);
    let (refs_median, refs_max) = median_and_max(&mut refs);
    println!(
        "snapshots of {} pages: size median {size_median:.0} chars, max {size_max:.0} \
         ({over_cap} over the default {default_cap}); refs median {refs_median:.0}, max \
         {refs_max:.0}; time median {time_median:.1} ms, max {time_max:.1} ms",
        pages.len()
    );

    run.call(
        "browser_navigate",
        json!({"url": format!("http://{address}/form")}),
    )
    .await;
    let snapshot = run.call("browser_snapshot", json!({})).await;
    let text = snapshot["snapshot"].as_str().unwrap().to_string();
    let find = |needle: &str| {
        let line = text.lines().find(|line| line.contains(needle)).unwrap();
        let start = line.find("[ref=").unwrap() + 5;
        line[start..start + line[start..].find(']').unwrap()].to_string()
    };
    let (field, tick) = (find("textbox"), find("checkbox"));
    for (action, target, count) in [("type", &field, 200), ("click", &tick, 20)] {
        let started = Instant::now();
        for n in 0..count {
            let text = format!("value {n}");
            run.call(
                "browser_act",
                json!({"ref": target, "action": action, "text": text}),
            )
            .await;
        }
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "{action}: {count} actions in {seconds:.2} s, {:.1} per second",
            count as f64 / seconds
        );
    }
    let started = Instant::now();
    for _ in 0..50 {
        run.call("browser_snapshot", json!({})).await;
    }
    println!(
        "form snapshots: {:.1} per second",
        50.0 / started.elapsed().as_secs_f64()
    );
    tools.close_run("measure").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
}

const FORM: &str = "<!doctype html><title>Form</title><form action=/done>\
    <label>Name <input name=name></label>\
    <label><input type=checkbox name=tick> Tick</label>\
    <button>Send</button></form>";
