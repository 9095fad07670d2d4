#!/usr/bin/env bash
# Chromium for the browser tool tests, from the distribution's own package (Debian's `chromium`):
# nothing downloads a browser build. Skips the install when /usr/bin/chromium is already there.
# Needs root (or sudo) the first time.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    exit 0
fi

run_as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    else
        sudo "$@"
    fi
}

export DEBIAN_FRONTEND=noninteractive
run_as_root apt-get update -q
run_as_root apt-get install -y -q chromium
/usr/bin/chromium --version
