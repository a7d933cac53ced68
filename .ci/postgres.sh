#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the Sync/ tests: installs PostgreSQL from Debian's packages if its server
# binaries are missing, creates a cluster in a temporary directory owned by the `postgres` user, starts it on a
# loopback port (unix socket in the same directory), creates a database and exports the standard PG* variables
# that the tests read.
#
# Source it (it exports variables and defines `strata_postgres_stop`):
#
#     source .ci/postgres.sh          # starts the cluster, exports PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE
#                                     # (and STRATA_PG_DIR, STRATA_PG_BIN: the suites may restart it with pg_ctl)
#     swift test --package-path Sync
#     strata_postgres_stop            # stops it and removes its directory
#
# STRATA_PG_PORT overrides the port (default 54329). Works as root (CI: the server runs as `postgres` through
# runuser) and as an ordinary user (the server runs as that user).

strata_postgres_bin() {
    local dir
    # pg_ctl on the PATH may be a lone symbolic link (Debian's postgresql-common): use the directory it points
    # into, which holds initdb and createdb too.
    for dir in "$(dirname "$(readlink -f "$(command -v pg_ctl 2>/dev/null || echo /nonexistent)")")" \
        $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$dir/pg_ctl" ] && [ -x "$dir/initdb" ] && [ -x "$dir/createdb" ]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

strata_postgres_start() {
    local bin port dir as_server
    if ! bin=$(strata_postgres_bin); then
        echo "PostgreSQL's server binaries are missing: installing Debian's postgresql package" >&2
        if [ "$(id -u)" -ne 0 ]; then
            echo "error: installing PostgreSQL needs root (apt-get install -y postgresql)" >&2
            return 1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || return 1
        bin=$(strata_postgres_bin) || { echo "error: no pg_ctl after installing postgresql" >&2; return 1; }
    fi
    port=${STRATA_PG_PORT:-54329}
    dir=$(mktemp -d /tmp/strata-postgres.XXXXXX)
    if [ "$(id -u)" -eq 0 ]; then
        # initdb refuses to run as root: the cluster belongs to the `postgres` user.
        id postgres >/dev/null 2>&1 || useradd --system --home-dir "$dir" --shell /usr/sbin/nologin postgres
        chown postgres "$dir"
        as_server=(runuser -u postgres --)
        STRATA_PG_USER=postgres
    else
        as_server=()
        STRATA_PG_USER=$(id -un)
    fi
    "${as_server[@]}" "$bin/initdb" --pgdata="$dir/data" --username="$STRATA_PG_USER" --auth=trust \
        --encoding=UTF8 --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
    "${as_server[@]}" "$bin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=off -c max_connections=100" \
        start >/dev/null || { cat "$dir/server.log" >&2; return 1; }
    STRATA_PG_DIR=$dir
    STRATA_PG_BIN=$bin
    "${as_server[@]}" "$bin/createdb" --host=127.0.0.1 --port="$port" --username="$STRATA_PG_USER" strata_sync_test \
        || { strata_postgres_stop; return 1; }
    export PGHOST=127.0.0.1 PGPORT=$port PGUSER=$STRATA_PG_USER PGPASSWORD= PGDATABASE=strata_sync_test
    # The cluster's data directory and binaries: the convergence suite restarts the server mid-run with pg_ctl.
    export STRATA_PG_DIR STRATA_PG_BIN
    echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (cluster in $dir)" >&2
}

strata_postgres_stop() {
    [ -n "${STRATA_PG_DIR:-}" ] || return 0
    local as_server=()
    [ "$(id -u)" -eq 0 ] && as_server=(runuser -u postgres --)
    "${as_server[@]}" "$STRATA_PG_BIN/pg_ctl" --pgdata="$STRATA_PG_DIR/data" --mode=immediate --wait stop \
        >/dev/null 2>&1 || true
    rm -rf "$STRATA_PG_DIR"
    STRATA_PG_DIR=
}

strata_postgres_start
