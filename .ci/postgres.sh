#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: installed from Debian's packages if absent, run by
# an unprivileged user from a temporary directory, on a free port on 127.0.0.1.
#
# In a script (what .ci/run does):
#     source .ci/postgres.sh
#     prism_postgres_start              # exports PRISM_POSTGRES_URL and PRISM_POSTGRES_DIR
#     trap prism_postgres_stop EXIT
#
# By hand:
#     eval "$(bash .ci/postgres.sh start)"
#     PRISM_REQUIRE_POSTGRES=1 cargo test --workspace --all-features
#     bash .ci/postgres.sh stop "$PRISM_POSTGRES_DIR"

# The newest installed server's bin directory, or nothing. The client packages (psql, which a
# machine may have without a server) install into the same directories, so look for initdb.
prism_postgres_bindir() {
    local initdb
    initdb="$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1)"
    if [ -n "$initdb" ]; then
        dirname "$initdb"
    fi
}

# Installs the server from Debian's packages, without the default cluster the package would start.
prism_postgres_install() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "postgres.sh: PostgreSQL is not installed and installing it needs root (apt-get install postgresql)" >&2
        return 1
    fi
    echo "postgres.sh: installing PostgreSQL from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || return 1
    apt-get install -y -qq --no-install-recommends postgresql-common >&2 || return 1
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/prism-no-main.conf
    apt-get install -y -qq --no-install-recommends postgresql >&2 || return 1
}

# The user the server runs as: root may not run it, so root hands it to an unprivileged account.
prism_postgres_user() {
    if [ "$(id -u)" -ne 0 ]; then
        id -un
    elif id postgres >/dev/null 2>&1; then
        echo postgres
    else
        id prism-postgres >/dev/null 2>&1 ||
            useradd --system --no-create-home --shell /usr/sbin/nologin prism-postgres >&2 || return 1
        echo prism-postgres
    fi
}

# Runs a command as the server's user.
prism_postgres_as() {
    local user="$1"
    shift
    if [ "$(id -un)" = "$user" ]; then
        "$@"
    else
        runuser -u "$user" -- "$@"
    fi
}

prism_postgres_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
        echo $((20000 + RANDOM % 20000))
}

prism_postgres_start() {
    local bindir user dir port attempt
    bindir="$(prism_postgres_bindir)"
    if [ -z "$bindir" ]; then
        prism_postgres_install || return 1
        bindir="$(prism_postgres_bindir)"
    fi
    [ -n "$bindir" ] || { echo "postgres.sh: no PostgreSQL server found after installing" >&2; return 1; }
    user="$(prism_postgres_user)" || return 1
    dir="$(mktemp -d "${TMPDIR:-/tmp}/prism-postgres.XXXXXX")" || return 1
    chmod 755 "$dir"
    chown "$user" "$dir" || return 1
    prism_postgres_as "$user" "$bindir/initdb" -D "$dir/data" -U prism --auth=trust \
        --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; return 1; }
    for attempt in 1 2 3 4 5; do
        port="$(prism_postgres_free_port)"
        if prism_postgres_as "$user" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200" start >&2; then
            break
        fi
        port=""
    done
    if [ -z "$port" ]; then
        cat "$dir/server.log" >&2
        return 1
    fi
    prism_postgres_as "$user" "$bindir/createdb" -h 127.0.0.1 -p "$port" -U prism prism_test >&2 || return 1
    export PRISM_POSTGRES_DIR="$dir"
    export PRISM_POSTGRES_URL="postgres://prism@127.0.0.1:$port/prism_test"
    echo "postgres.sh: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') at $PRISM_POSTGRES_URL (data in $dir)" >&2
}

# Stops the server started above (or the one whose directory is given) and removes its files.
prism_postgres_stop() {
    local dir="${1:-${PRISM_POSTGRES_DIR:-}}" bindir user
    [ -n "$dir" ] && [ -d "$dir/data" ] || return 0
    bindir="$(prism_postgres_bindir)"
    user="$(stat -c %U "$dir")"
    prism_postgres_as "$user" "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
    rm -rf "$dir"
    unset PRISM_POSTGRES_URL PRISM_POSTGRES_DIR
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
        start)
            prism_postgres_start || exit 1
            echo "export PRISM_POSTGRES_URL='$PRISM_POSTGRES_URL'"
            echo "export PRISM_POSTGRES_DIR='$PRISM_POSTGRES_DIR'"
            ;;
        stop) prism_postgres_stop "${2:-}" ;;
        *)
            echo "usage: $0 start | stop DIR   (or source it and call prism_postgres_start / prism_postgres_stop)" >&2
            exit 2
            ;;
    esac
fi
