//! Measures the web tools on this machine: fetch + extract throughput over the 65 Readability
//! reference pages served locally, and peak memory while fetching a 1 GiB body under a byte
//! limit.
//!
//! ```text
//! cargo run --release --features web --example web_measure -- pages
//! cargo run --release --features web --example web_measure -- gigabyte [limit in MiB, 64]
//! ```
//!
//! Peak memory is the process's peak resident set (`VmHWM` in `/proc/self/status`, Linux), read
//! before and after the fetch; run each mode in its own process so the other does not count.

#[path = "../tests/web_support/mod.rs"]
mod web_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use prism::tools::web::{FetchLimits, TextFormat, UrlPolicy, WebFetcher, extract_article};
use web_support::{Reply, serve};

const SERVER_IP: &str = "127.0.0.2";

fn peak_resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn fetcher(limits: FetchLimits) -> WebFetcher {
    let policy = UrlPolicy::new().allow_ip(SERVER_IP.parse().expect("an IP literal"));
    WebFetcher::with_limits(policy, limits).expect("the HTTP client builds")
}

async fn pages() {
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
    let bytes: usize = pages.iter().map(|(_, source)| source.len()).sum();
    let served = Arc::new(pages.clone());
    let address = serve(SERVER_IP, move |request| {
        let name = request.target.trim_matches('/');
        let page = served
            .iter()
            .find(|(n, _)| n == name)
            .expect("a known page");
        Reply::ok("text/html", page.1.clone())
    })
    .await;
    let fetcher = fetcher(FetchLimits::default());
    let rounds = 5;
    let count = pages.len() * rounds;
    let start = Instant::now();
    for _ in 0..rounds {
        for (name, _) in &pages {
            let page = fetcher
                .fetch(&format!("http://{address}/{name}/"))
                .await
                .unwrap();
            extract_article(&page.body, Some(&page.final_url), TextFormat::Markdown).unwrap();
        }
    }
    let both = start.elapsed();
    let start = Instant::now();
    for _ in 0..rounds {
        for (name, _) in &pages {
            fetcher
                .fetch(&format!("http://{address}/{name}/"))
                .await
                .unwrap();
        }
    }
    let fetch_only = start.elapsed();
    println!(
        "{} pages ({:.1} MiB), {rounds} rounds, one after another:",
        pages.len(),
        bytes as f64 / f64::from(1 << 20)
    );
    println!(
        "  fetch + extract (markdown): {:.1} pages/s",
        count as f64 / both.as_secs_f64()
    );
    println!(
        "  fetch alone:                {:.1} pages/s",
        count as f64 / fetch_only.as_secs_f64()
    );
}

async fn gigabyte(limit_mib: usize) {
    let address = serve(SERVER_IP, |_| Reply::Endless { length: 1 << 30 }).await;
    let limits = FetchLimits {
        max_bytes: limit_mib << 20,
        ..FetchLimits::default()
    };
    let fetcher = fetcher(limits);
    let before = peak_resident_kib().unwrap_or(0);
    let start = Instant::now();
    let page = fetcher
        .fetch(&format!("http://{address}/huge"))
        .await
        .unwrap();
    let elapsed = start.elapsed();
    let after = peak_resident_kib().unwrap_or(0);
    assert!(page.truncated);
    let grown = after.saturating_sub(before);
    println!(
        "1 GiB body, limit {limit_mib} MiB: kept {} MiB in {:.2} s; peak resident {} MiB before, \
         {} MiB after: +{} MiB, {:.2}x the limit",
        page.body.len() >> 20,
        elapsed.as_secs_f64(),
        before >> 10,
        after >> 10,
        grown >> 10,
        grown as f64 / (limit_mib as f64 * 1024.0)
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("gigabyte") => {
            let limit = args
                .next()
                .map_or(64, |n| n.parse().expect("a count of MiB"));
            gigabyte(limit).await;
        }
        _ => pages().await,
    }
}
