#!/usr/bin/env bash
# scripts/job-shapes.sh [OUT.md] — runs each job shape the report knows (the
# scenarios of tests/shapes_lib.sh: real PyTorch programs that time
# themselves) under `gpuio trace`, and writes what `gpuio report` says of
# each, with what the program measured of itself, as Markdown (default:
# docs/job-shapes.md). Root, Debian's python3-torch; ~3 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
OUTMD=$(readlink -f "${1:-docs/job-shapes.md}")
export GPUIO=${GPUIO:-$PWD/build/gpuio} GPUIO_TESTS=${GPUIO_TESTS:-$PWD/build/tests} GPUIO_SRC=$PWD
source tests/lib.sh
source tests/shapes_lib.sh
need_root
need_torch

# the loop parts of the text report, the temporary paths made short
excerpt() {
  "$GPUIO" report "$1" | sed -n '/^WHY THE LOOP/,/^  STEPS\|^RECOMMENDATIONS\|^SUMMARY/p' |
    grep -v '^  STEPS\|^SUMMARY\|^RECOMMENDATIONS' | sed "s#$TMP#\$TMP#g; s#/tmp/gpuio-test\.[A-Za-z0-9]*#\$TMP#g"
  "$GPUIO" report "$1" | sed -n '/^RECOMMENDATIONS/,/^$/p' | sed "s#$TMP#\$TMP#g; s#/tmp/gpuio-test\.[A-Za-z0-9]*#\$TMP#g"
}
own() {   # what the program(s) measured: waits and loop time
  python3 - "$@" <<'PY'
import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p))
    for r in d.get("ranks", [d]):
        w = sum(s["wait_s"] for s in r["steps"])
        asleep = sum(max(0, s["wait_s"] - (s.get("wait_cpu_ns", 0) + s.get("wait_run_delay_ns", 0)) / 1e9)
                     for s in r["steps"])
        print("pid %d tid %d: %d steps, waited %.3f s in next()/get() (asleep %.3f s) of a %.3f s loop"
              % (r["pid"], r["main_tid"], len(r["steps"]), w, asleep, r["loop_s"]))
PY
}
section() {   # TITLE WHAT BASE...
  local title=$1 what=$2; shift 2
  {
    echo "## $title"; echo; echo "$what"; echo; echo '```'
    own "$1.json"
    echo '```'; echo; echo '```'
    excerpt "$1.gpuio"
    echo '```'; echo
  } >> "$OUTMD.tmp"
}

cat > "$OUTMD.tmp" <<'HDR'
# Job shapes: what `gpuio report` says of each

Real runs on the development machine (2 cores, Debian's `python3-torch`),
written by `scripts/job-shapes.sh`: each shape of `tests/shapes_lib.sh` traced
from its start (`gpuio trace -- …`), the program's own measurements first,
then the loop part of `gpuio report`. The tests `tests/t_shape_*.sh` hold the
same runs to the programs' clocks ([report.md](report.md)).

HDR
shape_ranks launch "$TMP/ranks" 3 200 2000,8000,20000
section "Three ranks under torchrun" "One loop per rank, the straggler first; each woken only by its own workers." "$TMP/ranks"
shape_threads launch "$TMP/threads"
section "A reader-thread prefetcher" "Two reader threads of the loop's own process read cold files (4 MiB/s) into a queue.Queue." "$TMP/threads"
shape_noworkers launch "$TMP/noworkers"
section "No workers" "num_workers=0: the loop reads its cold files itself." "$TMP/noworkers"
shape_memmap launch "$TMP/memmap"
section "Memory-mapped data" "numpy.memmap files read by the workers through page faults only." "$TMP/memmap"
shape_remote launch "$TMP/remote"
section "Remote data" "Workers fetch samples over HTTP from an object store with 40 ms per request." "$TMP/remote"
shape_loader launch "$TMP/pin" 3 --pin-memory
section "The pin-memory chain" "loop ← pin-memory thread ← worker processes." "$TMP/pin"
shape_loader attach "$TMP/attach" 4
section "Attached to a running loop" "\`gpuio trace -p\` 1.5 s after the loop started, for a few seconds." "$TMP/attach"
mv "$OUTMD.tmp" "$OUTMD"
echo "wrote $OUTMD"
