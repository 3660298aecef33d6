#!/usr/bin/env bash
# gpuio merge --pytorch: a PyTorch profiler trace of the same run on the
# capture's timeline (issue #26).
#  - bad input: not JSON, JSON cut short, a Chrome trace that is not the
#    profiler's, gpuio's own export, a 2.x trace that does not overlap the
#    capture, a relative trace nothing aligns: each refused with its reason,
#    exit 1, no output file;
#  - a PyTorch 2.x-format trace (tests/kineto_gen.py: baseTimeNanoseconds,
#    cpu_op, user_annotation, python_function, cuda_runtime on the traced
#    preadloop's thread; kernel, gpu_memcpy, gpu_memset, gpu_user_annotation
#    on GPU 0) merged with the capture: every event at exactly the MONOTONIC
#    time it was written for, on its track, its args kept;
#  - Debian's torch 1.13 (skipped, saying so, without it): a loop that
#    profiles itself (tests/progs/torch_profiled.py) traced by gpuio; its
#    trace has times relative to the profile's start and no thread ids, and
#    is aligned through the thread's off-CPU intervals and system calls:
#    every known_block_i lands on the loop thread's PyTorch track and holds
#    the program's own CLOCK_MONOTONIC readings within the printed error;
#    as many profiler events in the output as in the trace.
# Every export is taken by check_trace.py and by Perfetto's importer with no
# error or data-loss stat; the JSON and .pftrace carry the same events.
source "$(dirname "$0")/lib.sh"
need_root
PREAD="$GPUIO_TESTS/preadloop"
[ -x "$PREAD" ] || fail "missing test programs (run: make test-progs)"

head -c 1M /dev/urandom > "$TMP/data"
"$GPUIO" trace -q --no-export -o "$TMP/p.json" -- "$PREAD" "$TMP/data" 300 1 \
  > /dev/null 2> "$TMP/p.err" || { cat "$TMP/p.err"; fail "trace preadloop failed"; }
"$GPUIO" convert -q "$TMP/p.gpuio" -o "$TMP/p.json" || fail "convert"
"$GPUIO" info --json "$TMP/p.gpuio" > "$TMP/p.info.json" || fail "info --json"
PID=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print([e["pid"] for e in j if e.get("name")=="process_name" and e["args"]["name"].startswith("preadloop")][0])' "$TMP/p.json")

# refused CASE FILE PATTERN: merge fails, says PATTERN, leaves no output
refused() {
  local rc=0
  "$GPUIO" merge "$TMP/p.gpuio" --pytorch "$2" -o "$TMP/bad.json" > /dev/null 2> "$TMP/bad.err" || rc=$?
  [ "$rc" -eq 1 ] || { cat "$TMP/bad.err"; fail "$1: exit $rc, not 1"; }
  grep -q -- "$3" "$TMP/bad.err" || { cat "$TMP/bad.err"; fail "$1: does not say '$3'"; }
  [ ! -e "$TMP/bad.json" ] && [ ! -e "$TMP/bad.json.tmp" ] || fail "$1: left an output behind"
  echo "refused ($1): $(grep error "$TMP/bad.err" | head -n1)"
}
echo 'this is not json' > "$TMP/nojson.json"
refused "not JSON" "$TMP/nojson.json" "not JSON"
python3 "$GPUIO_SRC/tests/kineto_gen.py" "$TMP/p.info.json" "$PID" "$PID" "$TMP/k2.json"
head -c 700 "$TMP/k2.json" > "$TMP/cut.json"
refused "cut short" "$TMP/cut.json" "cut short"
echo '[{"name": "x", "ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]' > "$TMP/chrome.json"
refused "not the profiler's" "$TMP/chrome.json" "not a PyTorch profiler trace"
refused "gpuio's own export" "$TMP/p.json" "gpuio export"
python3 - "$TMP/k2.json" "$TMP/far.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["baseTimeNanoseconds"] -= 86400 * 10**9 * 30      # a month earlier
json.dump(d, open(sys.argv[2], "w"))
PY
refused "no overlap" "$TMP/far.json" "no overlap with the capture"
echo '[{"name": "aten::add", "ph": "X", "ts": 10, "dur": 5, "tid": 1, "pid": "CPU functions", "args": {}}]' \
  > "$TMP/rel.json"
refused "nothing to align" "$TMP/rel.json" "cannot align"

# the 2.x-format trace, at its exact times
for out in k2.json k2.pftrace; do
  "$GPUIO" merge "$TMP/p.gpuio" --pytorch "$TMP/k2.json" -o "$TMP/m-$out" 2> "$TMP/m-$out.err" ||
    { cat "$TMP/m-$out.err"; fail "merge --pytorch (2.x) -> $out failed"; }
  check_struct "$TMP/m-$out"
done
cat "$TMP/m-k2.json.err"
grep -q "baseTimeNanoseconds\|base time" "$TMP/m-k2.json.err" || fail "the 2.x merge does not say how it aligned"
pycheck kineto_truth.synthetic "$TMP/m-k2.json" "$TMP/k2.json.expect.json" "$PID" "$PID" ||
  fail "the 2.x-format trace's events are not where they belong"
python3 "$GPUIO_SRC/tests/compare_exports.py" --machines "$TMP/m-k2.json" "$TMP/m-k2.pftrace" ||
  fail "the JSON and protobuf merges differ"
if tp=$(tp_path); then
  echo "select count(*) from slice where category = 'pytorch';" > "$TMP/q.sql"
  "$tp" -q "$TMP/q.sql" "$TMP/m-k2.pftrace" > "$TMP/q.out" 2>/dev/null || fail "trace_processor failed"
  pycheck kineto_truth.counts "$TMP/q.out" 8 || fail "Perfetto does not see the 8 profiler slices"
else
  tp_note "the profiler slices in Perfetto"
fi
# without --pytorch the merge is what it was
"$GPUIO" merge -q "$TMP/p.gpuio" -o "$TMP/plain.json" || fail "plain merge"
! grep -q '"cat":"pytorch"' "$TMP/plain.json" || fail "a plain merge has profiler events"

# Debian's torch 1.13: relative times, aligned through what both saw
source "$GPUIO_SRC/tests/torch_lib.sh"
if ! "$TORCH_PY" -c 'import torch' 2>/dev/null; then
  echo "note: $TORCH_PY cannot import torch (apt-get install python3-torch): the torch 1.13 part is not run"
  echo "PASS (without torch): profiler traces land where their clocks say, bad ones are refused"
  exit 0
fi
"$GPUIO" trace -q --no-export -o "$TMP/t.json" -- "$TORCH_PY" "$GPUIO_SRC/tests/progs/torch_profiled.py" "$TMP/t" \
  > "$TMP/t.log" 2>&1 || { cat "$TMP/t.log"; fail "trace torch_profiled.py failed"; }
[ -s "$TMP/t.trace.json" ] && [ -s "$TMP/t.truth.json" ] || { cat "$TMP/t.log"; fail "torch_profiled.py wrote no trace"; }
for out in t.json t.pftrace; do
  "$GPUIO" merge "$TMP/t.gpuio" --pytorch "$TMP/t.trace.json" -o "$TMP/m-$out" 2> "$TMP/m-$out.err" ||
    { cat "$TMP/m-$out.err"; fail "merge --pytorch (torch 1.13) -> $out failed"; }
  check_struct "$TMP/m-$out"
done
cat "$TMP/m-t.json.err"
pycheck kineto_truth.torch "$TMP/m-t.json" "$TMP/t.trace.json" "$TMP/t.truth.json" "$TMP/m-t.json.err" ||
  fail "the profiler's annotations are not where the program says they ran"
python3 "$GPUIO_SRC/tests/compare_exports.py" --machines "$TMP/m-t.json" "$TMP/m-t.pftrace" ||
  fail "the JSON and protobuf merges differ (torch)"
echo "PASS: profiler traces land where their clocks say, bad ones are refused"
