#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios against the prism client bridge
# (examples/mcp_conformance_client.rs): @modelcontextprotocol/conformance 0.1.16 for the
# 2025-11-25 era and 0.2.0-alpha.12 for 2026-07-28, both under Node 22. Expected failures, each
# with its reason, are in .ci/mcp-conformance/client-expected-failures-<version>.yaml; the suite
# fails on any other failure and on a listed scenario that passes.
#
# Each suite version is installed once into a cache directory (idempotent). Needs cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/prism-ci"
TARGET="${CARGO_TARGET_DIR:-target}"

# shellcheck source=node22.sh
source .ci/node22.sh
prism_node22

conformance() {
    local version="$1" dir="$CACHE/mcp-conformance-$1"
    if [ ! -x "$dir/node_modules/.bin/conformance" ]; then
        mkdir -p "$dir"
        npm install --silent --no-audit --no-fund --prefix "$dir" \
            "@modelcontextprotocol/conformance@$version" >&2
    fi
    echo "$dir/node_modules/.bin/conformance"
}

# All features, as `cargo test --workspace --all-features` builds them: .ci/run reuses its artifacts.
cargo build --quiet --example mcp_conformance_client --all-features
client="$(cd "$TARGET" && pwd)/debug/examples/mcp_conformance_client"
results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT

status=0
for run in "0.1.16 2025-11-25" "0.2.0-alpha.12 2026-07-28"; do
    read -r version spec <<<"$run"
    echo "== MCP conformance $version, client scenarios of $spec"
    "$(conformance "$version")" client --command "$client" --suite all --spec-version "$spec" \
        --expected-failures ".ci/mcp-conformance/client-expected-failures-$version.yaml" \
        -o "$results/$version" || status=1
done
exit "$status"
