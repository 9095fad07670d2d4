#!/usr/bin/env bash
# Third-party MCP servers the client bridge is tested against (none written by us):
#   PyPI  mcp-server-time and mcp-server-git, in one virtual environment;
#   npm   @modelcontextprotocol/server-everything, run under Node 22 (.ci/node22.sh).
# Idempotent: each peer is installed once into a cache directory and skipped when present.
# Prints the environment the tests read: PRISM_MCP_VENV, PRISM_MCP_EVERYTHING, PRISM_NODE22.
#
# In a script:  eval "$(bash .ci/mcp_peers.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/prism-ci"
VENV="$CACHE/mcp-servers-venv"
EVERYTHING_DIR="$CACHE/mcp-server-everything-2026.8.31"
PY_PEERS=("mcp-server-time==2026.10.19" "mcp-server-git==2026.10.19")

# shellcheck source=node22.sh
source .ci/node22.sh
prism_node22

has_python_peers() {
    "$VENV/bin/python" - <<'PY' 2>/dev/null
from importlib.metadata import version
assert version("mcp-server-time") == "2026.10.19"
assert version("mcp-server-git") == "2026.10.19"
PY
}
if ! has_python_peers; then
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PY_PEERS[@]}" >&2
fi

if [ ! -f "$EVERYTHING_DIR/node_modules/@modelcontextprotocol/server-everything/package.json" ]; then
    mkdir -p "$EVERYTHING_DIR"
    npm install --silent --no-audit --no-fund --prefix "$EVERYTHING_DIR" \
        @modelcontextprotocol/server-everything@2026.8.31 >&2
fi

echo "export PRISM_MCP_VENV=\"$VENV\""
echo "export PRISM_MCP_EVERYTHING=\"$EVERYTHING_DIR/node_modules/@modelcontextprotocol/server-everything\""
echo "export PRISM_NODE22=\"$PRISM_NODE22_DIR/node_modules/.bin/node\""
