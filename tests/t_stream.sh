#!/usr/bin/env bash
# gpuio trace --stream writes the Perfetto protobuf while tracing:
#  1. a finished streamed trace of forked workers + threads + known O_DIRECT
#     I/O carries the same processes, threads, slices and args as
#     `gpuio convert` of the capture recorded with it (compare_exports
#     --stream: lanes are assigned live, flows may only be fewer);
#  2. a trace killed with SIGKILL in the middle of 3.5 s of ~1M preads/s still
#     decodes up to its last packet (plain and gzip): every packet frames
#     whole to the end, the first 300,000 decode under Perfetto's rules with
#     the workload's 1-byte preads of its file in them;
#  3. its memory stays flat while it runs: the tracer's peak RSS after 3.5 s
#     is within 16 MiB of the one after 1.5 s although the events doubled.
source "$(dirname "$0")/lib.sh"
need_root
CMP="python3 $GPUIO_SRC/tests/compare_exports.py"
PREAD="$GPUIO_TESTS/preadloop"
[ -x "$PREAD" ] || fail "missing $PREAD (run: make test-progs)"

# --- 1: same content as the capture's export
D="$TMP/d"
mkdir -p "$D" "$TMP/k"
for f in t0 t1 w0 w1 w2 x; do head -c 300k /dev/urandom > "$D/$f"; done
cat > "$TMP/work.sh" <<EOF
#!/bin/sh
"$GPUIO_TESTS/fork_workers" "$D" 3 2 > /dev/null && "$GPUIO_TESTS/known_io" "$TMP/k"
EOF
chmod +x "$TMP/work.sh"
"$GPUIO" trace -q --stream -o "$TMP/s.pftrace" -- "$TMP/work.sh" 2> "$TMP/s.err" \
  || { cat "$TMP/s.err"; fail "trace --stream failed"; }
[ -s "$TMP/s.gpuio" ] || fail "no capture beside the stream"
"$GPUIO" convert -q "$TMP/s.gpuio" -o "$TMP/c.json" || fail "convert failed"
$CMP --stream "$TMP/c.json" "$TMP/s.pftrace" > "$TMP/cmp" 2>&1 || { cat "$TMP/cmp"; fail "the stream differs from the capture's export"; }
echo "finished stream: $(cat "$TMP/cmp")"
$CHECK "$TMP/s.pftrace" > /dev/null || fail "check_trace rejects the streamed trace"
tp_check "$TMP/s.pftrace"

# --- 2 + 3: killed mid-stream, memory flat
head -c 64M /dev/urandom > "$TMP/data"
cat "$TMP/data" > /dev/null
hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
for out in k.pftrace kz.pftrace.gz; do
  spawn -s KILL -o /dev/null -e "$TMP/$out.err" gpuio \
    "$GPUIO" trace -q --stream -o "$TMP/$out" -- "$PREAD" --size 1 "$TMP/data" 50000000 3
  gp=$SPAWNED
  sleep 1.5
  h1=$(hwm $gp)
  n1=$(stat -c %s "$TMP/${out%%.pftrace*}.gpuio" 2>/dev/null || echo 0)
  sleep 2
  h2=$(hwm $gp)
  n2=$(stat -c %s "$TMP/${out%%.pftrace*}.gpuio" 2>/dev/null || echo 0)
  # the workload is gpuio's child: end it too once gpuio is gone
  kids=$(cat /proc/$gp/task/*/children 2>/dev/null)
  for k in $kids; do proc_reg -s KILL "$k" preadloop; done
  kill -KILL $gp
  wait $gp 2>/dev/null || true
  for k in $kids; do kill -KILL "$k" 2>/dev/null; done
  [ -n "$h1" ] && [ -n "$h2" ] || fail "$out: the tracer was gone before the kill"
  echo "$out: tracer peak RSS $h1 KiB at 1.5 s, $h2 KiB at 3.5 s (capture $n1 -> $n2 bytes)"
  [ "$n2" -gt $((n1 * 3 / 2)) ] || fail "$out: the trace did not go on ($n1 -> $n2 bytes of capture)"
  [ "$h2" -le $((h1 + 16384)) ] || fail "$out: memory grows while streaming ($h1 -> $h2 KiB)"
  pycheck stream.killed "$TMP/$out" || fail "$out: the killed stream does not decode"
done
echo "streamed traces are whole, live and flat in memory"
