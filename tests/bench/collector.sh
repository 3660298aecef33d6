#!/usr/bin/env bash
# tests/bench/collector.sh — part of `make bench`: the gpuio collector's own
# CPU per event (the gpuio process alone: utime + stime from its
# /proc/PID/stat, over the whole trace), at fixed event rates.
#
# Workload: build/tests/monitor_paced, random 4 KiB preads of a cached file
# at RATE calls/s for SECS seconds, launched by gpuio (`gpuio trace --`), so
# every call is one VFS event. Also the collector's syscalls per 1000 events
# (strace -c of a separate run, when strace is there).
# Markdown on stdout; progress on stderr; needs root.
# Knobs: BENCH_RATES ("100000 1000000": the second is more than one CPU can make, i.e. flat out), BENCH_RATE_SECS (8), BENCH_RUNS (3).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GPUIO=${GPUIO:-$SRC/build/gpuio}
PACED=$SRC/build/tests/monitor_paced
FILE=${BENCH_FILE:-/var/tmp/gpuio-bench.dat}
RATES=${BENCH_RATES:-100000 1000000}
SECS=${BENCH_RATE_SECS:-8}
RUNS=${BENCH_RUNS:-3}
TCK=$(getconf CLK_TCK)

echo "## gpuio collector: its own CPU per event"
echo
[ "$(id -u)" -eq 0 ] || { echo "n/a (needs root)"; exit 0; }
[ -x "$PACED" ] || { echo "n/a ($PACED missing: make test-progs)"; exit 0; }
if [ ! -s "$FILE" ]; then
  dd if=/dev/urandom of="$FILE" bs=1M count=256 status=none || { echo "n/a (cannot write $FILE)"; exit 0; }
fi
cat "$FILE" >/dev/null
T=$(mktemp -d /var/tmp/gpuio-collector.XXXXXX) || exit 0
chmod 0755 "$T"
trap 'rm -rf "$T"' EXIT

# one_run RATE: "cpu_s events us_per_event dropped" of one traced run. The
# CPU is taken in the steady state: between 1 s after the start (BPF loading
# and the /proc scan done) and 1 s before the end, against the events the
# paced workload made in between (its reached rate x interval).
one_run() {
  "$GPUIO" trace --no-export --capture "$T/c.gpuio" -- "$PACED" "$FILE" "$1" "$SECS" \
    >"$T/paced.out" 2>"$T/trace.err" &
  local g=$! c0 c1 t0 t1
  sleep 1
  c0=$(awk '{print $14 + $15}' /proc/$g/stat 2>/dev/null); t0=$(date +%s%N)
  sleep $((SECS - 2))
  c1=$(awk '{print $14 + $15}' /proc/$g/stat 2>/dev/null); t1=$(date +%s%N)
  wait $g
  local line ev dr
  line=$(grep -o '[0-9]* events ([^)]*), [0-9]* dropped' "$T/trace.err" | tail -n1)
  ev=$(echo "$line" | awk '{print $1}')
  dr=$(echo "$line" | awk '{print $(NF-1)}')
  # the rate the workload reached (it cannot go faster than the CPU allows)
  local rr
  rr=$(grep -o 'rate=[0-9.]*' "$T/paced.out" | cut -d= -f2)
  awk -v c0="${c0:-0}" -v c1="${c1:-0}" -v t="$TCK" -v r="${rr:-$1}" -v dt=$(( (t1 - t0) / 1000000 )) \
      -v e="${ev:-0}" -v d="${dr:-?}" \
    'BEGIN { s = (c1 - c0) / t; n = r * dt / 1000; printf "%.2f %d %.3f %s\n", s, e, n ? s * 1e6 / n : 0, d }'
}

echo "gpuio trace -- monitor_paced FILE RATE $SECS (random 4 KiB preads, cached); CPU of the gpuio process"
echo "in the steady state ($((SECS - 2)) s of the run, start-up excluded; clock ticks of 1/$TCK s), median of $RUNS runs."
echo
echo "| events/s asked | steady-state CPU s (runs) | events in the trace | µs CPU per event (runs) | median | dropped |"
echo "|---:|---|---:|---|---:|---:|"
for rate in $RATES; do
  cpus="" per="" evs="" drs=""
  for r in $(seq "$RUNS"); do
    echo "bench: collector: rate $rate, run $r" >&2
    set -- $(one_run "$rate")
    cpus="$cpus $1"; evs=$2; per="$per $3"; drs="$drs $4"
  done
  med=$(printf '%s\n' $per | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  echo "| $rate |$cpus | $evs |$per | **$med** |$drs |"
done
echo
if command -v strace >/dev/null; then
  rate=${RATES##* }
  echo "bench: collector: strace -c of the collector at $rate/s" >&2
  "$GPUIO" trace --no-export --capture "$T/s.gpuio" -- "$PACED" "$FILE" "$rate" "$SECS" \
    >/dev/null 2>"$T/strace-trace.err" &
  g=$!
  sleep 1
  timeout $((SECS - 2)) strace -c -p $g -o "$T/strace.txt" 2>/dev/null
  wait $g
  ev=$(awk -v r="$rate" -v s=$((SECS - 2)) 'BEGIN { print r * s }')
  echo "Collector syscalls per 1000 events at $rate/s (strace -c over $((SECS - 2)) s, ~$ev events):"
  echo
  echo "| syscall | calls | per 1000 events |"
  echo "|---|---:|---:|"
  awk -v ev="$ev" '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" {
      printf "| %s | %d | %.2f |\n", $NF, $4, $4 * 1000 / ev }' "$T/strace.txt" | head -8
  echo
fi
