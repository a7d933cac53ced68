#!/usr/bin/env bash
# Benchmarks StrataStorage against LMDB and SQLite (through GRDB) and prints a Markdown table.
# Usage: bash Benchmarks/run.sh [--sizes 10000,100000,1000000] [--only strata,lmdb,sqlite] [--output PATH]
#        (all options: bash Benchmarks/run.sh --help)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"

# LMDB is a system C library: install its headers when they are missing (Debian/Ubuntu).
if ! { [ -f /usr/include/lmdb.h ] || [ -f /usr/local/include/lmdb.h ] || pkg-config --exists lmdb 2>/dev/null; }; then
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
        echo "installing liblmdb-dev (LMDB headers and library)" >&2
        $sudo apt-get update -qq >&2 || true
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq liblmdb-dev >&2
    elif command -v brew >/dev/null 2>&1; then
        brew install lmdb >&2
    else
        echo "lmdb.h not found: install LMDB's development files (liblmdb-dev)" >&2
        exit 1
    fi
fi
# GRDB links the system SQLite.
if ! { [ -f /usr/include/sqlite3.h ] || pkg-config --exists sqlite3 2>/dev/null; } && command -v apt-get >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    echo "installing libsqlite3-dev" >&2
    $sudo apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libsqlite3-dev >&2
fi

export STRATA_BENCH_COMMAND="bash $0${*:+ $*}"
# Build output goes to stderr so that stdout is the Markdown report alone.
swift build -c release --package-path "$here" --product strata-bench >&2
swift build -c release --package-path "$here" --product strata-object-bench >&2
swift build -c release --package-path "$here" --product strata-query-bench >&2
for argument in "$@"; do
    if [ "$argument" = "--help" ] || [ "$argument" = "-h" ]; then
        exec swift run -c release --skip-build --package-path "$here" strata-bench --help
    fi
done
swift run -c release --skip-build --package-path "$here" strata-bench "$@"
# The object-layer table (Strata objects against GRDB records). STRATA_OBJECT_SIZES overrides its sizes.
echo
swift run -c release --skip-build --package-path "$here" strata-object-bench \
    --sizes "${STRATA_OBJECT_SIZES:-10000,100000,1000000}" --repeat 3
# The query table (Strata queries against the same queries in SQL). STRATA_QUERY_COUNT overrides its size.
echo
exec swift run -c release --skip-build --package-path "$here" strata-query-bench \
    --count "${STRATA_QUERY_COUNT:-1000000}" --repeat 3
