#!/usr/bin/env bash
# Python MCP clients for the server's interoperability test (tests/mcp_python.rs): the official
# SDK at 2.3.0 (2026-07-28 era) and its latest 1.x (handshake era), each in its own virtual
# environment under the cache. Idempotent: an environment that already holds its version is left
# alone.
#
# In a script:  source .ci/mcp_python.sh && prism_mcp_python   # exports PRISM_MCP_PYTHON_VENVS
# By hand:      eval "$(bash .ci/mcp_python.sh)"

PRISM_MCP_PYTHON_DIR="${PRISM_MCP_PYTHON_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/prism-ci}"

prism_mcp_python() {
    local venvs=() name spec dir
    for name in 2.3.0 1; do
        case "$name" in
            2.3.0) spec="mcp==2.3.0" ;;
            1) spec="mcp>=1,<2" ;;
        esac
        dir="$PRISM_MCP_PYTHON_DIR/mcp-python-$name"
        if ! "$dir/bin/python" - "$name" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
wanted = sys.argv[1]
have = version("mcp")
sys.exit(0 if have == wanted or (wanted == "1" and have.startswith("1.")) else 1)
PY
        then
            python3 -m venv "$dir" >&2
            "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$spec" >&2
        fi
        venvs+=("$dir")
    done
    PRISM_MCP_PYTHON_VENVS="$(IFS=:; echo "${venvs[*]}")"
    export PRISM_MCP_PYTHON_VENVS
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    prism_mcp_python
    echo "export PRISM_MCP_PYTHON_VENVS=\"$PRISM_MCP_PYTHON_VENVS\""
fi
