#!/usr/bin/env bash
# t_lib: the test harness itself (tests/lib/proc.sh, tests/lib/tp.sh), so that
# what every test leans on is known to work. Each case runs a small script
# that sources tests/lib.sh the way a test does, in a bash of its own:
#   - at exit (pass, fail, skip, set -e, SIGTERM) every process it spawned or
#     registered is gone, the on_exit commands ran (last given first), $TMP is
#     removed, and the script's exit status is kept (0, 1, 77, 143);
#   - a process that ignores its signal is killed after PROC_STOP_SECS; a
#     registered pid that is no longer the registered process (another start
#     time: a reused pid) is left alone; spawn -i reads a FIFO whose writer
#     opens later; spawn -C runs in a directory;
#   - the waits: a line that comes in time; a timeout fails with what was
#     awaited and the file's last lines; poll returns 1; wait_exit gives a
#     child's exit status; wait_pid, wait_file, wait_nonempty, wait_lines;
#   - TRACE_PROCESSOR selects Perfetto's importer, a missing one is "none";
#   - no test installs an EXIT trap of its own (it would replace the
#     library's: registered processes and $TMP left behind).
source "$(dirname "$0")/lib.sh"
LIB="$GPUIO_SRC/tests/lib.sh"

# case NAME WANT_RC SCRIPT: run SCRIPT (after sourcing lib.sh) in its own bash;
# its output in $TMP/NAME.out, the lib's $TMP in $TMP/NAME.tmp
case_() {
  local name=$1 want=$2 rc=0
  printf 'source %q\necho "$TMP" > %q\n%s\n' "$LIB" "$TMP/$name.tmp" "$3" > "$TMP/$name.sh"
  PROC_STOP_SECS=${STOP:-10} bash "$TMP/$name.sh" > "$TMP/$name.out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat "$TMP/$name.out"; fail "$name: exit $rc, want $want"; }
  [ ! -e "$(cat "$TMP/$name.tmp")" ] || fail "$name: the script's \$TMP is still there"
  echo "ok   $name: exit $rc, \$TMP removed"
}
# gone PIDFILE...: none of the pids written there lives
gone() {
  local f p
  for f in "$@"; do
    p=$(cat "$f")
    ! proc_alive "$p" || fail "pid $p ($f) still runs after the script ended"
  done
}

# ---- at exit: pass, fail, skip, set -e, SIGTERM
for end in "pass:true:0" "fail:fail boom:1" "skip:skip why:77" "errexit:false:1"; do
  IFS=: read -r label cmd want <<< "$end"
  rm -f "$TMP"/p*.pid "$TMP/order"
  case_ "end-$label" "$want" "
spawn sleeper sleep 300; echo \$SPAWNED > $TMP/p1.pid
sh -c 'exec sleep 300' & proc_reg \$! other; echo \$! > $TMP/p2.pid
spawn -s KILL killme sleep 300; echo \$SPAWNED > $TMP/p3.pid
on_exit 'echo first >> $TMP/order'
on_exit 'echo second >> $TMP/order'
$cmd"
  gone "$TMP"/p1.pid "$TMP"/p2.pid "$TMP"/p3.pid
  [ "$(tr '\n' ' ' < "$TMP/order")" = "second first " ] || fail "on_exit order: $(cat "$TMP/order")"
done
grep -q "FAIL: boom" "$TMP/end-fail.out" || fail "fail's message lost"

# SIGTERM to the script while it waits: exit 143, processes gone
rm -f "$TMP"/p*.pid
printf 'source %q\nspawn s sleep 300; echo $SPAWNED > %q\necho $$ > %q\nsleep 300 & wait $!\n' \
  "$LIB" "$TMP/p1.pid" "$TMP/self.pid" > "$TMP/term.sh"
bash "$TMP/term.sh" > "$TMP/term.out" 2>&1 & T=$!
wait_nonempty "$TMP/p1.pid"
wait_nonempty "$TMP/self.pid"
sleep 0.2
kill -TERM "$(cat "$TMP/self.pid")"
rc=0; wait "$T" || rc=$?
[ "$rc" = 143 ] || { cat "$TMP/term.out"; fail "SIGTERM: exit $rc, want 143"; }
gone "$TMP/p1.pid"
echo "ok   SIGTERM: exit 143, the spawned process gone"

# a process that ignores SIGTERM: SIGKILL after PROC_STOP_SECS
STOP=1 case_ stubborn 0 "
spawn stubborn sh -c 'trap \"\" TERM; echo \$\$ > $TMP/p1.pid; while :; do sleep 0.1; done'
wait_nonempty $TMP/p1.pid"
gone "$TMP/p1.pid"
grep -q "did not end on SIGTERM: SIGKILL" "$TMP/stubborn.out" || fail "stubborn: not said"
echo "ok   a process ignoring SIGTERM is killed after PROC_STOP_SECS"

# a registered pid whose start time is not the registered one is not touched
sleep 300 & OTHER=$!
proc_reg "$OTHER" outsider
case_ reused 0 "
proc_reg $OTHER reused
_PROC_START[$OTHER]=1"
proc_alive "$OTHER" || fail "reused: a pid registered with another start time was killed"
echo "ok   a pid that is another process now is left alone"

# spawn -i FIFO (writer opened after) and -C DIR
mkfifo "$TMP/fifo"; mkdir "$TMP/dir"
spawn -i "$TMP/fifo" -o "$TMP/cat.out" -C "$TMP/dir" cat sh -c 'pwd; cat'
exec 5> "$TMP/fifo"
echo through >&5
exec 5>&-
wait_exit "$SPAWNED"
[ "$EXIT_STATUS" = 0 ] && [ "$(cat "$TMP/cat.out")" = "$TMP/dir
through" ] || fail "spawn -i/-C: status $EXIT_STATUS, output $(cat "$TMP/cat.out")"
echo "ok   spawn -i FIFO -C DIR"

# ---- waits
( sleep 0.3; echo "line one"; sleep 0.2; echo "the second line" ) > "$TMP/slow.txt" &
wait_line "second" "$TMP/slow.txt"
wait_lines "$TMP/slow.txt" 2
wait_line -F -x "line one" "$TMP/slow.txt"
: > "$TMP/empty"
poll -t 0.2 grep -q nothing "$TMP/empty" && fail "poll succeeded on a missing line"
case_ timeout 1 "echo partial > $TMP/partial; wait_line -t 0.3 never $TMP/partial"
grep -q "timed out after 0.3 s waiting for a line 'never' in $TMP/partial" "$TMP/timeout.out" &&
  grep -q "^partial" "$TMP/timeout.out" || { cat "$TMP/timeout.out"; fail "timeout message"; }
case_ lines 1 "echo a > $TMP/partial; wait_lines -t 0.2 $TMP/partial 5"
grep -q "FAIL: $TMP/partial never reached 5 lines" "$TMP/lines.out" || { cat "$TMP/lines.out"; fail "wait_lines message"; }
case_ msg 1 "wait_file -t 0.2 -m 'the program never got ready' $TMP/nosuch"
grep -q "FAIL: the program never got ready" "$TMP/msg.out" || { cat "$TMP/msg.out"; fail "-m message"; }
sh -c 'sleep 0.3; exit 3' & P=$!
wait_pid "$P"
wait_exit -t 5 "$P"
[ "$EXIT_STATUS" = 3 ] || fail "wait_exit: status $EXIT_STATUS, want 3"
( sleep 0.2; touch "$TMP/later" ) &
wait_file "$TMP/later"
( sleep 0.2; echo x > "$TMP/later2" ) &
wait_nonempty "$TMP/later2"
wait_for "a true command" true
echo "ok   waits: lines, files, pids, exit status; timeouts say what they awaited"

# ---- Perfetto's importer: TRACE_PROCESSOR selects it
printf '#!/bin/sh\n' > "$TMP/tp"; chmod +x "$TMP/tp"
[ "$(TRACE_PROCESSOR=$TMP/tp tp_path)" = "$TMP/tp" ] || fail "TRACE_PROCESSOR not used"
TRACE_PROCESSOR=/nonexistent tp_path > /dev/null && fail "a missing TRACE_PROCESSOR is not 'none'"
python3 -c 'import os, sys; sys.path.insert(0, sys.argv[1]); import tp_check; p = tp_check.tp_path(); print(p and os.path.realpath(p))' \
  "$GPUIO_SRC/tests" > "$TMP/py.tp"
[ "$(cat "$TMP/py.tp")" = "$(realpath "$(tp_path)" 2>/dev/null || echo None)" ] || fail "tp_check.py and lib/tp.sh disagree: $(cat "$TMP/py.tp") vs $(tp_path || echo None)"
echo "ok   TRACE_PROCESSOR selects the importer; here: $(tp_path || echo none)"

# ---- no test replaces the library's EXIT trap
# (the tests and the libraries they source; tests/gpu and tests/vm scripts stand alone)
own=$(grep -lE "^[^#]*trap .*(EXIT|0)\s*$" "$GPUIO_SRC"/tests/t_*.sh "$GPUIO_SRC"/tests/*_lib.sh || true)
[ -z "$own" ] || fail "EXIT traps of their own (use on_exit / spawn): $own"
echo "PASS t_lib"
