//! Prints the last `cargo bench` run as a Markdown table: each arm's median time with its 95 %
//! confidence interval, the ratios the benchmark is read by, and the concurrent throughput.
//!
//! `cargo run --release --bin summary` (from `benches/peers`, after `cargo bench`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

/// The arms of group `add`, in the order they are reported.
const ARMS: [(&str, &str); 8] = [
    ("a1_floor_owned", "a1 floor, owned arguments"),
    ("a2_floor_borrowed", "a2 floor, borrowed arguments"),
    ("b_prism_bare", "b Prism, no guards"),
    ("c_prism_full_chain", "c Prism, full chain"),
    (
        "c1k_prism_full_chain_1kib",
        "c' Prism, full chain, 1 KiB arguments",
    ),
    (
        "ct_prism_full_chain_tracing",
        "c Prism, full chain, tracing subscriber",
    ),
    ("d_rmcp_tool_router", "d rmcp ToolRouter::call"),
    ("e_rig_tool_set", "e rig ToolSet::execute"),
];

/// A median and its confidence interval, in nanoseconds.
struct Median {
    point: f64,
    low: f64,
    high: f64,
}

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/criterion");
    match report(&root) {
        Ok(table) => {
            print!("{table}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

fn report(root: &Path) -> Result<String, String> {
    let mut out = String::from("| arm | median | 95 % CI |\n| --- | ---: | ---: |\n");
    let mut medians = Vec::new();
    for (id, label) in ARMS {
        let median = median(&root.join("add").join(id))?;
        out += &format!(
            "| {label} | {} | {} – {} |\n",
            nanos(median.point),
            nanos(median.low),
            nanos(median.high)
        );
        medians.push((id, median.point));
    }
    let of = |id: &str| {
        medians
            .iter()
            .find(|(arm, _)| *arm == id)
            .map(|(_, point)| *point)
            .unwrap_or(f64::NAN)
    };
    let ratio = |a: &str, b: &str| of(a) / of(b);
    out += "\n| ratio | value |\n| --- | ---: |\n";
    for (label, value) in [
        ("b / a2", ratio("b_prism_bare", "a2_floor_borrowed")),
        ("c / a2", ratio("c_prism_full_chain", "a2_floor_borrowed")),
        (
            "c' / a2",
            ratio("c1k_prism_full_chain_1kib", "a2_floor_borrowed"),
        ),
        ("d / a1", ratio("d_rmcp_tool_router", "a1_floor_owned")),
        ("e / a1", ratio("e_rig_tool_set", "a1_floor_owned")),
        ("c / d", ratio("c_prism_full_chain", "d_rmcp_tool_router")),
        (
            "c with tracing / c",
            ratio("ct_prism_full_chain_tracing", "c_prism_full_chain"),
        ),
    ] {
        out += &format!("| {label} | {value:.2} |\n");
    }
    let concurrent = root.join("concurrent/c_prism_full_chain_8_tasks");
    let median = median(&concurrent)?;
    let calls = elements(&concurrent)?;
    let per_second = |nanos: f64| calls / (nanos * 1e-9);
    out += &format!(
        "\nFull chain from 8 tasks on a multi-thread runtime: {:.0} calls/s (95 % CI {:.0} – {:.0}), {calls} calls per iteration.\n",
        per_second(median.point),
        per_second(median.high),
        per_second(median.low)
    );
    Ok(out)
}

fn median(bench: &Path) -> Result<Median, String> {
    let estimates = read_json(&bench.join("new/estimates.json"))?;
    let median = &estimates["median"];
    let number = |value: &Value| {
        value
            .as_f64()
            .ok_or_else(|| format!("{} has no median", bench.display()))
    };
    Ok(Median {
        point: number(&median["point_estimate"])?,
        low: number(&median["confidence_interval"]["lower_bound"])?,
        high: number(&median["confidence_interval"]["upper_bound"])?,
    })
}

fn elements(bench: &Path) -> Result<f64, String> {
    read_json(&bench.join("new/benchmark.json"))?["throughput"]["Elements"]
        .as_f64()
        .ok_or_else(|| format!("{} has no element throughput", bench.display()))
}

fn read_json(path: &PathBuf) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!(
            "cannot read {}: {error}; run `cargo bench` first",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|error| format!("{} is not JSON: {error}", path.display()))
}

fn nanos(value: f64) -> String {
    if value >= 1000.0 {
        format!("{:.2} µs", value / 1000.0)
    } else {
        format!("{value:.0} ns")
    }
}
