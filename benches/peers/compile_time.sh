#!/usr/bin/env bash
# Compile time of 100 tools: Prism's `#[tool]` against rmcp's `#[tool_router]` / `#[tool]`.
#
#     bash benches/peers/compile_time.sh [PRISM_REPO_PATH]
#
# Generates the two crates (compile_time.py) into a scratch workspace, builds every dependency
# once in debug and release, then times each crate alone: a clean debug build, two incremental
# debug rebuilds (after one tool's string literal changed in place, then after a line was added
# at the top of the file), and a clean release build. Each
# repetition measures both crates, and the crate that goes first alternates, so load from other
# work on the machine falls on both alike. Prints a Markdown table of medians (min - max) and the
# ratios prism/rmcp.
#
# PRISM_REPO_PATH is the Prism checkout whose `prism` crate is measured (default: the repository
# holding this script). Environment:
#   REPS=5           repetitions of each measurement
#   SCRATCH=DIR      scratch workspace (default: target/compile-time next to this script);
#                    never inside the root workspace, and nothing in it is committed
#   HYPERFINE=1      time with hyperfine (one run per measurement) instead of `date`;
#   HYPERFINE_INSTALL=1  also `apt-get install -y hyperfine` when it is missing
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prism_repo="$(cd "${1:-$here/../..}" && pwd)"
reps="${REPS:-5}"
scratch="${SCRATCH:-$here/target/compile-time}"
crates=(prism_100 rmcp_100)
edited_tool="tool_050"

if [[ "${HYPERFINE:-0}" == 1 ]] && ! command -v hyperfine >/dev/null; then
    if [[ "${HYPERFINE_INSTALL:-0}" == 1 ]]; then
        apt-get install -y hyperfine
    else
        echo "hyperfine is not installed; run with HYPERFINE_INSTALL=1 or without HYPERFINE=1" >&2
        exit 1
    fi
fi

python3 "$here/compile_time.py" "$scratch" --prism "$prism_repo" >/dev/null
cd "$scratch"
# The scratch workspace's own target directory, whatever the caller's environment says.
export CARGO_TARGET_DIR="$scratch/target"
unset CARGO_INCREMENTAL CARGO_BUILD_INCREMENTAL RUSTFLAGS
log="$scratch/build.log"
results="$scratch/results.tsv"
loads="$scratch/load.txt"
: >"$log"
: >"$results"
: >"$loads"

echo "Prism repository: $prism_repo ($(git -C "$prism_repo" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout'))" >&2
echo "Building dependencies (debug and release)..." >&2
# Each crate alone, as it is measured: a `--workspace` build unifies the two crates' features
# of shared dependencies, so `-p` would then rebuild those dependencies inside the first timing.
for crate in "${crates[@]}"; do
    cargo build -p "$crate" >>"$log" 2>&1
    cargo build -p "$crate" --release >>"$log" 2>&1
done

# Runs one cargo command and appends "crate measurement seconds" to the results.
timed() {
    local crate="$1" what="$2"
    shift 2
    local seconds
    if [[ "${HYPERFINE:-0}" == 1 ]]; then
        local json="$scratch/hyperfine.json"
        hyperfine --runs 1 --export-json "$json" --command-name "$crate $what" \
            "$(printf '%q ' "$@")" >>"$log" 2>&1
        seconds="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"])' "$json")"
    else
        local start end
        start="$(date +%s.%N)"
        "$@" >>"$log" 2>&1
        end="$(date +%s.%N)"
        seconds="$(python3 -c 'import sys; print(float(sys.argv[2]) - float(sys.argv[1]))' "$start" "$end")"
    fi
    printf '%s\t%s\t%s\n' "$crate" "$what" "$seconds" >>"$results"
    printf '  %-10s %-26s %6.2f s\n' "$crate" "$what" "$seconds" >&2
}

# Changes the text of one tool's error message without changing its length, so the crate's
# source changes in one function and nothing after it moves.
edit_one_tool() {
    local crate="$1" rep="$2" word
    word="$(printf 'e%04d' "$rep")"
    sed -i -E "s/\"${edited_tool}: the label is [a-z0-9]{5}\"/\"${edited_tool}: the label is ${word}\"/" \
        "$crate/src/lib.rs"
    grep -q "${edited_tool}: the label is ${word}\"" "$crate/src/lib.rs"
}

# Adds a comment line under the crate's first line, so every item after it moves down a line.
# rustc identifies a macro expansion by where its call is, so every expansion below an edit
# that moves lines is checked and compiled again, in either crate.
add_line_at_top() {
    local crate="$1" rep="$2"
    sed -i "1a // edit ${rep}" "$crate/src/lib.rs"
    grep -q "^// edit ${rep}\$" "$crate/src/lib.rs"
}

measure() {
    local crate="$1" rep="$2"
    cargo clean -p "$crate" >>"$log" 2>&1
    timed "$crate" "clean debug" cargo build -p "$crate"
    edit_one_tool "$crate" "$rep"
    timed "$crate" "incremental, one tool" cargo build -p "$crate"
    add_line_at_top "$crate" "$rep"
    timed "$crate" "incremental, line at top" cargo build -p "$crate"
    cargo clean -p "$crate" --release >>"$log" 2>&1
    timed "$crate" "clean release" cargo build --release -p "$crate"
    cut -d' ' -f1 /proc/loadavg >>"$loads"
}

for ((rep = 1; rep <= reps; rep++)); do
    echo "Repetition $rep of $reps (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    cut -d' ' -f1 /proc/loadavg >>"$loads"
    if ((rep % 2 == 1)); then order=("${crates[@]}"); else order=("${crates[1]}" "${crates[0]}"); fi
    for crate in "${order[@]}"; do
        measure "$crate" "$rep"
    done
done
cut -d' ' -f1 /proc/loadavg >>"$loads"
# Leave the generated sources as the generator writes them.
python3 "$here/compile_time.py" "$scratch" --prism "$prism_repo" >/dev/null

python3 - "$results" "$loads" <<'EOF'
import statistics, sys
from collections import defaultdict

times = defaultdict(list)
for line in open(sys.argv[1]):
    crate, what, seconds = line.rstrip("\n").split("\t")
    times[(crate, what)].append(float(seconds))
loads = [float(x) for x in open(sys.argv[2]).read().split()]

def cell(xs):
    return f"{statistics.median(xs):.2f} s ({min(xs):.2f} - {max(xs):.2f})"

print("| build | prism_100 | rmcp_100 | prism / rmcp |")
print("| --- | ---: | ---: | ---: |")
for what in ["clean debug", "incremental, one tool", "incremental, line at top", "clean release"]:
    p, r = times[("prism_100", what)], times[("rmcp_100", what)]
    ratio = statistics.median(p) / statistics.median(r)
    print(f"| {what} | {cell(p)} | {cell(r)} | {ratio:.2f} |")
print()
print(f"{len(times[('prism_100', 'clean debug')])} repetitions; medians (min - max); "
      f"1-minute load average {min(loads):.2f} to {max(loads):.2f} across the run.")
EOF
