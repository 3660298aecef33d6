#!/usr/bin/env bash
# Thread states at their finest: a synthetic capture (gen_capture states) of
# one thread cycling through states 1, 2 and 3 ns long at every ns residue of
# a µs, and a thread that comes on CPU 0 while the trace still has it on
# CPU 1 (its switch-out was missed) before another thread leaves CPU 1. The
# JSON states are exactly the generator's (start to the ns, end short by at
# most the exporter's 1 ns gap), none overlaps another on its lane (Perfetto's
# importer: no slice_spill_overlapping_complete_event, the failure a monitor
# dump hit), and the protobuf's thread_state (Perfetto derives it from the
# switches) is the same states (compare_exports.py).
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"

# both_forms NAME: NAME.gpuio to NAME.json and NAME.pftrace, each checked by
# Perfetto's importer, their thread states the same
both_forms() {
  local f
  for f in json pftrace; do
    "$GPUIO" convert "$TMP/$1.gpuio" -o "$TMP/$1.$f" 2>"$TMP/conv.err" ||
      { cat "$TMP/conv.err"; fail "convert $1 to $f failed"; }
  done
  check_struct "$TMP/$1.json"
  tp_check "$TMP/$1.pftrace"
  python3 "$GPUIO_SRC/tests/compare_exports.py" "$TMP/$1.json" "$TMP/$1.pftrace" ||
    fail "$1: JSON and protobuf thread states differ"
}

"$GEN" states "$TMP/s.gpuio" > "$TMP/manifest.json" || fail "gen_capture states failed"
both_forms s

pycheck sched_truth.generated_states "$TMP/manifest.json" "$TMP/s.json" ||
  fail "JSON states differ from the generator's"
# The same on this kernel's real scheduler: a whole-node trace, where threads
# come on a CPU without their last switch-out having been seen (on this VM
# the host agent's threads: the kernel's own sched_switch never shows them
# leaving) and idle kernel threads sleep in TASK_IDLE.
if [ "$(id -u)" -ne 0 ]; then
  echo "note: not root: the whole-node part is not run (synthetic checks passed)"
else
  "$GPUIO" trace -a -d 3s --no-export --capture "$TMP/all.gpuio" -o "$TMP/all.json" >"$TMP/all.log" 2>&1 ||
    { cat "$TMP/all.log"; fail "gpuio trace -a failed"; }
  both_forms all
  grep -o '"sched_gaps": *[0-9]*' "$TMP/all.json" | head -1 | sed 's/^/whole node: /'
fi
echo "PASS: thread states exact to the ns, no overlaps, a missed switch-out bridged alike in both exports"
