#!/usr/bin/env bash
# tests/bench/sched.sh — cost of the scheduler layer (thread states) per
# context switch of a traced thread: `perf bench sched pipe` (two processes
# ping-ponging a pipe: every op is two switches and two wake-ups) untraced,
# traced with --no-sched, and traced with the layer on. Median of
# SCHED_BENCH_RUNS interleaved runs; the layer's events per op come from the
# trace's own count. A benchmark: nothing asserted.
#
# Output: a Markdown table on stdout. Knobs: BUILD=dir, SCHED_BENCH_RUNS (3),
# SCHED_BENCH_OPS (100000).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
GPUIO=$BUILD/gpuio
RUNS=${SCHED_BENCH_RUNS:-3}
OPS=${SCHED_BENCH_OPS:-100000}
T=$(mktemp -d /tmp/gpuio-sched-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

command -v perf >/dev/null || { echo "sched bench: n/a (perf not installed: apt-get install linux-perf)"; exit 0; }
[ "$(id -u)" -eq 0 ] || { echo "sched bench: n/a (needs root)"; exit 0; }

median() { sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : "n/a")}'; }
# ns per op of one run: perf prints "usecs/op"
ns_op() { awk '/usecs\/op/ { printf "%.0f\n", $1 * 1000 }' "$1"; }

declare -A V
for r in $(seq "$RUNS"); do
  for setup in untraced nosched sched; do
    case $setup in
      untraced) perf bench sched pipe -l "$OPS" >"$T/out" 2>&1 ;;
      nosched)  "$GPUIO" trace -q --no-sched --no-export --capture "$T/n.gpuio" -- \
                  perf bench sched pipe -l "$OPS" >"$T/out" 2>"$T/err" ;;
      sched)    "$GPUIO" trace --no-export --capture "$T/s.gpuio" -- \
                  perf bench sched pipe -l "$OPS" >"$T/out" 2>"$T/err"
                grep -oE '[0-9]+ sched\)' "$T/err" | cut -d' ' -f1 >>"$T/events"
                grep -oE '[0-9]+ dropped' "$T/err" | cut -d' ' -f1 >>"$T/dropped" ;;
    esac
    V[$setup]="${V[$setup]:-} $(ns_op "$T/out")"
    echo "sched bench: run $r $setup $(ns_op "$T/out") ns/op" >&2
  done
done
u=$(printf '%s\n' ${V[untraced]} | median)
n=$(printf '%s\n' ${V[nosched]} | median)
s=$(printf '%s\n' ${V[sched]} | median)
ev=$(median <"$T/events")
dr=$(sort -n "$T/dropped" | tail -n1)
per_op=$(awk -v e="$ev" -v o="$OPS" 'BEGIN { printf "%.2f", e / o }')
echo "perf bench sched pipe, $OPS ops (2 switches + 2 wake-ups each), median of $RUNS interleaved runs:"
echo
echo "| setup | ns/op | added over untraced |"
echo "|---|---:|---:|"
echo "| untraced | $u | — |"
echo "| gpuio trace --no-sched (VFS, proc, block layers only) | $n | $((n - u)) |"
echo "| gpuio trace (scheduler layer on) | $s | $((s - u)) |"
echo
awk -v s="$s" -v n="$n" -v e="$ev" -v o="$OPS" -v p="$per_op" -v d="$dr" 'BEGIN {
  printf "The scheduler layer: %d events (%s per op; %s dropped at most), **%.0f ns per event** " \
         "((sched - no-sched) / events per op).\n", e, p, d, (s - n) / (e / o) }'
