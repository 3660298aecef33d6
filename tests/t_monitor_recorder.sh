#!/usr/bin/env bash
# t_monitor_recorder: the flight recorder keeps exactly the last --window of
# events and dumps them without stopping the daemon; a trigger fires on an
# injected slow read, once, and is rate-limited; the dump directory is bounded;
# SIGHUP reopens the log.
#
# Burst A (200 preads) runs, then more than the window passes, then burst B
# (300 preads): a dump (`gpuio monitor dump`) holds exactly B's 300 and none
# of A's. The slow read: an O_DIRECT read of a loop device throttled to
# 8 KiB/s by the cgroup v1 blkio controller (no device mapper and no io.max
# on this host), ~0.5 s per 4 KiB read, three times, 1 s apart, under
# --trigger 'vfs_latency>200ms' --trigger-interval 60s: one dump, holding the
# slow read; the other matches suppressed.
# The recorder drains at SCHED_FIFO 1 (the default --drain-priority): the
# daemon's main thread, asleep in its poll nearly all the time, is seen at
# that policy, and its startup line says so.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/monitor_lib.sh"
PREAD="$GPUIO_TESTS/preadloop"
[ -x "$PREAD" ] || skip "$PREAD not built (make test-progs)"

head -c $((1 << 20)) /dev/urandom >"$TMP/data"
WIN=3
mon_start --listen 127.0.0.1:$MON_PORT --window ${WIN}s --dump-format json --dump-keep 3 \
  --log-file "$TMP/daemon.log"

# the main thread's scheduling policy (stat field 41; 1 = SCHED_FIFO), 20 looks
policy() { sed 's/.*) //' "/proc/$MON_PID/task/$MON_PID/stat" | awk '{ print $39 }'; }
fifo=0
for _ in $(seq 20); do [ "$(policy)" = 1 ] && fifo=$((fifo + 1)); sleep 0.05; done
echo "recorder's thread at SCHED_FIFO in $fifo of 20 looks"
[ "$fifo" -gt 0 ] || fail "the recorder never drains at SCHED_FIFO (--drain-priority 1)"
grep -q "draining at SCHED_FIFO 1" "$TMP/daemon.log" || fail "the startup line does not say the drain's priority"

spawn -o "$TMP/a.out" burst-a "$PREAD" "$TMP/data" 200 1; PA=$SPAWNED
wait $PA || fail "burst A failed"
sleep $((WIN + 2))
spawn -o "$TMP/b.out" burst-b "$PREAD" "$TMP/data" 300 2; PB=$SPAWNED
wait $PB || fail "burst B failed"
DUMP=$("$GPUIO" monitor dump --run-dir "$MON_RUN" --timeout 60s) || { cat "$TMP/daemon.log"; fail "gpuio monitor dump failed"; }
echo "dump: $DUMP"
[ -s "$DUMP" ] || fail "the dump $DUMP is missing or empty"
tp_check "$DUMP"
kill -0 "$MON_PID" || fail "the daemon stopped after a dump"
pycheck monitor.recorder_window "$DUMP" "$PA" "$PB" || fail "the dump is not exactly burst B's window"
check_struct "$DUMP"

# a second dump while it runs: a new file
DUMP2=$("$GPUIO" monitor dump --run-dir "$MON_RUN") || fail "second dump failed"
[ "$DUMP2" != "$DUMP" ] && [ -s "$DUMP2" ] || fail "second dump: $DUMP2"

# the dump directory stays within --dump-keep 3
for _ in 1 2 3; do "$GPUIO" monitor dump --run-dir "$MON_RUN" >/dev/null || fail "dump failed"; done
n=$(ls "$TMP/dumps" | grep -c '^gpuio-dump-' || true)
echo "dumps kept: $n"
[ "$n" -le 3 ] || fail "$n dumps kept with --dump-keep 3"

# SIGHUP reopens the log file
mv "$TMP/daemon.log" "$TMP/daemon.log.1"
kill -HUP "$MON_PID"
wait_line -t 5 -i 0.1 -m "SIGHUP did not reopen the log" 'log reopened' "$TMP/daemon.log"
mon_stop

# ---- trigger on an injected slow read
BLKIO=/sys/fs/cgroup/blkio
[ -w "$BLKIO/cgroup.procs" ] || skip "no cgroup v1 blkio controller to throttle a device (burst checks passed)"
truncate -s 16M "$TMP/slow.img"
LOOP=$(losetup -f --show "$TMP/slow.img") || skip "no loop device"
THR="$BLKIO/gpuio-test-slow-$$"
mkdir "$THR"
on_exit 'losetup -d "$LOOP" 2>/dev/null; rmdir "$THR" 2>/dev/null'
echo "$(($(stat -c '0x%t' "$LOOP"))):$(($(stat -c '0x%T' "$LOOP"))) 8192" > "$THR/blkio.throttle.read_bps_device" ||
  skip "cannot throttle $LOOP"
rm -rf "$TMP/dumps"
mon_start --listen 127.0.0.1:$MON_PORT --window 10s --dump-format json \
  --trigger 'vfs_latency>200ms' --trigger-interval 60s --trigger 'gpu_idle>5s'
grep -q "trigger 'gpu_idle>5s' needs GPU data" "$TMP/monitor.log" || [ -e /dev/nvidia0 ] ||
  fail "gpu_idle without GPU data not reported"
for i in 1 2 3; do
  t0=$(date +%s%N)
  sh -c 'echo $$ > "$1/cgroup.procs" && exec dd if="$2" of=/dev/null bs=4096 count=1 skip="$3" iflag=direct status=none' \
    sh "$THR" "$LOOP" $((i * 64)) || fail "slow read failed"
  echo "slow read $i: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  sleep 1
done
trigger_dumped() { ls "$TMP/dumps" 2>/dev/null | has trigger; }
poll -t 10 -i 0.1 trigger_dumped || true
sleep 1
scrape "$TMP/m.txt"
grep -E '^gpuio_trigger_' "$TMP/m.txt"
ls -l "$TMP/dumps"
n=$(ls "$TMP/dumps" | grep -c 'trigger-vfs_latency' || true)
[ "$n" = 1 ] || { cat "$TMP/monitor.log"; fail "$n trigger dumps, want exactly 1 (rate limit 60s)"; }
pycheck monitor.recorder_trigger "$TMP/m.txt.json" "$TMP/dumps"/*trigger-vfs_latency* || fail "trigger counters or dump wrong"
mon_stop
echo "PASS: dump = exactly the last window; trigger fired once, rate-limited; dumps bounded; SIGHUP reopens"
