#!/usr/bin/env bash
# t_wait_kinds: what a sleeping thread was in. tests/progs/wait_kinds.c
# sleeps once in each kind of wait for 80 ms, timing each itself with
# CLOCK_MONOTONIC: nanosleep; a futex (a condition its helper thread
# signals); poll on a pipe; read on a pipe; recv on a Unix socket; wait4 on
# a child. Traced, its report (the program's thread is the busiest: the
# stand-in loop) must put each phase in its loop_us kind (sleep, futex,
# poll, pipe, socket, child) and in blocked_in with the syscall and the fd's
# type, within 10% + 5 ms of the program's own time; no wait for data, and
# less than 5 ms left as other_sleep (tests/checks/wait_truth.py). Twice:
# with socket calls traced (the recv is then the thread's own call, in
# loop_us.socket) and with --no-sockets (only its WAIT record says so).
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/wait_kinds"
[ -x "$PROG" ] || fail "missing $PROG (run: make test-progs)"

# socket calls traced (the default): the recv is the thread's own call; with
# --no-sockets only its WAIT record says where it slept
for socks in traced untraced; do
  opt=()
  [ "$socks" = untraced ] && opt=(--no-sockets)
  "$GPUIO" trace -q --no-export "${opt[@]}" --capture "$TMP/w.gpuio" -- "$PROG" 80 > "$TMP/prog.json" 2> "$TMP/trace.log" ||
    { cat "$TMP/trace.log"; fail "gpuio trace failed"; }
  "$GPUIO" report --json "$TMP/w.gpuio" > "$TMP/report.json" || fail "gpuio report failed"
  pycheck wait_truth.wait_kinds "$TMP/prog.json" "$TMP/report.json" "$socks" ||
    fail "the report's waits differ from the program's (socket calls $socks)"
done
# and the text names them the same way
"$GPUIO" report "$TMP/w.gpuio" > "$TMP/report.txt" || fail "gpuio report (text) failed"
# the rows of the table under "its other sleeps were in:" (indented deeper than it)
awk '/its other sleeps were in:/ { match($0, /^ */); ind = RLENGTH; on = 1; next }
     on { match($0, /^ */); if (RLENGTH <= ind) exit; print }' "$TMP/report.txt" >"$TMP/sleeps.txt"
for want in "poll on a pipe" "read on a pipe" "recvfrom on a socket" "wait4" "futex" "clock_nanosleep"; do  # --no-sockets run
  grep -q "^ *$want  " "$TMP/sleeps.txt" || { cat "$TMP/sleeps.txt"; fail "the text does not name '$want'"; }
done
echo "every kind of wait named, within 10% + 5 ms of the program's own time"
