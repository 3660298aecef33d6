#!/usr/bin/env bash
# tests/bench/report.sh — `gpuio report` time and peak memory on a large
# synthetic capture (tests/report_gen.py bench: 80% VFS calls over 2000 files
# by 16 threads, 10% block requests, 10% GPU kernels with idle gaps, so both
# passes run). Memory must stay bounded by files/threads/devices/GPU records,
# not by events: the same capture at EVENTS/10 is reported too and the two
# peak RSS are printed side by side.
#
#   tests/bench/report.sh [EVENTS]     default 10000000; writes build/bench/report.md
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
GPUIO="${GPUIO:-$SRC/build/gpuio}"
OUT="${BENCH_OUT:-$SRC/build/bench}"
EVENTS="${1:-10000000}"
TMPD=$(mktemp -d /var/tmp/gpuio-report-bench.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT
mkdir -p "$OUT"
[ -x /usr/bin/time ] || { echo "report bench: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }

run() {  # run EVENTS -> "seconds rss_kib bytes"
  local n=$1 cap="$TMPD/bench-$1.gpuio"
  GPUIO_SRC="$SRC" python3 "$SRC/tests/report_gen.py" bench "$cap" "$n"
  /usr/bin/time -f "%e %M" -o "$TMPD/time" "$GPUIO" report "$cap" >"$TMPD/report-$n.txt"
  /usr/bin/time -f "%e %M" -o "$TMPD/time-json" "$GPUIO" report --json "$cap" >/dev/null
  echo "$(cat "$TMPD/time") $(cat "$TMPD/time-json") $(stat -c %s "$cap")"
  rm -f "$cap"
}

small=$(run $((EVENTS / 10)))
big=$(run "$EVENTS")
read -r s_t s_m s_jt s_jm s_b <<<"$small"
read -r b_t b_m b_jt b_jm b_b <<<"$big"
{
  echo "## gpuio report on a synthetic capture"
  echo
  echo "| events | capture | text report | peak RSS | --json | peak RSS |"
  echo "|---:|---:|---:|---:|---:|---:|"
  echo "| $((EVENTS / 10)) | $((s_b >> 20)) MiB | ${s_t} s | $((s_m / 1024)) MiB | ${s_jt} s | $((s_jm / 1024)) MiB |"
  echo "| $EVENTS | $((b_b >> 20)) MiB | ${b_t} s | $((b_m / 1024)) MiB | ${b_jt} s | $((b_jm / 1024)) MiB |"
  echo
  echo "VFS and block events only update per-file/thread/device aggregates; what"
  echo "grows is the GPU side: busy intervals (merged as they come) and the idle gaps"
  echo "with the host calls clipped to them (~1 gap per 80 events here)."
  grep -E "GPU 0 of pid|reads:" "$TMPD/report-$EVENTS.txt" | head -2 | sed 's/^/    /'
} | tee "$OUT/report.md"
