#!/usr/bin/env bash
# Node.js 22 for the interoperability tests (the MCP conformance suite and the npm MCP servers
# crash on Node 20). The npm registry ships Node's binaries as the package `node`, so this needs
# only the machine's npm. Installed once into a cache directory; a warm machine skips the install.
#
# In a script:  source .ci/node22.sh && prism_node22   # puts Node 22 first on PATH
# By hand:      eval "$(bash .ci/node22.sh)"

PRISM_NODE22_DIR="${PRISM_NODE22_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/prism-ci/node22}"

prism_node22() {
    local bin="$PRISM_NODE22_DIR/node_modules/.bin"
    if ! "$bin/node" --version 2>/dev/null | grep -q '^v22\.'; then
        mkdir -p "$PRISM_NODE22_DIR"
        npm install --silent --no-audit --no-fund --prefix "$PRISM_NODE22_DIR" node@22 >&2
    fi
    "$bin/node" --version | grep -q '^v22\.' || {
        echo "node22.sh: Node 22 could not be installed into $PRISM_NODE22_DIR" >&2
        return 1
    }
    export PATH="$bin:$PATH"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    prism_node22
    echo "export PATH=\"$PRISM_NODE22_DIR/node_modules/.bin:\$PATH\""
fi
