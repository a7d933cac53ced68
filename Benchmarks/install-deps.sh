#!/usr/bin/env bash
# Installs the C libraries the benchmarks link when their headers are missing: LMDB (liblmdb-dev, or Homebrew's
# lmdb) and SQLite (libsqlite3-dev), which GRDB links. Used by run.sh and by CI's build of the benchmarks.
set -euo pipefail

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

