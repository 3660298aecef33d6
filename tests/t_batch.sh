#!/usr/bin/env bash
# t_batch: batched VFS records (bpf/trace/batch.bpf.h) reach the capture
# whole, in time, and are counted when lost.
#
# Workload: build/tests/batch_reader, attached with -p while it waits for
# SIGUSR1, then N 4 KiB preads of a known file (read i at block i % B), one
# write of "done N t0 t1" to its log, then it holds. Its traced file calls
# are exactly those. Checks, against what the program did:
#   A. a thread that then blocks for seconds: a copy of the capture taken
#      while it still sleeps (~0.5 s after its last call) already holds every
#      one of its N reads and its write (the switch-out sent the batch), each
#      inside the program's own span; the trace says fewer ring-buffer
#      reservations than records (-v);
#   B. a thread still on its CPU (SCHED_FIFO, spinning, no system call)
#      when the trace ends (SIGINT right after its last call): the final
#      trace holds every read (the end-of-trace iterator sent them);
#   C. the ring buffer full (gpuio stopped with SIGSTOP while 200,000 reads
#      run, --ringbuf 1M): reads kept + VFS records counted lost = the calls
#      done, exactly, and some were lost; batched and with --no-batch.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/batch_reader"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

# N not a multiple of the batch (16): a partial batch is left at the end
N=1003
head -c $((1 << 20)) /dev/urandom >"$TMP/data.bin"
cat "$TMP/data.bin" >/dev/null

# ---- A: the thread blocks after its calls --------------------------------
spawn -s KILL reader "$PROG" "$TMP/data.bin" "$TMP/a.log" $N 5000 sleep
RPID=$SPAWNED
spawn -e "$TMP/a.err" gpuio "$GPUIO" trace -v -p "$RPID" --no-export --capture "$TMP/a.gpuio"
GPID=$SPAWNED
wait_line -m "gpuio never started tracing" "tracing" "$TMP/a.err"
kill -USR1 "$RPID"
wait_line -m "batch_reader did not finish its reads" "^done" "$TMP/a.log"
# the collector writes what it took every 100 ms: half a second is five polls
sleep 0.5
cp "$TMP/a.gpuio" "$TMP/a-mid.gpuio"
proc_alive "$RPID" || fail "A: batch_reader no longer sleeps: the copy proves nothing"
"$GPUIO" convert "$TMP/a-mid.gpuio" -o "$TMP/a-mid.json" 2>"$TMP/a-mid.err" ||
  { cat "$TMP/a-mid.err"; fail "A: convert of the capture copied mid-trace"; }
pycheck batch_truth.all_reads "$TMP/a-mid.json" "$TMP/a.log" "$TMP/data.bin" "$RPID" \
  "blocked, copied mid-trace" || fail "A: records of a blocked thread not in the capture yet"
wait_exit -t 20 "$GPID"
[ "$EXIT_STATUS" = 0 ] || { cat "$TMP/a.err"; fail "A: gpuio exited $EXIT_STATUS"; }
line=$(grep -F "ring-buffer batches" "$TMP/a.err") || { cat "$TMP/a.err"; fail "A: -v said nothing of batches"; }
echo "$line"
read -r recs batches < <(sed -E 's/.*VFS records: ([0-9]+), [0-9]+ of them in ([0-9]+) ring-buffer.*/\1 \2/' <<<"$line")
[ "$recs" -ge $((N + 1)) ] && [ "$batches" -ge 1 ] && [ $((batches * 4)) -le "$recs" ] ||
  fail "A: $batches ring-buffer batches for $recs records: not fewer reservations than calls"

# ---- B: the thread is on its CPU when the trace ends --------------------
# spin-rt: SCHED_FIFO on the last CPU, so nothing preempts it (for 900 ms,
# under the kernel's RT throttling of 950 ms a second)
# and its last records wait in its batch; the trace is ended right after its
# calls: only the end-of-trace iterator can send them
# (it needs a second CPU for everything else, and SCHED_FIFO allowed here)
if [ "$(nproc)" -lt 2 ]; then
  echo "NOTE: B not run: it needs 2 CPUs (the spinning reader takes one)"
elif ! chrt -f 10 true 2>/dev/null; then
  echo "NOTE: B not run: SCHED_FIFO is refused here (chrt -f 10 true failed)"
else
  spawn reader "$PROG" "$TMP/data.bin" "$TMP/b.log" $N 900 spin-rt
  RPID=$SPAWNED
  spawn -e "$TMP/b.err" gpuio "$GPUIO" trace -p "$RPID" -o "$TMP/b.json"
  GPID=$SPAWNED
  wait_line -m "gpuio never started tracing" "tracing" "$TMP/b.err"
  kill -USR1 "$RPID"
  wait_line -i 0.01 -m "batch_reader did not finish its reads" "^done" "$TMP/b.log"
  kill -INT "$GPID"
  # alive as the trace is told to end (its spin lasts 900 ms more): asked
  # after gpuio's exit, a slow export on the one CPU left would fail it
  alive=0; proc_alive "$RPID" && alive=1
  wait_exit -t 20 "$GPID"
  [ "$EXIT_STATUS" = 0 ] || { cat "$TMP/b.err"; fail "B: gpuio exited $EXIT_STATUS"; }
  [ "$alive" = 1 ] || fail "B: batch_reader ended before the trace did: the check proves nothing"
  check_struct "$TMP/b.json"
  pycheck batch_truth.all_reads "$TMP/b.json" "$TMP/b.log" "$TMP/data.bin" "$RPID" \
    "on its CPU at the end" || fail "B: records still batched at the end are missing"
  proc_stop "$RPID"
fi

# ---- C: the ring buffer full: every record kept or counted --------------
for mode in batched --no-batch; do
  opt=(); [ "$mode" = --no-batch ] && opt=(--no-batch)
  spawn -s KILL reader "$PROG" "$TMP/data.bin" "$TMP/c$mode.log" 200000 0 sleep
  RPID=$SPAWNED
  spawn -s KILL -e "$TMP/c$mode.err" gpuio "$GPUIO" trace "${opt[@]}" --ringbuf 1M -p "$RPID" \
    -o "$TMP/c$mode.json"
  GPID=$SPAWNED
  wait_line -m "gpuio never started tracing" "tracing" "$TMP/c$mode.err"
  # the collector stopped: the 1 MiB ring holds ~9,000 records of 200,000
  kill -STOP "$GPID"
  kill -USR1 "$RPID"
  wait_exit -t 60 "$RPID"
  kill -CONT "$GPID"
  wait_exit -t 30 "$GPID"
  [ "$EXIT_STATUS" = 0 ] || { cat "$TMP/c$mode.err"; fail "C ($mode): gpuio exited $EXIT_STATUS"; }
  grep -q "events were lost" "$TMP/c$mode.err" || { cat "$TMP/c$mode.err"; fail "C ($mode): the loss was not said"; }
  "$GPUIO" info --json "$TMP/c$mode.gpuio" >"$TMP/c$mode.info.json" || fail "C ($mode): gpuio info"
  pycheck batch_truth.ring_full "$TMP/c$mode.json" "$TMP/c$mode.info.json" "$TMP/c$mode.log" \
    "$TMP/data.bin" "$RPID" || fail "C ($mode): records lost without being counted"
done
echo "PASS t_batch"
