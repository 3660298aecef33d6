#!/usr/bin/env bash
# tests/bench/cuda_uprobes.sh — what a CUDA API uprobe adds to each call.
# Workload: N calls of cuStreamSynchronize(NULL) into a stand-in libcuda.so.1
# (tests/progs/fake_libcuda.c: a few ns of work per call), one thread.
# Setups (BENCH_RUNS runs each, interleaved, median):
#   untraced            no gpuio
#   traced multi        gpuio trace -- bench: uprobe.multi links (kernel >= 6.6)
#   traced classic      same with classic perf-event uprobes (the 6.1 path)
#   bystander           an untraced process calling the same library while gpuio
#                       probes it for a traced one (uprobes are attached per
#                       traced process: the bystander should pay nothing)
# A benchmark, not a test: prints Markdown, asserts nothing.
# Knobs: GPUIO, BUILD (default build), BENCH_CUDA_CALLS (default 200000), BENCH_RUNS (3).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
case "$BUILD" in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
GPUIO=${GPUIO:-$BUILD/gpuio}
N=${BENCH_CUDA_CALLS:-200000}
RUNS=${BENCH_RUNS:-3}
BENCH=$BUILD/bench/cuda_uprobe_bench
LIB=$BUILD/tests/fake_cuda/libcuda.so.1
HOLDER=$BUILD/tests/fake_libcuda_calls
say() { echo "bench: $*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root"
REL=${BUILD#$SRC/}   # make names its targets relative to the source tree
make -C "$SRC" --no-print-directory BUILD="$REL" "$REL/bench/cuda_uprobe_bench" \
  "$REL/tests/fake_libcuda" "$REL/tests/fake_libcuda_calls" >&2 || die "cannot build the CUDA uprobe bench"
[ -x "$GPUIO" ] || die "$GPUIO missing"
T=$(mktemp -d /tmp/gpuio-cuda-bench.XXXXXX) || die "mktemp"
chmod 0755 "$T"
trap 'rm -rf "$T"' EXIT

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# wait_for FILE PATTERN: up to 10 s
wait_for() { for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

untraced() { "$BENCH" "$LIB" "$N" | awk '/ns_per_call/ {print $2}'; }

traced() {  # $1 flavour
  rm -f "$T/go" "$T/out" "$T/err"
  GPUIO_CUDA_UPROBE_MODE=$1 "$GPUIO" trace -q --no-export -o "$T/t.json" -- \
    "$BENCH" "$LIB" "$N" --wait "$T/go" >"$T/out" 2>"$T/err" &
  local g=$!
  # the library is dlopened after the start: wait for the rescan to probe it
  for _ in $(seq 100); do
    [ -s "$T/t.gpuio" ] && wait_for "$T/out" ready && break
    sleep 0.05
  done
  sleep 1.5
  touch "$T/go"
  wait "$g" || { cat "$T/err" >&2; echo n/a; return; }
  awk '/ns_per_call/ {print $2}' "$T/out"
}

bystander() {
  rm -f "$T/hgo"
  "$GPUIO" trace -q --no-export -o "$T/h.json" -- "$HOLDER" "$LIB" --wait "$T/hgo" >"$T/hout" 2>"$T/herr" &
  local g=$!
  wait_for "$T/hout" ready
  sleep 1.5        # the holder's library is probed by the next rescan
  untraced
  touch "$T/hgo"
  wait "$g" >/dev/null 2>&1
}

declare -a U M C B
for r in $(seq "$RUNS"); do
  say "round $r/$RUNS"
  U+=("$(untraced)")
  M+=("$(traced uprobe.multi)")
  C+=("$(traced uprobe)")
  B+=("$(bystander)")
done
u=$(median "${U[@]}")
row() { awk -v name="$1" -v x="$2" -v u="$u" 'BEGIN {
  if (x == "n/a" || x == "") { printf "| %s | n/a | | |\n", name; exit }
  printf "| %s | %.1f | +%.1f | %.1fx |\n", name, x, x - u, x / u }'; }
echo
echo "CUDA API uprobe cost: $N calls of cuStreamSynchronize into a stand-in libcuda.so.1, median of $RUNS"
echo
echo "| setup | ns per call | added | ratio |"
echo "|---|---|---|---|"
row "untraced" "$u"
row "traced, uprobe.multi" "$(median "${M[@]}")"
row "traced, classic uprobes" "$(median "${C[@]}")"
row "untraced bystander, library probed for another process" "$(median "${B[@]}")"
