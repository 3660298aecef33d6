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
mkdir -p "$TMP/churn"
DEV=$(findmnt -n -o SOURCE -T "$TMP/churn" | sed 's|^/dev/||')

mon_start --listen 127.0.0.1:$MON_PORT --window 5s --window-bytes 8M --max-procs 2048 --top-k 10
sample() {  # t rss_kib fds proc_entries exited_entries folded
  scrape "$TMP/s.txt"
  python3 - "$TMP/s.txt.json" "$1" "$MON_PID" <<'PYEOF'
import json, os, sys
m = json.load(open(sys.argv[1])); pid = sys.argv[3]
rss = [int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0]
fds = len(os.listdir(f"/proc/{pid}/fd"))
print(sys.argv[2], rss, fds, int(m['gpuio_monitor_map_entries{map="process"}']),
      int(m['gpuio_monitor_map_entries{map="exited"}']), int(m["gpuio_monitor_processes_folded_total{}"]),
      int(m['gpuio_monitor_map_evictions_total{map="process"}']), int(m['gpuio_monitor_map_full_total{map="process"}']))
PYEOF
}
echo "t_s rss_kib fds proc_map exited_map folded evicted full" | tee "$TMP/samples"
sample 0 >> "$TMP/samples"; tail -n1 "$TMP/samples"
t0=$(date +%s)
mkfifo "$TMP/churn.fifo"
spawn -i "$TMP/churn.fifo" -o "$TMP/churn.out" churn-reader cat
start_in_cgroup "$CG" "$CHURN" "$TMP/churn" "$N" 4 > "$TMP/churn.fifo" 2>&1
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
python3 - "$TMP/samples" "$TMP/end.txt.json" "/${CG#$CGV2/}" "$DEV" "$N" <<'PYEOF' || fail "the daemon did not stay bounded, or the counts are off"
import json, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1]).read().split("\n")[1:] if l.strip()]
m = json.load(open(sys.argv[2])); cg, dev, n = sys.argv[3], sys.argv[4], int(sys.argv[5])
bad = 0
def check(c, msg):
    global bad
    print(("ok   " if c else "FAIL ") + msg); bad += not c
rss = [r[1] for r in rows]; fds = [r[2] for r in rows]; pm = [r[3] for r in rows]
print(f"{len(rows)} samples over {rows[-1][0]} s")
check(max(fds) - min(fds) <= 2, f"open fds flat: {min(fds)}..{max(fds)}")
check(max(rss) - rss[0] <= (8 + 24) * 1024, f"RSS flat: {rss[0]} -> max {max(rss)} KiB (<= the 8 MiB window + 24 MiB)")
half = rss[len(rss) // 2:]
check(max(half) - min(half) <= 8 * 1024, f"RSS flat over the second half: {min(half)}..{max(half)} KiB")
check(max(pm) <= 2048, f"process map within its 2048 entries (max {max(pm)})")
check(pm[-1] < 400, f"process map drained after the churn: {pm[-1]} entries")
# each process is folded by the daemon, or evicted by the LRU when the churn
# outruns the map between refreshes (counted, never silent)
check(rows[-1][5] + rows[-1][6] >= 0.95 * n, f"processes folded {rows[-1][5]} + evictions reported {rows[-1][6]} account for {n}")
def one(name, **want):
    """the value of the one series of name whose labels include want (mountpoint, fstype: any)"""
    hits = [v for k, v in m.items() if k.startswith(name + "{") and
            all(f'{a}="{b}"' in k[len(name):] for a, b in want.items())]
    assert len(hits) <= 1, (name, want, hits)
    return hits[0] if hits else None
wb = one("gpuio_cgroup_vfs_bytes_total", cgroup=cg, device=dev, op="write")
wo = one("gpuio_cgroup_vfs_ops_total", cgroup=cg, device=dev, op="write")
rb = one("gpuio_cgroup_vfs_bytes_total", cgroup=cg, device=dev, op="read")
check(wb == n * 8192, f"cgroup write bytes {wb} == {n} x 8192")
check(wo == 2 * n, f"cgroup write ops {wo} == 2 x {n}")
check(rb is not None and rb >= n * 8192, f"cgroup read bytes {rb} >= {n} x 8192")
pw = m.get(f'gpuio_process_vfs_bytes_total{{cgroup="{cg}",comm="monitor_churn",op="write"}}')
ev = rows[-1][6]
check(pw is not None and (n - ev) * 8192 <= pw <= n * 8192,
      f"process series comm=monitor_churn: {pw} write bytes, between (n - evicted) x 8192 and n x 8192")
sys.exit(1 if bad else 0)
PYEOF
mon_stop
echo "PASS: $N short processes: fds, RSS and maps flat; exact cgroup counts"
