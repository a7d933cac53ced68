#!/usr/bin/env bash
# Requests/s of strata-server over Strata against the same routes over SQLite through GRDB, in one run: a read
# route (GET /books/:id), an update (POST /books/:id/likes) and a create (POST /books), each measured with wrk
# on loopback against a release build, one backend after the other on fresh files.
#   bash Examples/bench.sh            # DURATION=10s CONNECTIONS=16 THREADS=1 by default
# Needs wrk (Debian: apt-get install wrk) and curl. Not run by CI.
set -euo pipefail
cd "$(dirname "$0")"
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
PORT=${PORT:-18080}

command -v wrk >/dev/null || { echo "bench.sh needs wrk (apt-get install wrk)" >&2; exit 1; }
swift build -c release --scratch-path .build-release --product strata-server >&2
server="$(swift build -c release --scratch-path .build-release --show-bin-path)/strata-server"
work=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Runs wrk with the given arguments and prints its Requests/sec.
rate() { wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" "$@" | awk '/^Requests\/sec:/ { printf "%.0f", $2 }'; }

declare -A results
for backend in strata grdb; do
    "$server" --backend "$backend" --path "$work/library.$backend" --port "$PORT" --log-level warning &
    pid=$!
    until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do sleep 0.1; done
    base="http://127.0.0.1:$PORT"
    curl -sf -X POST "$base/authors" -H 'Content-Type: application/json' -d '{"id":"bench","name":"Bench"}' >/dev/null
    curl -sf -X POST "$base/books" -H 'Content-Type: application/json' \
        -d '{"id":"dune","title":"Dune","year":1965,"authorID":"bench"}' >/dev/null
    results[$backend,read]=$(rate "$base/books/dune")
    results[$backend,like]=$(rate -s bench/like.lua "$base/books/dune/likes")
    results[$backend,create]=$(rate -s bench/create.lua "$base/books")
    kill -TERM "$pid"
    wait "$pid"
    pid=
done

echo "| route | Strata (req/s) | SQLite via GRDB (req/s) | Strata / GRDB |"
echo "|---|---:|---:|---:|"
for route in "read:GET /books/:id" "like:POST /books/:id/likes" "create:POST /books"; do
    key=${route%%:*}
    name=${route#*:}
    s=${results[strata,$key]}
    g=${results[grdb,$key]}
    echo "| \`$name\` | $s | $g | $(awk -v s="$s" -v g="$g" 'BEGIN { printf "%.2f", s / g }') |"
done
echo
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION on loopback, release build, $(nproc) cores; durable commits on both"
echo "(Strata: fsync per commit; SQLite: WAL, synchronous=FULL)."
