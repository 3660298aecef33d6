#!/usr/bin/env bash
# tests/bench/cupti.sh — cost of the CUPTI collector per activity record:
# CUPTI's buffer-completed callback (real libcupti iteration + conversion to
# gpuio records + write() of whole records) on synthetic 1 MiB buffers, to a
# side file on tmpfs and on disk. A benchmark: nothing asserted.
#
# Output: a Markdown table on stdout (median of CUPTI_BENCH_RUNS runs).
# Knobs: BUILD=dir (default build), CUPTI_BENCH_RUNS (3),
#        CUPTI_BENCH_BUFFERS (40 one-MiB buffers per run),
#        CUPTI_BENCH_TMPFS (/dev/shm), CUPTI_BENCH_DISK (/var/tmp).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
BENCH=$BUILD/bench/cupti_bench
RUNS=${CUPTI_BENCH_RUNS:-3}
BUFFERS=${CUPTI_BENCH_BUFFERS:-40}
TMPFS=${CUPTI_BENCH_TMPFS:-/dev/shm}
DISK=${CUPTI_BENCH_DISK:-/var/tmp}

if [ ! -x "$BENCH" ]; then
  make -C "$SRC" --no-print-directory BUILD="$BUILD" "$BENCH" >&2 ||
    { echo "cupti bench: n/a (cannot build $BENCH: CUDA/CUPTI missing?)"; exit 0; }
fi

median() { sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : "n/a")}'; }

echo "| record kind | file on | records/run | ns/record (callback: iterate+convert+write) | ns/record (iterate only) | output bytes/record |"
echo "|---|---|---|---|---|---|"
for kind in kernel kernel_cold memcpy api; do
  for where in tmpfs disk; do
    dir=$TMPFS; [ $where = disk ] && dir=$DISK
    d=$(mktemp -d "$dir/gpuio-cupti-bench.XXXXXX") || { echo "| $kind | $where | n/a (mktemp) | | | |"; continue; }
    : > "$d/cb"; : > "$d/it"; recs=0; bytes=0
    for _ in $(seq "$RUNS"); do
      line=$("$BENCH" "$d" "$kind" "$BUFFERS") || { line=""; break; }
      for kv in $line; do
        case $kv in
          records=*) recs=${kv#records=} ;;
          ns_per_record=*) echo "${kv#*=}" >> "$d/cb" ;;
          iterate_ns_per_record=*) echo "${kv#*=}" >> "$d/it" ;;
          bytes=*) bytes=${kv#bytes=} ;;
        esac
      done
    done
    if [ -z "$line" ]; then
      echo "| $kind | $where | n/a (cupti_bench failed) | | | |"
    else
      echo "| $kind | $where ($dir) | $recs | $(median < "$d/cb") | $(median < "$d/it") | $((bytes / recs)) |"
    fi
    rm -rf "$d"
  done
done
