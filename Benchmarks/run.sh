#!/usr/bin/env bash
# The whole benchmark report in one command: installs LMDB's and SQLite's headers when they are missing, builds the
# benchmarks in release mode, runs the storage, object, query and notification benchmarks at every size, and
# writes one Markdown report (default Benchmarks/results/REPORT.md), also printed on stdout.
# Usage: bash Benchmarks/run.sh [--sizes 10000,100000,1000000] [--repeat R] [--output PATH] [--quick]
#        (all options: bash Benchmarks/run.sh --help)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"

usage() {
    cat <<'EOF'
usage: bash Benchmarks/run.sh [--sizes 10000,100000,1000000] [--repeat R] [--output PATH] [--quick]
                              [--benchmarks storage,objects,queries,notify] [--dir DIRECTORY]
                              [--only strata,lmdb,sqlite] [--commits 1000] [--no-warmup] [--encrypted]

  --sizes       sizes to run every benchmark at, comma-separated (default 10000,100000,1000000): keys for the
                storage engine, objects for the object and query benchmarks (one query run per size), objects
                read by the notification benchmark's readers
  --repeat      runs per cell; each table shows the median (default: each benchmark's own, 5 for the storage
                engine, 3 for objects and queries; the notification benchmark runs once)
  --output      the report (default Benchmarks/results/REPORT.md); each run's raw outputs go to a directory
                next to it, named after it with .raw instead of .md
  --quick       a smoke run: sizes 1000,10000, one run per cell, 10,000 texts for full-text search, and a
                short notification run (50 commits, 1 and 10 observers, 8 x 100 writes, 0.5 s of reading);
                --sizes and --repeat given after --quick still apply
  --benchmarks  which benchmarks to run, comma-separated: storage, objects, queries, notify (default all)
  --dir         where the benchmarks create their temporary databases (default: the system temporary
                directory); it must be on a real disk, not tmpfs, for durable commits to mean anything
  --only, --commits, --no-warmup, --encrypted
                passed to the storage benchmark (strata-bench --help); --encrypted adds Strata on an
                encrypted file beside plain Strata, in the object benchmark too

Exit status: 0 when every benchmark passed its checks; 1 when one failed, printed a MISMATCH or a FAILURE
(the report is still written and says which); 2 for bad usage.
EOF
}

fail_usage() {
    echo "run.sh: $1" >&2
    usage >&2
    exit 2
}

original_arguments=("$@")
sizes="10000,100000,1000000"
repeats=""
output="$here/results/REPORT.md"
benchmarks="storage,objects,queries,notify"
quick=0
directory=""
storage_options=()
object_options=()
while [ $# -gt 0 ]; do
    case "$1" in
        --sizes) [ $# -ge 2 ] || fail_usage "--sizes needs a value"; sizes="$2"; shift 2 ;;
        --repeat) [ $# -ge 2 ] && [ -n "$2" ] || fail_usage "--repeat needs a value"; repeats="$2"; shift 2 ;;
        --output) [ $# -ge 2 ] || fail_usage "--output needs a value"; output="$2"; shift 2 ;;
        --benchmarks) [ $# -ge 2 ] || fail_usage "--benchmarks needs a value"; benchmarks="$2"; shift 2 ;;
        --dir) [ $# -ge 2 ] || fail_usage "--dir needs a value"; directory="$2"; shift 2 ;;
        --quick) quick=1; sizes="1000,10000"; repeats=1; shift ;;
        --only | --commits)
            [ $# -ge 2 ] || fail_usage "$1 needs a value"
            storage_options+=("$1" "$2"); shift 2 ;;
        --no-warmup) storage_options+=("$1"); shift ;;
        --encrypted) storage_options+=("$1"); object_options+=("$1"); shift ;;
        --help | -h) usage; exit 0 ;;
        *) fail_usage "unknown argument '$1'" ;;
    esac
done
sizes="${sizes//_/}"
case "$sizes" in '' | *[!0-9,]* | ,* | *, | *,,*) fail_usage "bad --sizes '$sizes'" ;; esac
case "$repeats" in *[!0-9]* | 0) fail_usage "--repeat needs a positive number" ;; esac
for benchmark in ${benchmarks//,/ }; do
    case "$benchmark" in storage | objects | queries | notify) ;; *) fail_usage "unknown benchmark '$benchmark'" ;; esac
done
wants() { case ",$benchmarks," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
command_line="bash Benchmarks/run.sh"
for argument in "${original_arguments[@]+"${original_arguments[@]}"}"; do command_line+=" $argument"; done

# The report, and next to it a directory for each run's raw outputs (Markdown, tab-separated results, log).
mkdir -p "$(dirname "$output")"
output="$(cd "$(dirname "$output")" && pwd)/$(basename "$output")"
raw="${output%.md}.raw"
rm -rf "$raw"
mkdir -p "$raw"
root="$(cd "$here/.." && pwd)"
raw_shown="$raw"
case "$raw" in "$root"/*) raw_shown="${raw#"$root"/}" ;; esac

# LMDB's and SQLite's headers (the C libraries LMDB's bindings and GRDB link), installed when missing.
bash "$here/install-deps.sh" || exit 1

# Build output goes to stderr so that stdout is the Markdown report alone.
# (Product by product: a plain `swift build` would also build the root package's own executables.)
for product in strata-bench strata-object-bench strata-query-bench strata-notify-bench strata-report; do
    swift build -c release --package-path "$here" --product "$product" >&2
done
bin="$(swift build -c release --package-path "$here" --show-bin-path)"

# Runs one benchmark: its stdout (Markdown) to $raw/ID.md, its results to $raw/ID.tsv, its progress lines to the
# terminal and to $raw/ID.log; records its command and exit status in $raw/parts.tsv. A failure does not stop the
# other benchmarks: the report says which failed and run.sh exits 1.
run_part() {
    local id="$1" program="$2"
    shift 2
    local shown="$program${*:+ $*}"
    echo "== $shown" >&2
    set +e
    "$bin/$program" "$@" --tsv "$raw/$id.tsv" 2>&1 >"$raw/$id.md" | tee "$raw/$id.log" >&2
    local status=${PIPESTATUS[0]}
    set -e
    printf '%s\t%s\t%s\n' "$id" "$shown" "$status" >>"$raw/parts.tsv"
    if [ "$status" != 0 ]; then echo "== $program exited with status $status" >&2; fi
}

repeat_options=()
if [ -n "$repeats" ]; then repeat_options=(--repeat "$repeats"); fi
dir_options=()
if [ -n "$directory" ]; then dir_options=(--dir "$directory"); fi
: >"$raw/parts.tsv"
started="$(date +%s)"
if wants storage; then
    # strata-bench prints this command in its header.
    export STRATA_BENCH_COMMAND="$command_line"
    run_part storage strata-bench --sizes "$sizes" \
        ${repeat_options[@]+"${repeat_options[@]}"} ${dir_options[@]+"${dir_options[@]}"} \
        ${storage_options[@]+"${storage_options[@]}"}
fi
if wants objects; then
    run_part objects strata-object-bench --sizes "$sizes" --each-size \
        ${repeat_options[@]+"${repeat_options[@]}"} ${dir_options[@]+"${dir_options[@]}"} \
        ${object_options[@]+"${object_options[@]}"}
fi
if wants queries; then
    text_options=()
    if [ "$quick" = 1 ]; then text_options=(--texts 10000); fi
    for size in ${sizes//,/ }; do
        run_part "queries-$size" strata-query-bench --count "$size" \
            ${repeat_options[@]+"${repeat_options[@]}"} ${dir_options[@]+"${dir_options[@]}"} \
            ${text_options[@]+"${text_options[@]}"}
    done
fi
if wants notify; then
    notify_options=()
    if [ "$quick" = 1 ]; then notify_options=(--commits 50 --observers 1,10 --writes 100 --duration 0.5); fi
    run_part notify strata-notify-bench --items "$sizes" \
        ${notify_options[@]+"${notify_options[@]}"} ${dir_options[@]+"${dir_options[@]}"}
fi
finished="$(date +%s)"

if [ -n "$repeats" ]; then
    runs="$repeats per cell (median shown)"
else
    runs="each benchmark's default per cell (storage engine 5, objects 3, queries 3; median shown)"
fi
{
    printf 'command\t%s\n' "$command_line"
    printf 'started\t%s\n' "$started"
    printf 'finished\t%s\n' "$finished"
    printf 'sizes\t%s\n' "$sizes"
    printf 'settings\truns: %s%s%s%s\n' "$runs" "$(wants notify && echo '; notifications: one run' || true)" \
        "$([ "$quick" = 1 ] && echo '; quick smoke run (--quick): not for publication' || true)" \
        "$([ -n "$directory" ] && echo "; databases under $directory" || true)"
    printf 'raw\t%s\n' "$raw_shown"
} >"$raw/run.tsv"

set +e
"$bin/strata-report" --raw "$raw" --output "$output"
status=$?
set -e
if [ -f "$output" ]; then cat "$output"; fi
echo "report written to $output (raw outputs in $raw)" >&2
if [ "$status" != 0 ]; then echo "*** some benchmark failed its checks: see the report ***" >&2; fi
exit "$status"
