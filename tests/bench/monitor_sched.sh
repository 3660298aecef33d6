#!/usr/bin/env bash
# tests/bench/monitor_sched.sh — what the monitor's thread-time programs
# (sched_switch + sched_waking, bpf/monitor/mon_sched.bpf.h) cost: a
# benchmark, not a test (prints figures, asserts nothing).
#
#  1. Context-switch cost seen by a workload: `perf bench sched pipe` (two
#     processes ping-ponging over pipes: 2 wake-ups + 2 switches per op),
#     usecs/op, rounds interleaving untraced / `gpuio monitor --window 0
#     --no-thread-time` / `gpuio monitor --window 0` (and, with
#     BEFORE=/path/to/old/gpuio, that build's monitor), medians.
#  2. Per-program cost: kernel.bpf_stats_enabled=1 for the run (restored
#     after), `bpftool prog show` run_time_ns / run_cnt of every mon_*
#     program while the pipe benchmark and 1M cached preads (preadloop)
#     run under the monitor (each build given).
# Knobs: GPUIO_BUILD (default build), BEFORE (an older gpuio binary),
# BENCH_RUNS (5), BENCH_LOOPS (100000 pipe round trips), BENCH_FILE.
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${GPUIO_BUILD:-$SRC/build}
GPUIO=${GPUIO:-$BUILD/gpuio}
BEFORE=${BEFORE:-}
PREAD=$BUILD/tests/preadloop
FILE=${BENCH_FILE:-/var/tmp/gpuio-bench.dat}
RUNS=${BENCH_RUNS:-5}
LOOPS=${BENCH_LOOPS:-100000}
PORT=${BENCH_PORT:-19498}
say() { echo "bench-sched: $*" >&2; }
die() { echo "bench-sched: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
command -v perf >/dev/null || die "perf not installed (linux-perf)"
command -v bpftool >/dev/null || die "bpftool not installed"
[ -x "$PREAD" ] || die "$PREAD missing (make test-progs)"
T=$(mktemp -d /tmp/gpuio-bench-sched.XXXXXX)
MON=""
STATS0=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
	[ -n "$MON" ] && kill "$MON" 2>/dev/null
	wait 2>/dev/null
	echo "$STATS0" > /proc/sys/kernel/bpf_stats_enabled
	rm -rf "$T"
}
trap cleanup EXIT
if [ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" != $((256 << 20)) ]; then
	say "writing $FILE"
	dd if=/dev/urandom of="$FILE" bs=1M count=256 status=none conv=fsync || die "cannot write $FILE"
fi
cat "$FILE" > /dev/null

source "$SRC/tests/bench/monitor_daemon.sh"
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pipe_us() { perf bench sched pipe -l "$LOOPS" 2>/dev/null | awk '/usecs\/op/ { print $1 }'; }

declare -a U=() N=() M=() B=()
for ((r = 1; r <= RUNS; r++)); do
	say "round $r/$RUNS"
	U+=("$(pipe_us)")
	start_monitor "$GPUIO" --window 0 --no-thread-time; N+=("$(pipe_us)"); stop_monitor
	start_monitor "$GPUIO" --window 0; M+=("$(pipe_us)"); stop_monitor
	if [ -n "$BEFORE" ]; then start_monitor "$BEFORE" --window 0; B+=("$(pipe_us)"); stop_monitor; fi
done
u=$(median "${U[@]}")
row() { awk -v l="$1" -v m="$2" -v u="$u" -v runs="$3" 'BEGIN { printf "| %s | %.3f | %s | %+.3f |\n", l, m, runs, m - u }'; }

# per-program bpf_stats under the pipe benchmark and 1M cached preads
prog_stats() {   # prog_stats LABEL BINARY ARGS...
	local label=$1 bin=$2
	shift 2
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	start_monitor "$bin" --window 0 "$@"
	pipe_us > /dev/null
	"$PREAD" "$FILE" 1000000 1 > /dev/null
	bpftool prog show --json > "$T/progs.json"
	stop_monitor
	echo "$STATS0" > /proc/sys/kernel/bpf_stats_enabled
	python3 - "$T/progs.json" "$label" <<'PY'
import json, sys
progs, label = json.load(open(sys.argv[1])), sys.argv[2]
for p in sorted(progs, key=lambda p: p.get("name", "")):
    n = p.get("name", "")
    if n.startswith("mon_") and p.get("run_cnt"):
        print(f"| {label} | {n} | {p['run_cnt']} | {p['run_time_ns'] / p['run_cnt']:.0f} |")
PY
}
{
	echo "# gpuio monitor: thread-time cost"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs; perf bench sched pipe -l $LOOPS (usecs per round trip: 2 wake-ups, 2 context switches), median of $RUNS interleaved runs."
	echo
	echo "| setup | usecs/op (median) | runs | added |"
	echo "|---|---:|---|---:|"
	row "untraced" "$u" "${U[*]}"
	[ -z "$BEFORE" ] || row "monitor --window 0, before thread time ($BEFORE)" "$(median "${B[@]}")" "${B[*]}"
	row "monitor --window 0 --no-thread-time" "$(median "${N[@]}")" "${N[*]}"
	row "monitor --window 0 (thread time on)" "$(median "${M[@]}")" "${M[*]}"
	echo
	echo "bpf_stats (kernel.bpf_stats_enabled=1) during the pipe benchmark + 1M cached preads: ns per run."
	echo
	echo "| build | program | runs | ns/run |"
	echo "|---|---|---:|---:|"
	[ -z "$BEFORE" ] || prog_stats before "$BEFORE"
	prog_stats "after, --no-thread-time" "$GPUIO" --no-thread-time
	prog_stats after "$GPUIO"
}
