#!/usr/bin/env bash
# tests/bench/run.sh — `make bench`: what gpuio costs the traced program, next
# to the floor (an empty BPF program at the same hooks) and to perf, bpftrace
# and strace; then what the collector sustains.  A benchmark, not a test:
# nothing is asserted; a tool that is missing or broken becomes "n/a (why)".
#
# Workload (DESIGN.md §8): random 4 KiB pread()s of a 256 MiB file that is in
# the page cache, one thread (build/tests/preadloop).  Each setup runs
# BENCH_RUNS times, rounds interleaved (untraced, empty, gpuio, … , untraced,
# …) so slow drift hits every setup alike; the median is reported.
#
# Output: Markdown on stdout and in build/bench/results.md; progress on stderr.
# Knobs (environment):
#   GPUIO=path            gpuio binary (default build/gpuio)
#   BENCH_FILE=path       the 256 MiB data file (default /var/tmp/gpuio-bench.dat;
#                         must be on a real fs, not tmpfs; kept between runs)
#   BENCH_CALLS=N         preads per run (default 1000000)
#   BENCH_STRACE_CALLS=N  preads per strace run (default 100000: strace costs
#                         ~100 µs a call; ns/call is per call either way)
#   BENCH_RUNS=N          runs per setup, median reported (default 3)
#   BENCH_KEEP=1          keep the scratch directory
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$SRC/build
GPUIO=${GPUIO:-$BUILD/gpuio}
PREAD=$BUILD/tests/preadloop
EMPTY_RUN=$BUILD/bench/empty_run
FILE=${BENCH_FILE:-/var/tmp/gpuio-bench.dat}
FILE_MIB=256
CALLS=${BENCH_CALLS:-1000000}
STRACE_CALLS=${BENCH_STRACE_CALLS:-100000}
RUNS=${BENCH_RUNS:-3}
OUT=$BUILD/bench/results.md

say() { echo "bench: $*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (BPF, perf, bpftrace): sudo make bench"

say "building bench programs"
make -C "$SRC" --no-print-directory bench-progs >&2 || die "cannot build bench programs"

T=$(mktemp -d /var/tmp/gpuio-bench.XXXXXX) || die "mktemp failed"
# gpuio runs a launched command as $SUDO_USER and gives it the output files.
[ -n "${SUDO_USER:-}" ] && chown "$SUDO_USER" "$T" 2>/dev/null
chmod 0755 "$T"
cleanup() { if [ "${BENCH_KEEP:-0}" = 1 ]; then say "scratch kept in $T"; else rm -rf "$T"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
BENCH_T0=$(date +%s)

now_ns() { date +%s%N; }
# Float helpers (awk): fmt N, div A B [digits], sub A B.
div() { awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.*f\n", d, a / b }'; }
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) exit; if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
si() { awk -v x="$1" 'BEGIN { if (x >= 1e9) printf "%.2f G", x / 1e9; else if (x >= 1e6) printf "%.2f M", x / 1e6; else if (x >= 1e3) printf "%.1f k", x / 1e3; else printf "%d ", x }'; }
# last_line FILE: its last non-blank line, for an "n/a (why)".
last_line() {
	local l
	l=$(grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n 1 | cut -c1-160)
	echo "${l:-no message}"
}

# ---------------------------------------------------------------- data file
mkdir -p "$(dirname "$FILE")"
fstype=$(findmnt -n -o FSTYPE -T "$(dirname "$FILE")" 2>/dev/null || stat -f -c %T "$(dirname "$FILE")")
case $fstype in tmpfs|ramfs) die "$FILE is on $fstype; set BENCH_FILE to a path on a disk-backed fs" ;; esac
want_bytes=$((FILE_MIB << 20))
if [ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" != "$want_bytes" ]; then
	say "writing $FILE ($FILE_MIB MiB, $fstype)"
	if ! dd if=/dev/urandom of="$FILE.tmp" bs=1M count=$FILE_MIB status=none conv=fsync ||
	   ! mv "$FILE.tmp" "$FILE"; then
		die "cannot write $FILE"
	fi
fi
chmod 0644 "$FILE"
say "warming $FILE into the page cache"
cat "$FILE" > /dev/null
"$PREAD" "$FILE" 200000 99 > /dev/null || die "preadloop does not run"

# perf and bpftrace's tracepoint probes need tracefs; tp_btf (gpuio, empty) does not.
TRACEFS_NOTE=""
if ! mountpoint -q /sys/kernel/tracing 2>/dev/null; then
	if mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
		TRACEFS_NOTE="tracefs was not mounted; the bench mounted it at /sys/kernel/tracing (left mounted)."
		say "mounted tracefs at /sys/kernel/tracing (perf and bpftrace need it)"
	else
		TRACEFS_NOTE="tracefs is not mounted and could not be mounted: perf and bpftrace rows may fail."
	fi
fi

# ---------------------------------------------------------------- setups
SETUPS=(untraced empty gpuio nobatch perf bpftrace strace)
declare -A LABEL=(
	[untraced]="untraced"
	[empty]="empty BPF program (tp_btf sys_enter+sys_exit, TGID filter only)"
	[gpuio]="gpuio trace --no-export"
	[nobatch]="gpuio trace --no-export --no-batch (one ring-buffer record per call)"
	[perf]="perf record -m 16M -e raw_syscalls:sys_enter,sys_exit"
	[bpftrace]="bpftrace, latency histogram of pread64 only"
	[strace]="strace -f -e trace=pread64 -o /dev/null"
)
declare -A NA=() VALS=() NOTE=()

BT_PROG='tracepoint:syscalls:sys_enter_pread64 /pid == cpid/ { @start[tid] = nsecs; }
tracepoint:syscalls:sys_exit_pread64 /pid == cpid && @start[tid]/ { @ns = hist(nsecs - @start[tid]); delete(@start[tid]); }
END { clear(@start); }'

command -v perf > /dev/null || NA[perf]="perf not installed (linux-perf)"
command -v bpftrace > /dev/null || NA[bpftrace]="bpftrace not installed"
command -v strace > /dev/null || NA[strace]="strace not installed"
[ -x "$EMPTY_RUN" ] || NA[empty]="$EMPTY_RUN not built"

# gpuio: usable only if a trivial trace works and prints its summary line.
if [ ! -x "$GPUIO" ]; then
	NA[gpuio]="$GPUIO not built"
elif "$GPUIO" trace --no-export -q -o "$T/probe.json" -- true > /dev/null 2> "$T/probe.err"; rc=$?; [ $rc -ne 0 ]; then
	NA[gpuio]="\`gpuio trace -- true\` exited $rc: $(last_line "$T/probe.err")"
elif ! grep -qE '[0-9]+ events' "$T/probe.err"; then
	NA[gpuio]="no summary line from trace: $(last_line "$T/probe.err")"
fi
[ -n "${NA[gpuio]:-}" ] && NA[nobatch]=${NA[gpuio]}
rm -f "$T"/probe.*

# Summary line: "gpuio: ... 1000123 events (...), 0 dropped ...".
sum_events() { grep -oE '[0-9]+ events' "$1" | tail -n 1 | cut -d' ' -f1; }
sum_dropped() { grep -oE '[0-9]+ dropped' "$1" | tail -n 1 | cut -d' ' -f1; }

# run_one SETUP COUNT SEED -> prints ns_per_call, or nothing on failure.
run_one() {
	local s=$1 n=$2 seed=$3 log="$T/$1.log"
	local P=("$PREAD" "$FILE" "$n" "$seed")
	: > "$log"
	case $s in
	untraced) "${P[@]}" ;;
	empty)    "$EMPTY_RUN" -- "${P[@]}" ;;
	gpuio)    rm -f "$T/pread.gpuio"
	          "$GPUIO" trace --no-export -q -o "$T/pread.json" -- "${P[@]}"
	          rm -f "$T/pread.gpuio" ;;
	nobatch)  rm -f "$T/pread.gpuio"
	          "$GPUIO" trace --no-export --no-batch -q -o "$T/pread.json" -- "${P[@]}"
	          rm -f "$T/pread.gpuio" ;;
	perf)     perf record -m 16M -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit \
	               -o "$T/perf.data" -- "${P[@]}"
	          rm -f "$T/perf.data" ;;
	bpftrace) bpftrace -e "$BT_PROG" -c "${P[*]}" ;;
	strace)   strace -f -e trace=pread64 -o /dev/null "${P[@]}" ;;
	esac > "$T/$s.out" 2> "$log"
	grep -ohE 'ns_per_call=[0-9]+' "$T/$s.out" "$log" | head -n 1 | cut -d= -f2
}

declare -A GPUIO_EV=() GPUIO_DROP=() PERF_SAMPLES=()
for ((r = 1; r <= RUNS; r++)); do
	for s in "${SETUPS[@]}"; do
		[ -n "${NA[$s]:-}" ] && continue
		n=$CALLS
		[ "$s" = strace ] && n=$STRACE_CALLS
		say "round $r/$RUNS: $s ($n preads)"
		v=$(run_one "$s" "$n" "$r")
		if [ -z "$v" ]; then
			NA[$s]="run failed: $(last_line "$T/$s.log")"
			say "$s: ${NA[$s]}"
			continue
		fi
		VALS[$s]="${VALS[$s]:-} $v"
		case $s in
		gpuio) GPUIO_EV[$r]=$(sum_events "$T/gpuio.log"); GPUIO_DROP[$r]=$(sum_dropped "$T/gpuio.log") ;;
		perf)  PERF_SAMPLES[$r]=$(grep -oE '\([0-9]+ samples\)' "$T/perf.log" | tr -dc 0-9) ;;
		esac
	done
done

declare -A MED=() ADDED=()
for s in "${SETUPS[@]}"; do
	[ -n "${NA[$s]:-}" ] && continue
	# shellcheck disable=SC2086
	MED[$s]=$(median ${VALS[$s]})
done
[ -n "${MED[untraced]:-}" ] || die "the untraced run failed: $(last_line "$T/untraced.log")"
for s in "${SETUPS[@]}"; do
	[ -n "${MED[$s]:-}" ] && ADDED[$s]=$((MED[$s] - MED[untraced]))
done

[ -n "${GPUIO_EV[*]:-}" ] && NOTE[gpuio]="events per run: ${GPUIO_EV[*]}; dropped: ${GPUIO_DROP[*]:-?}"
[ -n "${PERF_SAMPLES[*]:-}" ] && NOTE[perf]="samples written per run: ${PERF_SAMPLES[*]} (≥ $((2 * CALLS)) unless perf lost some)"
NOTE[strace]="$STRACE_CALLS preads per run"

# ratio A B: ADDED[A] / ADDED[B], or n/a with the reason.
ratio() {
	local a=${ADDED[$1]:-} b=${ADDED[$2]:-}
	if [ -z "$a" ]; then echo "n/a ($1: ${NA[$1]:-no data})"
	elif [ -z "$b" ]; then echo "n/a ($2: ${NA[$2]:-no data})"
	elif [ "$b" -le 0 ]; then echo "n/a ($2 added ${b} ns: within noise)"
	else div "$a" "$b"; fi
}

# ---------------------------------------------------------------- gpuio-only figures
declare -A G=()
G_NA=""
if [ -n "${NA[gpuio]:-}" ]; then
	G_NA=${NA[gpuio]}
else
	# Throughput: the highest event rate preadloop makes (1-byte preads),
	# 1 thread then 2 threads on this 2-core box (the collector shares them).
	for th in 1 2; do
		per=$((3000000 / th))
		say "gpuio throughput: preadloop --threads $th --size 1, $((per * th)) preads"
		rm -f "$T/tp.gpuio"
		"$GPUIO" trace --no-export -q -o "$T/tp.json" -- "$PREAD" --threads "$th" --size 1 "$FILE" "$per" 7 \
			> "$T/tp.out" 2> "$T/tp.err"
		ns=$(grep -oE 'ns_per_call=[0-9]+' "$T/tp.out" | cut -d= -f2)
		calls=$(grep -oE 'calls=[0-9]+' "$T/tp.out" | cut -d= -f2)
		ev=$(sum_events "$T/tp.err"); dr=$(sum_dropped "$T/tp.err")
		if [ -n "$ns" ] && [ -n "$ev" ]; then
			# Rate over the workload's own timed loop (ns/call x calls).
			G[tp$th]="$(si "$(div "$ev" "$(div $((ns * calls)) 1000000000 6)" 0)")events/s, ${dr:-?} dropped ($ev events; workload $ns ns/call)"
		else
			G[tp$th]="n/a ($(last_line "$T/tp.err"))"
		fi
		rm -f "$T/tp.gpuio"
	done

	# Capture size and export rate: the 1M-pread capture from a fresh run.
	say "gpuio capture + convert: $CALLS preads"
	rm -f "$T/cap.gpuio"
	"$GPUIO" trace --no-export -q -o "$T/cap.json" -- "$PREAD" "$FILE" "$CALLS" 11 > /dev/null 2> "$T/cap.err"
	CAP=$T/cap.gpuio
	if [ -s "$CAP" ]; then
		recs=""; drops=""
		if "$GPUIO" info "$CAP" --json > "$T/info.json" 2> "$T/info.err" && [ -s "$T/info.json" ]; then
			read -r recs drops < <(python3 - "$T/info.json" <<'EOF' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
def total(v):
    if isinstance(v, bool): return 0
    if isinstance(v, (int, float)): return int(v)
    if isinstance(v, dict): return sum(total(x) for x in v.values())
    if isinstance(v, list): return sum(total(x) for x in v)
    return 0
def find(o, k):
    if isinstance(o, dict):
        if k in o: return o[k]
        for v in o.values():
            r = find(v, k)
            if r is not None: return r
    return None
r, dr = find(d, "records"), find(d, "dropped")
print(total(r) if r is not None else "", total(dr) if dr is not None else "")
EOF
			)
			G[info]="ok"
		else
			G[info]="n/a ($([ -s "$T/info.err" ] && last_line "$T/info.err" || echo "printed nothing"))"
		fi
		[ -n "$recs" ] || recs=$(sum_events "$T/cap.err")
		[ -n "$drops" ] || drops=$(sum_dropped "$T/cap.err")
		size=$(stat -c %s "$CAP")
		if [ -n "$recs" ] && [ "$recs" -gt 0 ]; then
			G[bpe]="$(div "$size" "$recs" 1) bytes/event ($size bytes, $recs events, ${drops:-?} dropped)"
		else
			G[bpe]="n/a (no event count for the capture)"
		fi
		t0=$(now_ns)
		if "$GPUIO" convert "$CAP" -o "$T/conv.json" > /dev/null 2> "$T/conv.err" && [ -s "$T/conv.json" ]; then
			t1=$(now_ns)
			secs=$(div $((t1 - t0)) 1000000000 3)
			jsz=$(stat -c %s "$T/conv.json")
			if [ -n "$recs" ] && [ "$recs" -gt 0 ]; then
				G[conv]="$(si "$(div "$recs" "$secs" 0)")events/s ($recs events in $secs s; JSON $(div "$jsz" "$recs" 1) bytes/event)"
			else
				G[conv]="$secs s for the capture (event count unknown)"
			fi
		else
			G[conv]="n/a (convert: $([ -s "$T/conv.err" ] && last_line "$T/conv.err" || echo "no output written"))"
		fi
		rm -f "$T/conv.json"
	else
		G[bpe]="n/a (no capture written: $(last_line "$T/cap.err"))"
		G[conv]="n/a (no capture)"
	fi
	rm -f "$CAP"

	# Collector peak RSS for a 1M- and a 10M-event trace (same workload shape).
	# /usr/bin/time reports max(gpuio, reaped children): preadloop is ~1 MB.
	if [ -x /usr/bin/time ]; then
		for n in 1000000 10000000; do
			say "gpuio peak RSS: $n preads (2 threads, 1-byte reads)"
			rm -f "$T/rss.gpuio"
			/usr/bin/time -v -o "$T/rss.time" "$GPUIO" trace --no-export -q -o "$T/rss.json" -- \
				"$PREAD" --threads 2 --size 1 "$FILE" $((n / 2)) 13 > /dev/null 2> "$T/rss.err"
			kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$T/rss.time")
			ev=$(sum_events "$T/rss.err"); dr=$(sum_dropped "$T/rss.err")
			if [ -n "$kb" ] && [ -n "$ev" ]; then
				G[rss$n]=$kb
				G[rssn$n]="$(div "$kb" 1024 1) MiB ($ev events, ${dr:-?} dropped)"
			else
				G[rssn$n]="n/a ($(last_line "$T/rss.err"))"
			fi
			rm -f "$T/rss.gpuio"
		done
		if [ -n "${G[rss1000000]:-}" ] && [ -n "${G[rss10000000]:-}" ]; then
			g=$(div "${G[rss10000000]}" "${G[rss1000000]}" 2)
			G[rssv]="10M/1M = ${g}x ($(awk -v g="$g" 'BEGIN { print (g <= 1.10 ? "flat" : "GROWS with trace length") }'))"
		fi
	else
		G[rssn1000000]="n/a (/usr/bin/time not installed: package time)"
		G[rssn10000000]=${G[rssn1000000]}
	fi
fi

# ---------------------------------------------------------------- report
row_val() { [ -n "${MED[$1]:-}" ] && echo "${MED[$1]}" || echo "n/a (${NA[$1]:-no data})"; }
{
	echo "# gpuio bench"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs," \
		"gpuio $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$SRC" diff --quiet HEAD 2>/dev/null || echo '+dirty')" \
		"(binary ${GPUIO#"$SRC"/})"
	echo
	echo "Workload: $CALLS random 4 KiB pread()s of a cached ${FILE_MIB} MiB file on $fstype," \
		"one thread (build/tests/preadloop). ns/call: median of $RUNS interleaved runs;" \
		"added: over untraced. Timing is noisy on a VM: compare ratios."
	echo
	echo "| setup | ns/call (median) | runs | added ns/call | notes |"
	echo "|---|---:|---|---:|---|"
	for s in "${SETUPS[@]}"; do
		a="—"
		[ "$s" != untraced ] && a=${ADDED[$s]:-—}
		[ "$s" != untraced ] && [ -n "${ADDED[$s]:-}" ] && a="+$a"
		runs=${VALS[$s]:-}
		printf '| %s | %s | %s | %s | %s |\n' "${LABEL[$s]}" "$(row_val "$s")" \
			"${runs# }" "$a" "${NOTE[$s]:-}"
	done
	echo
	echo "| ratio of added cost | value | target |"
	echo "|---|---:|---|"
	echo "| gpuio / empty BPF | $(ratio gpuio empty) | ≤ 2.0 |"
	echo "| gpuio --no-batch / empty BPF | $(ratio nobatch empty) | — |"
	echo "| perf / gpuio | $(ratio perf gpuio) | ≥ 4.0 (#25) |"
	echo "| perf / gpuio --no-batch | $(ratio perf nobatch) | — |"
	echo "| bpftrace / gpuio | $(ratio bpftrace gpuio) | — |"
	echo "| strace / gpuio | $(ratio strace gpuio) | — |"
	echo
	echo "| gpuio collector | value |"
	echo "|---|---|"
	if [ -n "$G_NA" ]; then
		echo "| all gpuio figures | n/a ($G_NA) |"
	else
		echo "| events/s sustained, preadloop 1 thread, 1-byte reads | ${G[tp1]} |"
		echo "| events/s sustained, preadloop 2 threads, 1-byte reads | ${G[tp2]} |"
		echo "| capture size per event ($CALLS-pread trace) | ${G[bpe]} |"
		echo "| export to JSON (gpuio convert) | ${G[conv]} |"
		echo "| peak RSS, 1M-event trace (--no-export) | ${G[rssn1000000]} |"
		echo "| peak RSS, 10M-event trace (--no-export) | ${G[rssn10000000]} |"
		[ -n "${G[rssv]:-}" ] && echo "| peak RSS growth | ${G[rssv]} |"
		[ "${G[info]:-ok}" != ok ] && echo "| gpuio info --json | ${G[info]} (counts from the summary line) |"
	fi
	echo
	[ -n "$TRACEFS_NOTE" ] && echo "Note: $TRACEFS_NOTE" && echo
	echo "Bench took $(( $(date +%s) - BENCH_T0 )) s."
} > "$T/results.md"

# ================================================================ export formats
# (issue 6) Export rate and size of the four output formats on the same
# captures: a real trace made here (preadloop, BENCH_EXPORT_CALLS preads) and a
# synthetic one with block requests and flows (gen_capture big). Rate =
# calls / wall time of `gpuio convert` (median of BENCH_RUNS, fsync of the
# output included); bytes per call of the file written. Then the peak RSS of
# converting BENCH_BIG_CALLS (default 20,000,000) calls against 200,000: flat
# memory. Targets: protobuf >= 3x faster to write than JSON, >= 2x smaller.
# Knobs: BENCH_EXPORT_CALLS (default 1000000), BENCH_BIG_CALLS.
EXPORT_CALLS=${BENCH_EXPORT_CALLS:-1000000}
BIG_CALLS=${BENCH_BIG_CALLS:-20000000}
GEN=$BUILD/tests/gen_capture
declare -A XR=() XS=() XN=()
X_NA=""
make -C "$SRC" --no-print-directory "$GEN" >&2 2>/dev/null || X_NA="cannot build gen_capture"

# export_row CAPTURE FMT CALLS -> sets XR[key] (calls/s) and XS[key] (bytes/call)
export_row() {
	local cap=$1 fmt=$2 calls=$3 key="$4.$2" times=() r t0 t1
	for ((r = 1; r <= RUNS; r++)); do
		rm -f "$T/x.$fmt"
		t0=$(now_ns)
		if ! "$GPUIO" convert -q "$cap" -o "$T/x.$fmt" 2> "$T/x.err"; then
			XR[$key]="n/a ($(last_line "$T/x.err"))"
			return
		fi
		t1=$(now_ns)
		times+=($((t1 - t0)))
	done
	t=$(median "${times[@]}")
	XN[$key]=$t
	XR[$key]=$(div "$calls" "$(div "$t" 1000000000 6)" 0)
	XS[$key]=$(div "$(stat -c %s "$T/x.$fmt")" "$calls" 1)
	rm -f "$T/x.$fmt"
}

if [ -n "${NA[gpuio]:-}" ]; then
	X_NA=${NA[gpuio]}
elif [ -z "$X_NA" ]; then
	say "export formats: tracing $EXPORT_CALLS preads for a real capture"
	rm -f "$T/real.gpuio"
	"$GPUIO" trace --no-export -q -o "$T/real.json" -- "$PREAD" "$FILE" "$EXPORT_CALLS" 19 \
		> /dev/null 2> "$T/real.err" || X_NA="trace failed: $(last_line "$T/real.err")"
	"$GEN" big "$T/syn.gpuio" "$EXPORT_CALLS" > /dev/null 2> "$T/syn.err" || X_NA="gen_capture failed"
fi
if [ -z "$X_NA" ]; then
	# calls in each capture, from the export's own summary line
	"$GPUIO" convert "$T/real.gpuio" -o "$T/count.json" 2> "$T/count.err" > /dev/null
	real_calls=$(grep -oE '\(([0-9]+) vfs, ([0-9]+) block' "$T/count.err" | tr -dc '0-9 ' | awk '{ print $1 + $2 }')
	"$GPUIO" convert "$T/syn.gpuio" -o "$T/count.json" 2> "$T/count.err" > /dev/null
	syn_calls=$(grep -oE '\(([0-9]+) vfs, ([0-9]+) block' "$T/count.err" | tr -dc '0-9 ' | awk '{ print $1 + $2 }')
	rm -f "$T/count.json"
	for fmt in json json.gz pftrace pftrace.gz; do
		say "export formats: $fmt"
		export_row "$T/real.gpuio" "$fmt" "$real_calls" real
		export_row "$T/syn.gpuio" "$fmt" "$syn_calls" syn
	done
	rm -f "$T/real.gpuio" "$T/syn.gpuio"
	# peak RSS, BIG_CALLS against 200k (no block requests: calls only)
	if [ -x /usr/bin/time ]; then
		for n in 200000 "$BIG_CALLS"; do
			say "export memory: gen_capture big $n, convert to .pftrace and .json"
			"$GEN" big "$T/mem.gpuio" "$n" 0 > /dev/null
			for fmt in pftrace json; do
				/usr/bin/time -f "%e %M" -o "$T/mem.time" "$GPUIO" convert -q "$T/mem.gpuio" \
					-o "$T/mem.$fmt" 2> /dev/null
				read -r secs kb < "$T/mem.time"
				XR[mem.$fmt.$n]="$(div "$kb" 1024 1) MiB ($secs s, $(si "$(div "$n" "$secs" 0)")calls/s)"
				XS[mem.$fmt.$n]=$kb
				rm -f "$T/mem.$fmt"
			done
			rm -f "$T/mem.gpuio"
		done
	fi
fi
{
	echo
	echo "## Export formats"
	echo
	if [ -n "$X_NA" ]; then
		echo "n/a ($X_NA)"
	else
		echo "Same capture, four formats: calls/s of \`gpuio convert\` (median of $RUNS, wall, fsync included) and bytes per call written."
		echo "real: $real_calls calls traced from preadloop; synthetic: gen_capture big, $syn_calls calls with block requests and flows."
		echo
		echo "| format | real: calls/s | real: bytes/call | synthetic: calls/s | synthetic: bytes/call |"
		echo "|---|---:|---:|---:|---:|"
		for fmt in json json.gz pftrace pftrace.gz; do
			printf '| %s | %s | %s | %s | %s |\n' "$fmt" "$(si "${XR[real.$fmt]:-0}")" "${XS[real.$fmt]:-n/a}" \
				"$(si "${XR[syn.$fmt]:-0}")" "${XS[syn.$fmt]:-n/a}"
		done
		echo
		echo "| protobuf vs JSON | real | synthetic | target |"
		echo "|---|---:|---:|---|"
		echo "| write speed (pftrace / json) | $(div "${XN[real.json]:-0}" "${XN[real.pftrace]:-0}")x | $(div "${XN[syn.json]:-0}" "${XN[syn.pftrace]:-0}")x | >= 3x |"
		echo "| size (json / pftrace) | $(div "${XS[real.json]:-0}" "${XS[real.pftrace]:-0}")x | $(div "${XS[syn.json]:-0}" "${XS[syn.pftrace]:-0}")x | >= 2x |"
		echo "| gzip speed (pftrace.gz / json.gz) | $(div "${XN[real.json.gz]:-0}" "${XN[real.pftrace.gz]:-0}")x | $(div "${XN[syn.json.gz]:-0}" "${XN[syn.pftrace.gz]:-0}")x | — |"
		echo "| gzip size (json.gz / pftrace.gz) | $(div "${XS[real.json.gz]:-0}" "${XS[real.pftrace.gz]:-0}")x | $(div "${XS[syn.json.gz]:-0}" "${XS[syn.pftrace.gz]:-0}")x | — |"
		if [ -n "${XS[mem.pftrace.200000]:-}" ]; then
			echo
			echo "| convert peak RSS | 200,000 calls | $BIG_CALLS calls | growth |"
			echo "|---|---:|---:|---|"
			for fmt in pftrace json; do
				echo "| $fmt | ${XR[mem.$fmt.200000]} | ${XR[mem.$fmt.$BIG_CALLS]} | $(div "${XS[mem.$fmt.$BIG_CALLS]}" "${XS[mem.$fmt.200000]}" 2)x |"
			done
		fi
	fi
} >> "$T/results.md"
# ================================================================ end export formats

mkdir -p "$(dirname "$OUT")"
cp "$T/results.md" "$OUT"
[ -n "${SUDO_USER:-}" ] && chown "$SUDO_USER" "$OUT" 2>/dev/null
cat "$OUT"
say "results written to ${OUT#"$SRC"/}"
exit 0
