#!/usr/bin/env bash
# tests/bench/node_load.sh — part of `make bench` (issue #38): the whole node
# traced under load, `gpuio trace -a --stream --rotate`, as a user looks at a
# busy training node. Two loads, each bounded and self-stopping:
#   - moderate: fio, 2 jobs of 4 KiB random preads (psync) of a cached file,
#     and 3 PyTorch DataLoader loops (2 workers, 2 ms of sleep a sample);
#   - saturated: the same fio, 3 DataLoader loops and `perf bench sched
#     messaging` (10 groups: 400 tasks) over and over.
# Each is traced for BENCH_LOAD_SECS (20) s with the defaults (the drain at
# SCHED_FIFO 1, the ring at 16 MiB a CPU for -a, the stream on its own
# thread) and, in the same run, with the previous defaults
# (--drain-priority 0 --ringbuf 16M); and, saturated, without --stream.
# Rows: records kept and lost (the share kept), the stream's largest lag behind
# the capture, how long after the trace's end gpuio exited, how long the
# stream's thread ran at the drain's real-time priority to catch up, its peak
# RSS, the rotated files' sizes. Markdown on stdout; "n/a (why)" where it cannot run.
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GPUIO=${GPUIO:-$SRC/build/gpuio}
SECS=${BENCH_LOAD_SECS:-20}
PY=${TORCH_PY:-/usr/bin/python3}

echo "## A whole node under load: \`gpuio trace -a --stream --rotate\`"
echo
[ "$(id -u)" -eq 0 ] || { echo "n/a (needs root)"; exit 0; }
command -v fio >/dev/null || { echo "n/a (no fio)"; exit 0; }
"$PY" -c 'import torch' 2>/dev/null || { echo "n/a ($PY cannot import torch)"; exit 0; }
T=$(mktemp -d /var/tmp/gpuio-load.XXXXXX) || exit 0
trap 'pkill -P $$ 2>/dev/null; rm -rf "$T"' EXIT
head -c 256M /dev/urandom > "$T/fio.dat"
mkdir -p "$T/data"
for i in $(seq 0 31); do head -c 65536 /dev/urandom > "$T/data/sample-$(printf %05d "$i").bin"; done

# load KIND SECS: the load, in the background, ending by itself
load() {
  local kind=$1 secs=$2 end
  fio --name=r --filename="$T/fio.dat" --rw=randread --bs=4k --numjobs=2 --ioengine=psync \
    --time_based --runtime="$secs" > /dev/null 2>&1 &
  for i in 1 2 3; do
    "$PY" "$SRC/tests/progs/torch_shapes.py" loader --data "$T/data" --files 32 --workers 2 \
      --batch 4 --cpu-us 0 --sleep-us 2000 --step-cpu-us 5000 --seconds "$secs" > /dev/null 2>&1 &
  done
  if [ "$kind" = saturated ]; then
    end=$((SECONDS + secs))
    (while [ $SECONDS -lt $end ]; do perf bench sched messaging -g 10 -l 2000 > /dev/null 2>&1; done) &
  fi
}

# row KIND NAME ARGS...: one traced run under the load
row() {
  local kind=$1 name=$2; shift 2
  rm -rf "$T/out" && mkdir -p "$T/out"
  load "$kind" $((SECS + 5))
  sleep 3
  /usr/bin/time -f 'RSS %M' "$GPUIO" trace -a -d "${SECS}s" "$@" --capture "$T/c.gpuio" \
    2> "$T/err" > /dev/null
  local ended=$(date +%s.%N)
  wait
  awk -v name="$name" -v kind="$kind" -v ended="$ended" '
    /duration reached after/ {
      match($0, /after [0-9.]+s/); secs = substr($0, RSTART + 6, RLENGTH - 7)
      match($0, /: [0-9]+ events/); kept = substr($0, RSTART + 2, RLENGTH - 9)
      match($0, /, [0-9]+ dropped/); lost = substr($0, RSTART + 2, RLENGTH - 10) }
    /--stream: at most/ { match($0, /at most [0-9.]+s/); lag = substr($0, RSTART + 8, RLENGTH - 9)
      match($0, /written [0-9.]+s/); tail = substr($0, RSTART + 8, RLENGTH - 9) }
    /--stream: caught up at/ { match($0, /[0-9.]+s in all/); rt = substr($0, RSTART, RLENGTH - 8) }
    /^RSS/ { rss = $2 }
    END { printf "| %s | %s | %d | %d | %.1f%% | %s | %s | %s | %.0f MiB |", kind, name, kept, lost,
            kept + lost ? 100 * kept / (kept + lost) : 100, lag == "" ? "< 1 s" : lag " s",
            tail == "" ? "< 1 s" : tail " s", rt == "" ? "0 s" : rt " s", rss / 1024 }' "$T/err"
  echo " $(ls -l "$T/out" 2>/dev/null | awk 'NR > 1 { printf "%s%.0f", n++ ? " / " : "", $5 / 1048576 } END { if (!n) printf "-"; else printf " MiB" }') |"
  sleep 5
}

echo "$SECS s traced each, $(nproc) CPUs, $(uname -r); \"stream end\": from the trace's end to the stream's last file written."
echo
echo "| load | gpuio | events kept | lost | kept | stream lag (max) | stream end | stream at SCHED_FIFO | peak RSS | rotated files |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
STREAM=(--stream --rotate "$((SECS / 2))s" -o "$T/out/t.pftrace")
row moderate "defaults" "${STREAM[@]}"
row moderate "--drain-priority 0 --ringbuf 16M (before)" --drain-priority 0 --ringbuf 16M "${STREAM[@]}"
row saturated "defaults" "${STREAM[@]}"
row saturated "--drain-priority 0 --ringbuf 16M (before)" --drain-priority 0 --ringbuf 16M "${STREAM[@]}"
row saturated "defaults, --no-export (no stream)" --no-export
echo
echo "Lost: records the kernel could not put in the ring (gpuio's own count, by layer in its warning)."
