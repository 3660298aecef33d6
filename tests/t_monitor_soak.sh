#!/usr/bin/env bash
# t_monitor_soak: the daemon through many thousands of short-lived processes
# doing I/O (fork churn with PID reuse, in one cgroup). Recorded over time
# and printed: the daemon's RSS, open fds and BPF map occupancy. Asserted:
# fds constant, RSS flat (bounded by the recorder's preallocated window plus
# a margin), the process map never over capacity and drained once the churn
# stops (exited processes folded and freed), and the cgroup's counters exact:
# every child writes 8 KiB in two write()s and reads it back with one pread().
# (its output goes through a pipe: a file would add its bytes to the cgroup;
# and it is moved into the cgroup from outside: a process that writes its own
# pid to cgroup.procs does that write as a member, 6 bytes for a 5-digit pid)
# SOAK_PROCS (default 20000) processes; ~30-50 s here.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/monitor_lib.sh"
CHURN="$GPUIO_TESTS/monitor_churn"
[ -x "$CHURN" ] || skip "$CHURN not built (make test-progs)"
N=${SOAK_PROCS:-20000}
CG=$(mk_cgroup "gpuio-test-soak-$$")
# the churn's files on a loop-mounted ext4: the monitor names the device as
# the kernel does (loopN), whatever /tmp is on (LVM, btrfs, tmpfs, /dev/root)
mount_loop_ext4 16M
CHURN_DIR="$TMP/mnt/churn"
mkdir -p "$CHURN_DIR"

mon_start --listen 127.0.0.1:$MON_PORT --window 5s --window-bytes 8M --max-procs 2048 --top-k 10
sample() {  # t rss_kib fds proc_entries exited_entries folded
  scrape "$TMP/s.txt"
  pycheck monitor.soak_sample "$TMP/s.txt.json" "$1" "$MON_PID"
}
echo "t_s rss_kib fds proc_map exited_map folded evicted full" | tee "$TMP/samples"
sample 0 >> "$TMP/samples"; tail -n1 "$TMP/samples"
t0=$(date +%s)
mkfifo "$TMP/churn.fifo"
spawn -i "$TMP/churn.fifo" -o "$TMP/churn.out" churn-reader cat
start_in_cgroup "$CG" "$CHURN" "$CHURN_DIR" "$N" 4 > "$TMP/churn.fifo" 2>&1
CP=$CGPID
while kill -0 $CP 2>/dev/null; do
  sleep 3
  sample $(( $(date +%s) - t0 )) >> "$TMP/samples"; tail -n1 "$TMP/samples"
done
wait $CP || { cat "$TMP/churn.out"; fail "the churn failed"; }
cat "$TMP/churn.out"
sleep 2.5
sample $(( $(date +%s) - t0 )) >> "$TMP/samples"; tail -n1 "$TMP/samples"
scrape "$TMP/end.txt"
pycheck monitor.soak_bounds "$TMP/samples" "$TMP/end.txt.json" "/${CG#$CGV2/}" "$DEV" "$N" ||
  fail "the daemon did not stay bounded, or the counts are off"
mon_stop
echo "PASS: $N short processes: fds, RSS and maps flat; exact cgroup counts"
