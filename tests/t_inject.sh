#!/usr/bin/env bash
# t_inject: `gpuio inject` loads a library into running processes and calls a
# function in it (ptrace), and the processes go on exactly as before.
#
# The injected build/tests/libinject_test.so (tests/progs/lib/) leaves ground
# truth: inject_test_mark(PATH) appends "call N loads L pid P tid T" to PATH,
# clobbers all xmm registers and returns 42; inject_test_sleep("S:PATH") notes
# "sleep start" in PATH, sleeps S s, returns 5; inject_test_null returns 7 for
# a NULL argument; inject_test_crash faults. The targets are
# build/tests/inject_target, which check themselves (see its header).
# Checks:
#   A. a process in a loop of clock_nanosleep()s, and one in a single long
#      sleep: every sleep complete (no EINTR, none short), all ticks, exit 0;
#      the second injection reuses the loaded library (loads 1, call 2);
#   B. a process blocked in read() on a pipe: the read still returns the data
#      written after the injections; a NULL --arg; signals sent during a call
#      are delivered once each afterwards; a call that crashes and one that
#      times out are reported and the process is unharmed; missing symbol,
#      non-ELF library, missing file, a second injector while one is running:
#      clean errors naming the cause (dlerror text); SIGSTOP during a call
#      stops the process after it;
#   G. a process in ppoll() with a temporary signal mask: the mask is intact
#      afterwards and a signal that reached the thread during the call is
#      delivered once;
#   C. a multi-threaded process (busy, sleeping, cond-waiting threads): a
#      blocked thread is used, three injections, one that starts a thread
#      (which runs), all threads' checks pass;
#   D. a process whose threads never block (busy with malloc and floating
#      point): a running thread is used and its registers (xmm too) restored;
#   E. a process exiting during the injection (by itself, from another thread,
#      during the call; killed with SIGKILL during the call; exiting while
#      injections run in a loop): a clean error, no hang, exit status intact;
#   F. usage and errors: --help, missing -p/--arg, no such pid, not root,
#      the default library next to the executable and in ../lib/gpuio/.
# After every injection: TracerPid 0 and no thread in a stop (t/T).
source "$(dirname "$0")/lib.sh"
need_root
[ "$(uname -m)" = x86_64 ] || skip "gpuio inject supports x86_64 only"
PROG="$GPUIO_TESTS/inject_target"
LIB="$GPUIO_TESTS/libinject_test.so"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"
[ -f "$LIB" ] || fail "$LIB missing (make test-progs)"

# targets are spawned -s KILL: what is left at the end is SIGKILLed
# inj ARGS...: gpuio inject with the test library; 124 = it hung
INJ=(timeout 30 "$GPUIO" inject --lib "$LIB")
inj() { "${INJ[@]}" "$@"; }

# not_traced PID: no thread of PID is traced or stopped
not_traced() {
  local st tp s
  for st in /proc/"$1"/task/*/status; do
    tp=$(awk '/^TracerPid:/ {print $2}' "$st" 2>/dev/null) || continue
    [ -n "$tp" ] || continue
    [ "$tp" = 0 ] || fail "$st: TracerPid $tp after the injection"
    s=$(awk '/^State:/ {print $2}' "$st" 2>/dev/null)
    case "$s" in t|T) fail "$st: state $s after the injection" ;; esac
  done
}
# wait_grep PATTERN FILE: until FILE has a line matching PATTERN (10 s at most)
wait_grep() { wait_line -m "$2 never showed '$1'" "$1" "$2"; }
# in_syscall PID NR: PID's main thread is blocked in syscall NR
in_syscall() {
  local nr=""
  { read -r nr _ <"/proc/$1/syscall"; } 2>/dev/null || true
  [ "$nr" = "$2" ]
}
# wait_syscall PID NR: until PID's main thread is blocked in syscall NR (10 s at most)
wait_syscall() { wait_for -m "pid $1 never blocked in syscall $2" "syscall $2" in_syscall "$1" "$2"; }
# state_is PID STATE: /proc/PID/status says STATE
state_is() { [ "$(awk '/^State:/ {print $2}' /proc/"$1"/status)" = "$2" ]; }
# expect_ok OUTFILE SYM RET PID: an "injected" line with that return value
expect_ok() {
  grep -qx "injected $(readlink -f "$LIB") into pid $4; $2 returned $3" "$1" ||
    { cat "$1"; fail "expected '$2 returned $3' for pid $4"; }
}
# expect_fail RC ERRFILE REGEX: gpuio inject exited 1 and said REGEX
expect_fail() {
  [ "$1" -ne 124 ] || fail "gpuio inject hung (killed after 30 s)"
  [ "$1" -eq 1 ] || { cat "$2"; fail "gpuio inject exit status $1, expected 1"; }
  grep -Eq -- "$3" "$2" || { cat "$2"; fail "error message does not match '$3'"; }
}
# marks FILE: the "call N loads L pid P" part of each marker line
marks() { sed 's/ tid [0-9]*$//' "$1"; }

# ---- A: sleeping processes ---------------------------------------------------
# (5 s and 6 s of sleeps: six injections must land before they end, on a slow machine too)
spawn -s KILL -l "$TMP/a1.out" A1 "$PROG" sleep 50 100
A1=$SPAWNED
spawn -s KILL -l "$TMP/a2.out" A2 "$PROG" sleep 1 6000
A2=$SPAWNED
wait_grep "tick 2" "$TMP/a1.out"
for i in 1 2 3; do
  for p in "$A1" "$A2"; do
    rc=0; inj -p "$p" --call inject_test_mark --arg "$TMP/a-$p.mark" >"$TMP/a.o" 2>"$TMP/a.e" || rc=$?
    [ $rc -eq 0 ] || { cat "$TMP/a.e"; fail "A: injection $i into pid $p failed ($rc)"; }
    expect_ok "$TMP/a.o" inject_test_mark 42 "$p"
    not_traced "$p"
  done
  sleep 0.2
done
rc=0; wait "$A1" || rc=$?
[ $rc -eq 0 ] || { cat "$TMP/a1.out"; fail "A: sleep loop exited $rc (3: EINTR, 4: a sleep ended early)"; }
rc=0; wait "$A2" || rc=$?
[ $rc -eq 0 ] || { cat "$TMP/a2.out"; fail "A: long sleep exited $rc (3: EINTR, 4: it ended early)"; }
diff <(seq 0 49 | sed 's/^/tick /'; echo "done 50") "$TMP/a1.out" >/dev/null ||
  { cat "$TMP/a1.out"; fail "A: sleep loop output wrong"; }
diff <(echo "tick 0"; echo "done 1") "$TMP/a2.out" >/dev/null ||
  { cat "$TMP/a2.out"; fail "A: long sleep output wrong"; }
for p in "$A1" "$A2"; do
  diff <(for n in 1 2 3; do echo "call $n loads 1 pid $p"; done) <(marks "$TMP/a-$p.mark") ||
    fail "A: marker of pid $p wrong (one load, three calls, in the process)"
done
echo "A ok: sleeps resumed exactly; library loaded once, called 3 times"

# ---- B: blocked in read() on a pipe ------------------------------------------
mkfifo "$TMP/b.fifo"
spawn -s KILL -i "$TMP/b.fifo" -l "$TMP/b.out" B "$PROG" read
B=$SPAWNED
exec 3>"$TMP/b.fifo"
wait_grep ready "$TMP/b.out"
wait_syscall "$B" 0
inj -p "$B" --call inject_test_mark --arg "$TMP/b.mark" >"$TMP/b.o" 2>"$TMP/b.e" ||
  { cat "$TMP/b.e"; fail "B: injection failed"; }
expect_ok "$TMP/b.o" inject_test_mark 42 "$B"
[ "$(marks "$TMP/b.mark")" = "call 1 loads 1 pid $B" ] || fail "B: marker wrong: $(cat "$TMP/b.mark")"
not_traced "$B"
# no --arg: the function gets NULL
inj -p "$B" --call inject_test_null >"$TMP/b.o" 2>"$TMP/b.e" || { cat "$TMP/b.e"; fail "B: NULL arg"; }
expect_ok "$TMP/b.o" inject_test_null 7 "$B"
inj -p "$B" --call inject_test_null --arg x >"$TMP/b.o" 2>"$TMP/b.e" || { cat "$TMP/b.e"; fail "B: arg"; }
expect_ok "$TMP/b.o" inject_test_null 8 "$B"

# signals sent while the call runs: each delivered once, after it
spawn -o "$TMP/b-sig.o" -e "$TMP/b-sig.e" injector \
  "${INJ[@]}" -p "$B" --call inject_test_sleep --arg "1.5:$TMP/b-sig.mark"
IJ=$SPAWNED
wait_grep "sleep start" "$TMP/b-sig.mark"
kill -USR1 "$B"; kill -USR2 "$B"
# meanwhile a second injector is refused, naming the first
rc=0; inj -p "$B" --call inject_test_mark --arg "$TMP/b.mark" >/dev/null 2>"$TMP/b2.e" || rc=$?
expect_fail $rc "$TMP/b2.e" "already traced by pid [0-9]+"
rc=0; wait $IJ || rc=$?
[ $rc -eq 0 ] || { cat "$TMP/b-sig.e"; fail "B: injection with signals failed ($rc)"; }
expect_ok "$TMP/b-sig.o" inject_test_sleep 5 "$B"
not_traced "$B"
# SIGSTOP (cannot be blocked) during a call: the process stops after it
spawn -o "$TMP/b-sig.o" -e "$TMP/b-sig.e" injector \
  "${INJ[@]}" -p "$B" --call inject_test_sleep --arg "1:$TMP/b-stop.mark"
IJ=$SPAWNED
wait_grep "sleep start" "$TMP/b-stop.mark"
kill -STOP "$B"
rc=0; wait $IJ || rc=$?
[ $rc -eq 0 ] || { cat "$TMP/b-sig.e"; fail "B: injection with SIGSTOP failed ($rc)"; }
wait_for -t 5 -m "B: SIGSTOP sent during the call was lost" "state T" state_is "$B" T
[ "$(awk '/^TracerPid:/ {print $2}' /proc/"$B"/status)" = 0 ] || fail "B: still traced after SIGSTOP"
kill -CONT "$B"

# a crashing call: reported, dropped, the process unharmed
rc=0; inj -p "$B" --call inject_test_crash >/dev/null 2>"$TMP/b.e" || rc=$?
expect_fail $rc "$TMP/b.e" "inject_test_crash crashed in pid $B \(signal 11"
not_traced "$B"
# a call that does not return in time: abandoned, thread restored
rc=0; inj -p "$B" --timeout 1 --call inject_test_sleep --arg 3 >/dev/null 2>"$TMP/b.e" || rc=$?
expect_fail $rc "$TMP/b.e" "inject_test_sleep did not return within 1.0 s"
not_traced "$B"
# errors the loader reports (dlerror text)
rc=0; inj -p "$B" --call nosuch_function >/dev/null 2>"$TMP/b.e" || rc=$?
expect_fail $rc "$TMP/b.e" "no symbol nosuch_function in it .*undefined symbol: nosuch_function"
echo "not an ELF file" >"$TMP/notelf.so"
rc=0; timeout 30 "$GPUIO" inject -p "$B" --lib "$TMP/notelf.so" --call f >/dev/null 2>"$TMP/b.e" || rc=$?
expect_fail $rc "$TMP/b.e" "dlopen in pid $B failed: .*notelf.so: (invalid ELF header|file too short)"
rc=0; timeout 30 "$GPUIO" inject -p "$B" --lib "$TMP/missing.so" --call f >/dev/null 2>"$TMP/b.e" || rc=$?
expect_fail $rc "$TMP/b.e" "missing.so: No such file"
not_traced "$B"

# the read still gets the data written now, and the process exits normally
echo "hello pipe" >&3
exec 3>&-
rc=0; wait "$B" || rc=$?
[ $rc -eq 0 ] || { cat "$TMP/b.out"; fail "B: reader exited $rc"; }
diff <(printf 'ready\ngot 11 bytes: hello pipe\nusr1=1 usr2=1\n') "$TMP/b.out" >/dev/null ||
  { cat "$TMP/b.out"; fail "B: reader output wrong (read restarted? signals once each?)"; }
echo "B ok: read resumed with its data; signals kept; crash, timeout, loader errors clean"

# ---- G: blocked in ppoll() with a temporary signal mask ------------------------
# The thread's mask is left alone (PTRACE_SETSIGMASK would drop ppoll's
# temporary mask), so a signal can reach it during the call: it is kept and
# delivered at detach; the application's own mask is intact at the end.
mkfifo "$TMP/g.fifo"
spawn -s KILL -i "$TMP/g.fifo" -l "$TMP/g.out" G "$PROG" ppoll
G=$SPAWNED
exec 4>"$TMP/g.fifo"
wait_grep ready "$TMP/g.out"
wait_syscall "$G" 271
spawn -o "$TMP/g.o" -e "$TMP/g.e" injector \
  "${INJ[@]}" -v -p "$G" --call inject_test_sleep --arg "1.5:$TMP/g.mark"
IJ=$SPAWNED
wait_grep "sleep start" "$TMP/g.mark"
kill -USR1 "$G"; kill -USR2 "$G"
rc=0; wait $IJ || rc=$?
[ $rc -eq 0 ] || { cat "$TMP/g.e"; fail "G: injection failed ($rc)"; }
expect_ok "$TMP/g.o" inject_test_sleep 5 "$G"
grep -q "(blocked in ppoll); signals that came meanwhile were re-sent" "$TMP/g.e" ||
  { cat "$TMP/g.e"; fail "G: SIGUSR1 should have reached the thread during the call"; }
not_traced "$G"
echo "ppoll data" >&4
exec 4>&-
rc=0; wait "$G" || rc=$?
[ $rc -eq 0 ] || { cat "$TMP/g.out"; fail "G: ppoll process exited $rc"; }
diff <(printf 'ready\ngot 11 bytes: ppoll data\nusr1=1 usr2=1\nusr2_blocked=0\n') "$TMP/g.out" >/dev/null ||
  { cat "$TMP/g.out"; fail "G: output wrong (signal lost, or ppoll's mask left behind)"; }
echo "G ok: ppoll's temporary mask intact; a signal during the call delivered after"

# ---- C: a multi-threaded process ------------------------------------------------
mkfifo "$TMP/c.fifo"
spawn -s KILL -i "$TMP/c.fifo" -l "$TMP/c.out" C "$PROG" threads
C=$SPAWNED
exec 4>"$TMP/c.fifo"
wait_grep ready "$TMP/c.out"
for i in 1 2 3; do
  inj -v -p "$C" --call inject_test_mark --arg "$TMP/c.mark" >"$TMP/c.o" 2>"$TMP/c.e" ||
    { cat "$TMP/c.e"; fail "C: injection $i failed"; }
  expect_ok "$TMP/c.o" inject_test_mark 42 "$C"
  grep -q "used thread [0-9]* of pid $C (blocked in" "$TMP/c.e" ||
    { cat "$TMP/c.e"; fail "C: a thread blocked in a syscall should have been used"; }
  not_traced "$C"
done
diff <(for n in 1 2 3; do echo "call $n loads 1 pid $C"; done) <(marks "$TMP/c.mark") ||
  fail "C: marker wrong"
# a call that starts a thread of its own, as the collector does
inj -p "$C" --call inject_test_thread --arg "$TMP/c-thread.mark" >"$TMP/c.o" 2>"$TMP/c.e" ||
  { cat "$TMP/c.e"; fail "C: thread-starting injection failed"; }
expect_ok "$TMP/c.o" inject_test_thread 0 "$C"
wait_grep "thread ran" "$TMP/c-thread.mark"
not_traced "$C"
exec 4>&-
rc=0; wait "$C" || rc=$?
[ $rc -eq 0 ] || { cat "$TMP/c.out"; fail "C: threads exited $rc"; }
grep -q "^threads ok rounds=" "$TMP/c.out" || { cat "$TMP/c.out"; fail "C: threads not ok"; }
echo "C ok: multi-threaded process unharmed"

# ---- D: only running threads ----------------------------------------------------
spawn -s KILL -l "$TMP/d.out" D "$PROG" busy 1
D=$SPAWNED
wait_grep ready "$TMP/d.out"
for i in 1 2 3; do
  inj -v -p "$D" --call inject_test_mark --arg "$TMP/d.mark" >"$TMP/d.o" 2>"$TMP/d.e" ||
    { cat "$TMP/d.e"; fail "D: injection $i failed"; }
  expect_ok "$TMP/d.o" inject_test_mark 42 "$D"
  not_traced "$D"
done
grep -q "(running)" "$TMP/d.e" || { cat "$TMP/d.e"; fail "D: expected a running thread to be used"; }
kill -TERM "$D"
rc=0; wait "$D" || rc=$?
[ $rc -eq 0 ] || { cat "$TMP/d.out"; fail "D: busy process exited $rc (5: registers clobbered)"; }
[ "$(tail -n1 "$TMP/d.out")" = "busy ok" ] || { cat "$TMP/d.out"; fail "D: busy not ok"; }
echo "D ok: running threads interrupted and restored (xmm included)"

# ---- E: processes exiting during the injection --------------------------------
# E1: another thread calls exit(0) while the injected call sleeps
spawn -s KILL -l "$TMP/e1.out" E1 "$PROG" exit 1500
E=$SPAWNED
wait_grep ready "$TMP/e1.out"
rc=0; inj -p "$E" --call inject_test_sleep --arg "5:$TMP/e1.mark" >/dev/null 2>"$TMP/e1.e" || rc=$?
if [ -s "$TMP/e1.mark" ]; then
  expect_fail $rc "$TMP/e1.e" "pid $E exited during the injection \(inject_test_sleep\)"
else
  expect_fail $rc "$TMP/e1.e" "no such process|exited during"
fi
rc=0; wait "$E" || rc=$?
[ $rc -eq 0 ] || fail "E1: the process's own exit status got lost ($rc)"
# E2: SIGKILL during the call
mkfifo "$TMP/e2.fifo"
spawn -s KILL -i "$TMP/e2.fifo" -l "$TMP/e2.out" E2 "$PROG" read
E=$SPAWNED
exec 5>"$TMP/e2.fifo"
wait_grep ready "$TMP/e2.out"
spawn -o /dev/null -e "$TMP/e2.e" injector \
  "${INJ[@]}" -p "$E" --call inject_test_sleep --arg "5:$TMP/e2.mark"
IJ=$SPAWNED
wait_grep "sleep start" "$TMP/e2.mark"
kill -9 "$E"
rc=0; wait $IJ || rc=$?
expect_fail $rc "$TMP/e2.e" "pid $E exited during the injection"
rc=0; wait "$E" || rc=$?
[ $rc -eq 137 ] || fail "E2: killed process exit status $rc, expected 137"
exec 5>&-
# E3: injecting in a loop into a process that exits on its own
spawn -s KILL -l "$TMP/e3.out" E3 "$PROG" exit 400
E=$SPAWNED
wait_grep ready "$TMP/e3.out"
ok=0
for i in $(seq 500); do
  rc=0; inj -p "$E" --call inject_test_mark --arg "$TMP/e3.mark" >/dev/null 2>"$TMP/e3.e" || rc=$?
  [ $rc -eq 0 ] && { ok=$((ok + 1)); continue; }
  expect_fail $rc "$TMP/e3.e" "no such process|exited during"
  break
done
[ $rc -eq 1 ] || fail "E3: the process never went away"
rc=0; wait "$E" || rc=$?
[ $rc -eq 0 ] || fail "E3: exit status $rc, expected 0"
# the last call may have run and the process exited before it returned
# ("exited during the injection"): then the marker has one call more
marks=$(wc -l <"$TMP/e3.mark" 2>/dev/null || echo 0)
[ "$marks" -eq "$ok" ] || { [ "$marks" -eq $((ok + 1)) ] && grep -q "exited during" "$TMP/e3.e"; } ||
  fail "E3: $ok injections succeeded but the marker has $marks calls ($(cat "$TMP/e3.e"))"
echo "E ok: exits during injection are clean errors ($ok injections before the exit in E3)"

# ---- F: usage and errors ---------------------------------------------------------
"$GPUIO" inject --help >"$TMP/f.o" || fail "F: --help exit status"
grep -q "usage: gpuio inject" "$TMP/f.o" || fail "F: --help text"
rc=0; "$GPUIO" inject --arg /tmp 2>"$TMP/f.e" || rc=$?
[ $rc -eq 2 ] && grep -q "which process" "$TMP/f.e" || fail "F: missing -p: $rc $(cat "$TMP/f.e")"
rc=0; "$GPUIO" inject -p 1 2>"$TMP/f.e" || rc=$?
[ $rc -eq 2 ] && grep -q "needs its output directory" "$TMP/f.e" || fail "F: missing --arg: $rc"
NOPID=$(( $(cat /proc/sys/kernel/pid_max) + 1 ))
rc=0; inj -p "$NOPID" --call inject_test_mark --arg x >/dev/null 2>"$TMP/f.e" || rc=$?
expect_fail $rc "$TMP/f.e" "pid $NOPID: no such process"

mkfifo "$TMP/f.fifo"
spawn -s KILL -i "$TMP/f.fifo" -l "$TMP/f.out" F "$PROG" read
F=$SPAWNED
exec 3>"$TMP/f.fifo"
wait_grep ready "$TMP/f.out"
# the default call needs the collector's symbol
rc=0; inj -p "$F" --arg "$TMP" >/dev/null 2>"$TMP/f.e" || rc=$?
expect_fail $rc "$TMP/f.e" "no symbol gpuio_cupti_attach"
# the default library: beside the executable, then ../lib/gpuio/
mkdir -p "$TMP/i1" "$TMP/i2/bin" "$TMP/i2/lib/gpuio"
cp "$GPUIO" "$TMP/i1/gpuio"; cp "$GPUIO" "$TMP/i2/bin/gpuio"
rc=0; "$TMP/i1/gpuio" inject -p "$F" --call inject_test_mark --arg x 2>"$TMP/f.e" || rc=$?
expect_fail $rc "$TMP/f.e" "no libgpuio-cupti.so in $TMP/i1/ nor in $TMP/i1/../lib/gpuio/"
cp "$LIB" "$TMP/i1/libgpuio-cupti.so"; cp "$LIB" "$TMP/i2/lib/gpuio/libgpuio-cupti.so"
"$TMP/i1/gpuio" inject -p "$F" --call inject_test_mark --arg "$TMP/f.mark" >"$TMP/f.o" 2>"$TMP/f.e" ||
  { cat "$TMP/f.e"; fail "F: default library beside gpuio"; }
grep -qx "injected $TMP/i1/libgpuio-cupti.so into pid $F; inject_test_mark returned 42" "$TMP/f.o" ||
  { cat "$TMP/f.o"; fail "F: default library beside gpuio not used"; }
"$TMP/i2/bin/gpuio" inject -p "$F" --call inject_test_mark --arg "$TMP/f.mark" >"$TMP/f.o" 2>"$TMP/f.e" ||
  { cat "$TMP/f.e"; fail "F: default library in ../lib/gpuio"; }
grep -qx "injected $TMP/i2/bin/../lib/gpuio/libgpuio-cupti.so into pid $F; inject_test_mark returned 42" "$TMP/f.o" ||
  { cat "$TMP/f.o"; fail "F: default library in ../lib/gpuio not used"; }
# two different files: each loaded once (its own counter)
[ "$(marks "$TMP/f.mark")" = "call 1 loads 1 pid $F
call 1 loads 1 pid $F" ] || fail "F: markers wrong: $(cat "$TMP/f.mark")"
# not root: a clear permission error (the binary must be reachable by nobody)
chmod 755 "$TMP" "$TMP/i1" "$TMP/i1/gpuio"
if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/i1/gpuio" --help >/dev/null 2>&1; then
  rc=0; setpriv --reuid=65534 --regid=65534 --clear-groups timeout 30 "$TMP/i1/gpuio" inject -p "$F" \
    --call inject_test_mark --arg x >/dev/null 2>"$TMP/f.e" || rc=$?
  expect_fail $rc "$TMP/f.e" "pid $F: permission denied: run as root"
else
  echo "note: could not run gpuio as nobody (setpriv); not-root case not checked"
fi
not_traced "$F"
echo "bye" >&3
exec 3>&-
rc=0; wait "$F" || rc=$?
[ $rc -eq 0 ] || fail "F: reader exited $rc"
grep -qx "got 4 bytes: bye" "$TMP/f.out" || { cat "$TMP/f.out"; fail "F: reader output wrong"; }
echo "F ok: usage, no such pid, not root, default library paths"
echo "PASS"
