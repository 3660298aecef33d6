#!/usr/bin/env bash
# The Perfetto protobuf export carries the same trace as the JSON export of
# the same capture, event for event (tests/compare_exports.py: tracks, slices
# with every arg, flows, counters, the info instant), decoded by our own
# wire-format reader (tests/pftrace.py), which also checks Perfetto's rules:
# a ClockSnapshot declaring MONOTONIC first, events on MONOTONIC through the
# sequence's defaults, SEQ_INCREMENTAL_STATE_CLEARED first and
# SEQ_NEEDS_INCREMENTAL_STATE after, every iid interned before use.
#
# Captures: gen_capture's basic, flows (fan-out flows, lanes, io_uring,
# every call shape), hostile (invalid UTF-8, control bytes), truncate and
# faults (page_fault slices, their flows, the fault counts in the info);
# with root, real traces made here: forked workers and threads
# (fork_workers), known O_DIRECT I/O with block requests and flows
# (known_io), and fio when installed. .pftrace.gz is the same bytes gzipped.
# The comparison must be able to fail: a capture against another capture's
# export, and an export with one interned path changed, are both refused.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$GPUIO" ] || fail "missing $GPUIO (run: make)"
CMP="python3 $GPUIO_SRC/tests/compare_exports.py"

both() {  # both NAME CAPTURE: export to JSON and protobuf, compare
  "$GPUIO" convert -q "$2" -o "$TMP/$1.json" || fail "$1: convert to JSON failed"
  "$GPUIO" convert -q "$2" -o "$TMP/$1.pftrace" || fail "$1: convert to .pftrace failed"
  $CMP "$TMP/$1.json" "$TMP/$1.pftrace" > "$TMP/$1.cmp" 2>&1 \
    || { cat "$TMP/$1.cmp"; fail "$1: JSON and protobuf exports differ"; }
  echo "$1: $(cat "$TMP/$1.cmp")"
  $CHECK "$TMP/$1.pftrace" > /dev/null || fail "$1: check_trace rejects the protobuf export"
  tp_check "$TMP/$1.pftrace"
  tp_check "$TMP/$1.json"
}

for m in basic flows hostile truncate faults; do
  "$GEN" $m "$TMP/$m.gpuio" > "$TMP/$m.manifest" || fail "gen_capture $m failed"
  both "$m" "$TMP/$m.gpuio" 2> "$TMP/$m.err"
done

# the flows capture has every feature: check a few against the generator too
pycheck export_gen.flows_pftrace "$TMP/flows.manifest" "$TMP/flows.pftrace" ||
  fail "flows: protobuf differs from the generator's ground truth"

# gzip: the same packets
"$GPUIO" convert -q "$TMP/flows.gpuio" -o "$TMP/flows.pftrace.gz" || fail "convert to .pftrace.gz failed"
[ "$(head -c2 "$TMP/flows.pftrace.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ] || fail ".pftrace.gz is not gzip"
cmp <(gzip -dc "$TMP/flows.pftrace.gz") "$TMP/flows.pftrace" || fail ".pftrace.gz differs from .pftrace"
tp_check "$TMP/flows.pftrace.gz"

# the comparison can fail: another capture, and one changed string
if $CMP "$TMP/basic.json" "$TMP/flows.pftrace" > /dev/null 2>&1; then
  fail "compare_exports accepts a protobuf export of another capture"
fi
pycheck export_gen.tamper "$TMP/flows.pftrace" "$TMP/tampered.pftrace" || fail "cannot make the tampered copy"
if $CMP "$TMP/flows.json" "$TMP/tampered.pftrace" > "$TMP/tampered.cmp" 2>&1; then
  fail "compare_exports accepts a protobuf export with a changed path"
fi
grep -q "/data/c.bin" "$TMP/tampered.cmp" || { cat "$TMP/tampered.cmp"; fail "the changed path is not named"; }

# real traces made here (root): forked workers + threads, O_DIRECT with flows, fio
if [ "$(id -u)" -eq 0 ]; then
  D="$TMP/d"
  mkdir -p "$D"
  for f in t0 t1 w0 w1 w2 x; do head -c 300k /dev/urandom > "$D/$f"; done
  "$GPUIO" trace -q --no-export -o "$TMP/fw.json" -- "$GPUIO_TESTS/fork_workers" "$D" 3 2 \
    > /dev/null 2> "$TMP/fw.err" || { cat "$TMP/fw.err"; fail "trace of fork_workers failed"; }
  both fork_workers "$TMP/fw.gpuio"
  pycheck export_gen.fork_workers_pftrace "$TMP/fork_workers.pftrace" ||
    fail "fork_workers: processes/threads missing from the protobuf"
  mkdir -p "$TMP/k"
  "$GPUIO" trace -q --no-export -o "$TMP/k.json" -- "$GPUIO_TESTS/known_io" "$TMP/k" \
    > /dev/null 2> "$TMP/k.err" || { cat "$TMP/k.err"; fail "trace of known_io failed"; }
  both known_io "$TMP/k.gpuio"
  if command -v fio > /dev/null; then
    mkdir -p "$TMP/fio"
    cat > "$TMP/job.fio" <<EOF
[global]
directory=$TMP/fio
size=2m
ioengine=psync
[rd-direct]
rw=randread
bs=4k
direct=1
[wr]
rw=write
bs=64k
numjobs=2
EOF
    fio "$TMP/job.fio" --create_only=1 > /dev/null 2>&1 || fail "fio layout failed"
    "$GPUIO" trace -q --no-export -o "$TMP/fio.json" -- fio "$TMP/job.fio" \
      > /dev/null 2> "$TMP/fio.err" || { cat "$TMP/fio.err"; fail "trace of fio failed"; }
    both fio "$TMP/fio.gpuio"
  else
    echo "fio not installed: no fio capture"
  fi
  grep -q "flows" "$TMP/known_io.cmp" && ! grep -q " 0 flows" "$TMP/known_io.cmp" \
    || echo "note: known_io made no block flows here (page cache / device)"
else
  echo "not root: synthetic captures only"
fi
echo "JSON and protobuf exports carry the same trace"
