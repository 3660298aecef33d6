#!/usr/bin/env bash
# t_monitor_metrics: `gpuio monitor`'s /metrics account exactly for fio's I/O
# per cgroup.
#
# Two cgroup v2 children (under /sys/fs/cgroup/unified on this hybrid host);
# fio runs in each (moved in before exec) on an ext4 image on a loop device,
# so the daemon's (cgroup, device=loopN) series hold only fio's job I/O.
# Ground truth is fio's JSON (io_bytes, total_ios per job):
#   cgroup A: O_DIRECT 4k random reads (psync) + buffered 64k sequential reads
#   cgroup B: O_DIRECT 16k random writes (pvsync2)
# Checked on a page scraped with curl and parsed strictly: VFS bytes and ops,
# latency histogram _count == ops, block bytes/ops of the O_DIRECT jobs, the
# page-cache counters of the buffered job, the per-process series, the calls
# of a live idle process (folded from its task storage at refresh), loopback
# bind by default, a second instance refused, SIGTERM detaches everything.
source "$(dirname "$0")/lib.sh"
need_root
command -v fio >/dev/null || skip "fio not installed"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
MON_PORT=9477     # the default: this test checks the default bind
source "$(dirname "$0")/monitor_lib.sh"
grep -q ':2505 00000000:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null &&
  skip "port 9477 (the monitor's default) is already in use"

mount_loop_ext4 96M
D="$TMP/mnt/data"
mkdir -p "$D"

CG_A=$(mk_cgroup "gpuio-test-a-$$")
CG_B=$(mk_cgroup "gpuio-test-b-$$")
cat >"$TMP/a.fio" <<JOB
[global]
directory=$D
size=4m
[rr-direct]
ioengine=psync
rw=randread
bs=4k
direct=1
[seq-buffered]
ioengine=psync
rw=read
bs=64k
invalidate=1
JOB
cat >"$TMP/b.fio" <<JOB
[global]
directory=$D
size=4m
[rw-direct]
ioengine=pvsync2
rw=randwrite
bs=16k
direct=1
JOB
# lay the files out first, outside the cgroups
for j in a b; do
  fio "$TMP/$j.fio" --create_only=1 --output-format=json >"$TMP/layout-$j.out" 2>&1 ||
    { cat "$TMP/layout-$j.out"; fail "fio layout failed"; }
done
sync
echo 3 > /proc/sys/vm/drop_caches

mon_start --window 0 --top-k 200   # default --listen: 127.0.0.1:9477
# loopback only by default: the listening socket is 127.0.0.1:9477, not 0.0.0.0
grep -q ' 0100007F:2505 00000000:0000 0A' /proc/net/tcp || fail "not listening on 127.0.0.1:9477"
grep -q ' 00000000:2505 00000000:0000 0A' /proc/net/tcp && fail "listening on 0.0.0.0:9477 by default"

# a second instance refuses, saying why
if "$GPUIO" monitor --run-dir "$MON_RUN" --window 0 --listen 127.0.0.1:$((MON_PORT + 1)) >"$TMP/second.out" 2>&1; then
  fail "a second instance started"
fi
cat "$TMP/second.out"
grep -q "already running (pid $MON_PID" "$TMP/second.out" || fail "the second instance did not say the first is running"

for j in a b; do
  cg=$CG_A; [ $j = b ] && cg=$CG_B
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
    fio "$TMP/$j.fio" --output-format=json --output="$TMP/fio-$j.json" >"$TMP/fio-$j.out" 2>&1 ||
    { cat "$TMP/fio-$j.out"; fail "fio $j failed"; }
done
scrape "$TMP/m1.txt"

pycheck monitor.metrics_fio "$TMP/m1.txt.json" "$TMP/fio-a.json" "$TMP/fio-b.json" "/${CG_A#$CGV2/}" "/${CG_B#$CGV2/}" \
  "$DEV" "$TMP/mnt" || fail "/metrics does not account for fio's I/O"

# a live, idle process: its calls wait in its threads' task storage until the
# daemon folds them at refresh (task iterator); they must be in the next page
head -c 1M /dev/zero > "$D/idle.dat"
# idle_reader NAME: a process in a new cgroup NAME does 100 preads of 4 KiB,
# then sleeps; its cgroup's path in $IDLE_CG, its pid in $IDLE
idle_reader() {
  IDLE_CG=$(mk_cgroup "$1")
  rm -f "$TMP/idle.fifo"; mkfifo "$TMP/idle.fifo"
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$IDLE_CG" python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(100):
    assert len(os.pread(fd, 4096, (i * 4096) % (1 << 20))) == 4096
open(sys.argv[2], "w").write("done\n")
time.sleep(60)' "$D/idle.dat" "$TMP/idle.fifo" &
  IDLE=$!
  proc_reg "$IDLE" "idle reader"
  read -r _ < "$TMP/idle.fifo"
}
idle_reader "gpuio-test-c-$$"
CG_C=$IDLE_CG
sleep 2.2     # cgroup names are rescanned at most every 2 s
scrape "$TMP/m3.txt"
kill $IDLE; wait $IDLE 2>/dev/null || true; proc_unreg $IDLE
pycheck monitor.metrics_idle "$TMP/m3.txt.json" "/${CG_C#$CGV2/}" "$DEV" "$TMP/mnt" ||
  fail "a live process's calls are not all in /metrics"

# a later scrape: counters never go down, and the monitor's own health is there
sleep 1.2
scrape "$TMP/m2.txt"
pycheck monitor.metrics_monotonic "$TMP/m1.txt.json" "$TMP/m2.txt.json" || fail "counters went down between scrapes"
if [ ! -e /dev/nvidia0 ]; then
  grep -q '^gpuio_gpu_nvml_available 0' "$TMP/m2.txt" || fail "no NVML status series"
  [ "$(grep -c 'NVML not available' "$TMP/monitor.log")" = 1 ] || fail "NVML absence not said exactly once"
fi

# SIGTERM: exits 0, and no monitor program stays attached
mon_stop
cat "$TMP/monitor.log"
# (trampoline programs are freed after an RCU tasks grace period: seconds under load)
if command -v bpftool >/dev/null && ! pgrep -f 'gpuio monitor' >/dev/null; then
  # (to a file first: with pipefail, grep -q quitting early SIGPIPEs bpftool
  # and the pipeline reads as "not found" while the program is still there)
  no_mon_progs() { bpftool prog show >"$TMP/progs" 2>/dev/null || true; ! grep -q 'name mon_sys_enter' "$TMP/progs"; }
  poll -t 30 -i 0.1 no_mon_progs || true
  bpftool prog show >"$TMP/progs" 2>/dev/null || true
  grep -q 'name mon_sys_enter' "$TMP/progs" && fail "monitor programs still loaded after SIGTERM"
fi

# --no-latency: no clock reads, no latency histograms; calls and bytes exact
mon_start --window 0 --no-latency
grep -q "VFS latency: off (--no-latency)" "$TMP/monitor.log" || { cat "$TMP/monitor.log"; fail "--no-latency not said"; }
idle_reader "gpuio-test-d-$$"
CG_D=$IDLE_CG
sleep 2.2
scrape "$TMP/m4.txt"
kill $IDLE; wait $IDLE 2>/dev/null || true; proc_unreg $IDLE
pycheck monitor.metrics_idle "$TMP/m4.txt.json" "/${CG_D#$CGV2/}" "$DEV" "$TMP/mnt" ||
  fail "--no-latency: the calls are not all in /metrics"
grep -q '^gpuio_cgroup_vfs_latency_seconds' "$TMP/m4.txt" && fail "--no-latency: latency histograms served"
mon_stop
echo "PASS: /metrics match fio per cgroup; strict format; loopback only; one instance; clean SIGTERM; --no-latency"
