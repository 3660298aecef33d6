#!/usr/bin/env bash
# t_signals: Ctrl-C, SIGTERM and SIGKILL mid-trace leave a usable trace.
#
# Workload: build/tests/attach_reader (512-byte preads, logged with
# CLOCK_MONOTONIC). Checks:
#   - attach mode, SIGINT / SIGTERM to gpuio after ~1 s: exit 0, it says
#     "interrupted" / "terminated", the JSON passes the checker, the trace
#     info says capture_complete, and the reads are there (>= 100);
#   - launch mode, Ctrl-C (SIGINT to the whole process group, as a terminal
#     does): the command dies of SIGINT, gpuio exits 130 (the command's
#     status, like a shell) with a valid trace; SIGTERM to gpuio alone: it
#     passes TERM on to the command and exits 143, valid trace;
#   - SIGKILL of gpuio (attach mode, a slow reader: 1 read / 5 ms) after
#     ~2 s: `gpuio convert` reads the capture up to its last whole record
#     (exit 0, checker passes), and it holds every read logged in the first
#     second of tracing (the collector streams records to the file while it
#     runs; it does not keep them in memory or in the ring buffer).
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/attach_reader"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"
command -v setsid >/dev/null || skip "setsid (util-linux) not installed"

# what is left running at the end is SIGKILLed (spawn -s KILL)
wait_tracing() { # ERRFILE: until gpuio says it is tracing
  wait_line -m "gpuio never started tracing" "tracing" "$1"
}
# has_reads TRACE MIN: >= MIN preads of the data file, capture_complete
has_reads() {
  pycheck reader_log.has_reads "$1" "$2" "$TMP/data.bin"
}

head -c $((8 << 20)) /dev/urandom >"$TMP/data.bin"

# ---- attach mode: SIGINT and SIGTERM -----------------------------------
for sig in INT TERM; do
  spawn -s KILL reader "$PROG" "$TMP/data.bin" "$TMP/$sig.log" 200 0
  RPID=$SPAWNED
  wait_lines "$TMP/$sig.log" 10
  spawn -s KILL -e "$TMP/a-$sig.err" gpuio "$GPUIO" trace -p "$RPID" -o "$TMP/a-$sig.json"
  GPID=$SPAWNED
  wait_tracing "$TMP/a-$sig.err"
  sleep 1
  kill -"$sig" "$GPID"
  rc=0; wait "$GPID" || rc=$?
  cat "$TMP/a-$sig.err"
  [ "$rc" -eq 0 ] || fail "attach, SIG$sig: gpuio exited $rc, want 0"
  want=$([ "$sig" = INT ] && echo interrupted || echo terminated)
  grep -q "$want" "$TMP/a-$sig.err" || fail "attach, SIG$sig: gpuio did not say '$want'"
  kill -0 "$RPID" 2>/dev/null || fail "attach, SIG$sig: the traced process died with gpuio"
  kill "$RPID"; wait "$RPID" 2>/dev/null || true; proc_unreg "$RPID"
  check_struct "$TMP/a-$sig.json"
  has_reads "$TMP/a-$sig.json" 100 || fail "attach, SIG$sig: trace incomplete"
done

# ---- launch mode: Ctrl-C to the process group, SIGTERM to gpuio --------
spawn -s KILL -e "$TMP/l-INT.err" gpuio \
  setsid "$GPUIO" trace -o "$TMP/l-INT.json" -- "$PROG" "$TMP/data.bin" "$TMP/l-INT.log" 200 0
GPID=$SPAWNED
wait_tracing "$TMP/l-INT.err"
wait_lines "$TMP/l-INT.log" 100
kill -INT -- -"$GPID"   # setsid: gpuio leads its own process group
rc=0; wait "$GPID" || rc=$?
cat "$TMP/l-INT.err"
[ "$rc" -eq 130 ] || fail "launch, Ctrl-C: gpuio exited $rc, want 130 (the command died of SIGINT)"
check_struct "$TMP/l-INT.json"
has_reads "$TMP/l-INT.json" 100 || fail "launch, Ctrl-C: trace incomplete"

spawn -s KILL -e "$TMP/l-TERM.err" gpuio \
  "$GPUIO" trace -o "$TMP/l-TERM.json" -- "$PROG" "$TMP/data.bin" "$TMP/l-TERM.log" 200 0
GPID=$SPAWNED
wait_tracing "$TMP/l-TERM.err"
wait_lines "$TMP/l-TERM.log" 100
kill -TERM "$GPID"
rc=0; wait "$GPID" || rc=$?
cat "$TMP/l-TERM.err"
[ "$rc" -eq 143 ] || fail "launch, SIGTERM: gpuio exited $rc, want 143 (it passes TERM to the command)"
pgrep -f "$TMP/l-TERM.log" >/dev/null && fail "launch, SIGTERM: the command is still running"
check_struct "$TMP/l-TERM.json"
has_reads "$TMP/l-TERM.json" 100 || fail "launch, SIGTERM: trace incomplete"

# ---- SIGKILL: the capture on disk is readable and current ----------------
spawn -s KILL reader "$PROG" "$TMP/data.bin" "$TMP/k.log" 5000 0
RPID=$SPAWNED
wait_lines "$TMP/k.log" 5
spawn -s KILL -e "$TMP/k.err" gpuio "$GPUIO" trace -p "$RPID" -o "$TMP/k.json"
GPID=$SPAWNED
wait_tracing "$TMP/k.err"
T0=$(python3 -c 'import time; print(time.monotonic_ns())')
sleep 2
kill -KILL "$GPID"
wait "$GPID" 2>/dev/null || true
kill "$RPID"; wait "$RPID" 2>/dev/null || true; proc_unreg "$RPID"
[ -s "$TMP/k.gpuio" ] || fail "SIGKILL: no capture file"
[ ! -e "$TMP/k.json" ] || fail "SIGKILL: a JSON appeared although gpuio was killed before exporting"
"$GPUIO" convert "$TMP/k.gpuio" -o "$TMP/k-conv.json" 2>"$TMP/conv.err" \
  || { cat "$TMP/conv.err"; fail "SIGKILL: gpuio convert of the killed capture exited non-zero"; }
cat "$TMP/conv.err"
check_struct "$TMP/k-conv.json"
pycheck reader_log.killed_capture "$TMP/k-conv.json" "$TMP/k.log" "$TMP/data.bin" "$T0" ||
  fail "SIGKILL: the capture lost what was traced before the kill"
echo "PASS: SIGINT/SIGTERM end cleanly with a valid trace; a SIGKILLed capture converts and is current"
