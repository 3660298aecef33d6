#!/usr/bin/env bash
# tests/bench/monitor_run.sh — `make bench`, monitor part: what the node
# daemon in aggregation-only mode (--window 0) adds to each I/O syscall, next
# to the empty-program floor (build/bench_empty.bpf.o via bench/empty_run,
# the same method as tests/bench/run.sh), and the CPU it costs at 100k I/O/s.
# A benchmark, not a test: it prints figures and the target, asserts nothing.
#
# Workload: random 4 KiB pread()s of a cached 256 MiB file (preadloop), one
# thread. Rounds interleave untraced / empty / monitor so drift hits all;
# medians of BENCH_RUNS. The monitor is node-wide (every process), the empty
# program filters one TGID: the monitor's figure includes its work for the
# workload's own calls, which is all the workload pays.
# Where the monitor's added ns go (6.18 VM, stats off, medians of 11 runs,
# empty floor +61): tp_btf dispatch + one task storage lookup per edge +81,
# + fd walk, cgroup id, per-thread adds +101, + the two bpf_ktime_get_ns()
# for the latency histogram +154 (the version with two per-CPU LRU hash
# lookups per call: +176). The clock alone is ~0.9x the floor's added cost.
# Last line: what the daemon's CUDA call counter adds to a CUDA driver call
# (cuda_uprobe_bench: cuStreamSynchronize into the stand-in libcuda.so.1,
# uprobe.multi), untraced runs vs runs once the daemon probed the library.
# Knobs: GPUIO_BUILD (default build), BENCH_FILE, BENCH_CALLS (1000000),
# BENCH_RUNS (5), BENCH_RATE (100000), BENCH_RATE_SECS (10),
# BENCH_CUDA_CALLS (200000).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${GPUIO_BUILD:-$SRC/build}
GPUIO=${GPUIO:-$BUILD/gpuio}
PREAD=$BUILD/tests/preadloop
PACED=$BUILD/tests/monitor_paced
EMPTY_RUN=$BUILD/bench/empty_run
FILE=${BENCH_FILE:-/var/tmp/gpuio-bench.dat}
CALLS=${BENCH_CALLS:-1000000}
RUNS=${BENCH_RUNS:-5}
RATE=${BENCH_RATE:-100000}
RATE_SECS=${BENCH_RATE_SECS:-10}
PORT=${BENCH_PORT:-19499}
OUT=$BUILD/bench/monitor.md
say() { echo "bench-monitor: $*" >&2; }
die() { echo "bench-monitor: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
CUDA_BENCH=$BUILD/bench/cuda_uprobe_bench
CUDA_LIB=$BUILD/tests/fake_cuda/libcuda.so.1
CUDA_N=${BENCH_CUDA_CALLS:-200000}
make -C "$SRC" --no-print-directory BUILD="$BUILD" all test-progs "$EMPTY_RUN" "$CUDA_BENCH" >&2 || die "build failed"
T=$(mktemp -d /tmp/gpuio-bench-mon.XXXXXX)
MON=""
cleanup() { [ -n "$MON" ] && kill "$MON" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
if [ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" != $((256 << 20)) ]; then
	say "writing $FILE"
	dd if=/dev/urandom of="$FILE" bs=1M count=256 status=none conv=fsync || die "cannot write $FILE"
fi
cat "$FILE" > /dev/null
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ns() { grep -oE 'ns_per_call=[0-9]+' | cut -d= -f2; }

source "$SRC/tests/bench/monitor_daemon.sh"
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

declare -a U=() E=() M=() L=()
for ((r = 1; r <= RUNS; r++)); do
	say "round $r/$RUNS"
	U+=("$("$PREAD" "$FILE" "$CALLS" "$r" | ns)")
	E+=("$("$EMPTY_RUN" -- "$PREAD" "$FILE" "$CALLS" "$r" | ns)")
	start_monitor "$GPUIO" --window 0
	M+=("$("$PREAD" "$FILE" "$CALLS" "$r" | ns)")
	stop_monitor
	start_monitor "$GPUIO" --window 0 --no-latency
	L+=("$("$PREAD" "$FILE" "$CALLS" "$r" | ns)")
	stop_monitor
done
u=$(median "${U[@]}"); e=$(median "${E[@]}"); m=$(median "${M[@]}"); l=$(median "${L[@]}")
ea=$((e - u)); ma=$((m - u)); la=$((l - u))
ratio=$(awk -v a="$ma" -v b="$ea" 'BEGIN { if (b <= 0) print "n/a"; else printf "%.2f", a / b }')
lratio=$(awk -v a="$la" -v b="$ea" 'BEGIN { if (b <= 0) print "n/a"; else printf "%.2f", a / b }')

# CPU at RATE I/O/s: the daemon's own process (user+sys) and the in-kernel
# cost the workload pays (added ns x rate), aggregation-only and with the recorder.
hz=$(getconf CLK_TCK)
cpu_row() {   # cpu_row LABEL MONITOR-ARGS...
	local label=$1 t0 t1 res
	shift
	start_monitor "$GPUIO" "$@"
	sleep 1
	t0=$(cpu_ticks "$MON")
	res=$("$PACED" "$FILE" "$RATE" "$RATE_SECS")
	t1=$(cpu_ticks "$MON")
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$MON/status")
	stop_monitor
	awk -v l="$label" -v t=$((t1 - t0)) -v hz="$hz" -v s="$RATE_SECS" -v res="$res" -v add="$ma" -v rate="$RATE" -v rss="$rss" \
		'BEGIN { printf "| %s | %.2f %% | %.1f %% | %d MiB | %s |\n", l, 100 * t / hz / s, add * rate / 1e7, rss / 1024, res }'
}
# What a counted CUDA call costs: untraced runs, then runs while the daemon
# has the library probed (a holder process maps it; the scan is every 10 s).
cuda_row() {
	local cu=() cm=() holder
	for ((r = 1; r <= RUNS; r++)); do
		cu+=("$("$CUDA_BENCH" "$CUDA_LIB" "$CUDA_N" | awk '/ns_per_call/ { printf "%.0f", $2 }')")
	done
	start_monitor "$GPUIO" --window 0 --cuda-uprobes      # opt-in since CUDA counting became off by default
	"$CUDA_BENCH" "$CUDA_LIB" 1 --wait "$T/never" > /dev/null &
	holder=$!
	for _ in $(seq 300); do grep -q 'cuda uprobes: .*libcuda.so.1' "$T/mon.log" && break; sleep 0.1; done
	for ((r = 1; r <= RUNS; r++)); do
		cm+=("$("$CUDA_BENCH" "$CUDA_LIB" "$CUDA_N" | awk '/ns_per_call/ { printf "%.0f", $2 }')")
	done
	kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
	stop_monitor
	local a b
	a=$(median "${cu[@]}"); b=$(median "${cm[@]}")
	echo "| CUDA driver call (cuda_uprobe_bench, $CUDA_N calls) | untraced $a ns (${cu[*]}) | counted by the monitor $b ns (${cm[*]}) | added $((b - a)) ns per counted call |"
	echo "|---|---:|---:|---:|"
}
{
	echo "# gpuio monitor bench"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs; $CALLS random 4 KiB preads of a cached file, median of $RUNS interleaved runs."
	echo
	echo "| setup | ns/call (median) | runs | added ns/call |"
	echo "|---|---:|---|---:|"
	echo "| untraced | $u | ${U[*]} | — |"
	echo "| empty BPF program (tp_btf sys_enter+sys_exit, TGID filter) | $e | ${E[*]} | +$ea |"
	echo "| gpuio monitor --window 0 (aggregation only, whole node) | $m | ${M[*]} | +$ma |"
	echo "| gpuio monitor --window 0 --no-latency (no latency histograms) | $l | ${L[*]} | +$la |"
	echo
	echo "| ratio | value | target (#25) |"
	echo "|---|---:|---|"
	echo "| monitor added / empty added | $ratio | ≤ 1.5, or the reason and an option that trades the histograms for it |"
	echo "| monitor --no-latency added / empty added | $lratio | ≤ 1.5 |"
	echo
	echo "CPU at $RATE preads/s for ${RATE_SECS}s (monitor_paced). Daemon: its own process, user+sys, % of one CPU;"
	echo "in-kernel: the BPF programs' cost the workload pays, estimated as added ns/call x rate."
	echo
	echo "| monitor | daemon CPU | in-kernel CPU (est.) | daemon RSS | workload |"
	echo "|---|---:|---:|---:|---|"
	cpu_row "--window 0 (aggregation only)" --window 0
	cpu_row "--window 60s (aggregation + flight recorder)" --window 60s
	echo
	cuda_row
} > "$T/out.md"
mkdir -p "$(dirname "$OUT")"
cp "$T/out.md" "$OUT"
cat "$OUT"
say "results in ${OUT#"$SRC"/}"
