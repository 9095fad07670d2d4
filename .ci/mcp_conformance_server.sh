#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance) against our server,
# `examples/mcp_conformance_server.rs`: version 0.1.16 for the 2025-11-25 handshake era and
# 0.2.0-alpha.12 for 2026-07-28, both under Node 22. Each version is installed once into the
# cache; a warm machine installs nothing. Fails when a scenario fails that
# .ci/mcp-conformance/server-expected-failures.yaml does not list (the suite's own baseline check).
#
#   bash .ci/mcp_conformance_server.sh              # build, start the server, run every suite
#   PRISM_CONFORMANCE_ONLY=install bash .ci/mcp_conformance_server.sh   # only install the suites
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=node22.sh
source .ci/node22.sh
prism_node22

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/prism-ci"
VERSIONS=(0.1.16 0.2.0-alpha.12)
suite() { echo "$CACHE/mcp-conformance-$1/node_modules/.bin/conformance"; }
for version in "${VERSIONS[@]}"; do
    if ! "$(suite "$version")" --version >/dev/null 2>&1; then
        mkdir -p "$CACHE/mcp-conformance-$version"
        npm install --silent --no-audit --no-fund --prefix "$CACHE/mcp-conformance-$version" \
            "@modelcontextprotocol/conformance@$version" >&2
    fi
done
[ "${PRISM_CONFORMANCE_ONLY:-}" = install ] && exit 0

cargo build --quiet --example mcp_conformance_server --features mcp
SERVER="${CARGO_TARGET_DIR:-target}/debug/examples/mcp_conformance_server"
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
URL="http://127.0.0.1:$PORT/mcp"
LOG="$(mktemp)"
"$SERVER" "127.0.0.1:$PORT" 2>"$LOG" &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 100); do
    grep -q "MCP conformance server at" "$LOG" && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$LOG" >&2; echo "the conformance server did not start" >&2; exit 1; }
    sleep 0.1
done

BASELINE=.ci/mcp-conformance/server-expected-failures.yaml
run() {
    local version=$1; shift
    echo "== @modelcontextprotocol/conformance@$version server --suite active $*"
    "$(suite "$version")" server --url "$URL" --suite active --expected-failures "$BASELINE" "$@" \
        | sed -n '/=== SUMMARY ===/,$p'
    return "${PIPESTATUS[0]}"
}
status=0
run 0.1.16 || status=1
run 0.2.0-alpha.12 || status=1
run 0.2.0-alpha.12 --spec-version 2026-07-28 || status=1
exit "$status"
