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

truncate -s 96M "$TMP/fs.img"
mkfs.ext4 -q -F "$TMP/fs.img"
mkdir -p "$TMP/mnt"
LOOP=$(losetup -f --show "$TMP/fs.img") || skip "no loop device"
on_exit 'umount "$TMP/mnt" 2>/dev/null; losetup -d "$LOOP" 2>/dev/null'
mount -o noatime "$LOOP" "$TMP/mnt"
DEV=$(basename "$LOOP")
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

python3 - "$TMP/m1.txt.json" "$TMP/fio-a.json" "$TMP/fio-b.json" "/${CG_A#$CGV2/}" "/${CG_B#$CGV2/}" "$DEV" "$TMP/mnt" <<'PYEOF' || fail "/metrics does not account for fio's I/O"
import json, sys
m = json.load(open(sys.argv[1]))
fa, fb = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
cga, cgb, dev, mnt = sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
# the filesystem's series carry where it is mounted and its type (ground truth: our mount)
FS = dict(mountpoint=mnt, fstype="ext4")
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond
def get(name, **lab):
    key = name + "{" + ",".join(f'{k}="{lab[k]}"' for k in sorted(lab)) + "}"
    return m.get(key)
def fio(f, job, rw):
    j = [x for x in f["jobs"] if x["jobname"] == job]
    assert j and not j[0]["error"], f"fio job {job}"
    return j[0][rw]["io_bytes"], j[0][rw]["total_ios"]
rr = fio(fa, "rr-direct", "read"); sq = fio(fa, "seq-buffered", "read")
wr = fio(fb, "rw-direct", "write")
print(f"fio: A rr-direct {rr}, A seq-buffered {sq}, B rw-direct {wr}; series on device={dev}")
for cg, rb, ro, wb, wo in ((cga, rr[0] + sq[0], rr[1] + sq[1], 0, 0), (cgb, 0, 0, wr[0], wr[1])):
    L = dict(cgroup=cg, device=dev, **FS)
    for op, b, o in (("read", rb, ro), ("write", wb, wo)):
        gb, go = get("gpuio_cgroup_vfs_bytes_total", op=op, **L), get("gpuio_cgroup_vfs_ops_total", op=op, **L)
        check(gb == b, f"{cg}: vfs {op} bytes {gb} == fio {b}")
        check(go == o, f"{cg}: vfs {op} ops {go} == fio {o}")
        c = get("gpuio_cgroup_vfs_latency_seconds_count", op=op, **L)
        check((c or 0) == o, f"{cg}: {op} latency histogram _count {c} == ops {o}")
        if o:
            s = get("gpuio_cgroup_vfs_latency_seconds_sum", op=op, **L)
            check(s is not None and 0 < s < 60 * o, f"{cg}: {op} latency _sum {s} s is plausible")
# block layer: O_DIRECT requests are submitted by fio itself, one per call
L = dict(cgroup=cgb, device=dev, **FS)
bb, bo = get("gpuio_cgroup_block_bytes_total", op="write", **L), get("gpuio_cgroup_block_ops_total", op="write", **L)
check(bb == wr[0], f"{cgb}: block write bytes {bb} == fio {wr[0]}")
check(bo == wr[1], f"{cgb}: block write ops {bo} == fio {wr[1]}")
L = dict(cgroup=cga, device=dev, **FS)
br = get("gpuio_cgroup_block_bytes_total", op="read", **L) or 0
check(br >= rr[0], f"{cga}: block read bytes {br} >= the O_DIRECT reads' {rr[0]} (buffered reads add readahead)")
check(br <= rr[0] + sq[0] + (1 << 20), f"{cga}: block read bytes {br} <= direct + buffered + 1 MiB of readahead")
# page cache: the buffered job's bytes, and it missed (cache dropped, invalidate=1)
pr = get("gpuio_cgroup_pagecache_read_bytes_total", **L)
check(pr == sq[0], f"{cga}: page-cache read bytes {pr} == buffered job's {sq[0]} (O_DIRECT excluded)")
miss = get("gpuio_cgroup_pagecache_miss_bytes_total", **L) or 0
check(sq[0] * 0.5 <= miss <= sq[0] + (1 << 20), f"{cga}: page-cache misses {miss} bytes for a cold {sq[0]}-byte read")
hr = get("gpuio_cgroup_pagecache_hit_ratio", **L)
check(hr is not None and hr <= 0.5, f"{cga}: hit ratio {hr} of a cold sequential read is low")
# the disk: the device histograms count every request
for op in ("read", "write"):
    ops = get("gpuio_device_ops_total", device=dev, op=op)
    c = get("gpuio_device_service_seconds_count", device=dev, op=op)
    check(ops is not None and c == ops, f"device {dev}: {op} service histogram _count {c} == ops {ops}")
check((get("gpuio_device_ops_total", device=dev, op="write") or 0) >= wr[1], f"device {dev}: >= {wr[1]} writes")
# per process: fio's job processes, comm "fio", in their cgroups
pa = get("gpuio_process_vfs_ops_total", cgroup=cga, comm="fio", op="read") or 0
pb = get("gpuio_process_vfs_ops_total", cgroup=cgb, comm="fio", op="write") or 0
check(pa >= rr[1] + sq[1], f"{cga}: process comm=fio read ops {pa} >= fio's {rr[1] + sq[1]}")
check(pb >= wr[1], f"{cgb}: process comm=fio write ops {pb} >= fio's {wr[1]}")
check(any(k.startswith('gpuio_process_vfs_bytes_total{cgroup="other",comm="other"') for k in m), "the folded 'other' process series exists")
check(m.get('gpuio_monitor_map_full_total{map="process"}') == 0, "no map full")
sys.exit(1 if bad else 0)
PYEOF

# a live, idle process: its calls wait in its threads' task storage until the
# daemon folds them at refresh (task iterator); they must be in the next page
CG_C=$(mk_cgroup "gpuio-test-c-$$")
head -c 1M /dev/zero > "$D/idle.dat"
mkfifo "$TMP/idle.fifo"
sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG_C" python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(100):
    assert len(os.pread(fd, 4096, (i * 4096) % (1 << 20))) == 4096
open(sys.argv[2], "w").write("done\n")
time.sleep(60)' "$D/idle.dat" "$TMP/idle.fifo" &
IDLE=$!
proc_reg "$IDLE" "idle reader"
read -r _ < "$TMP/idle.fifo"
sleep 2.2     # cgroup names are rescanned at most every 2 s
scrape "$TMP/m3.txt"
kill $IDLE; wait $IDLE 2>/dev/null || true; proc_unreg $IDLE
python3 - "$TMP/m3.txt.json" "/${CG_C#$CGV2/}" "$DEV" "$TMP/mnt" <<'PYEOF' || fail "a live process's calls are not all in /metrics"
import json, sys
m = json.load(open(sys.argv[1])); L = f'cgroup="{sys.argv[2]}",device="{sys.argv[3]}",fstype="ext4",mountpoint="{sys.argv[4]}"'
o, b = m.get(f'gpuio_cgroup_vfs_ops_total{{{L},op="read"}}'), m.get(f'gpuio_cgroup_vfs_bytes_total{{{L},op="read"}}')
print(f"live idle process: {o} read ops, {b} bytes (wants 100, 409600)")
assert o == 100 and b == 409600
PYEOF

# a later scrape: counters never go down, and the monitor's own health is there
sleep 1.2
scrape "$TMP/m2.txt"
python3 - "$TMP/m1.txt.json" "$TMP/m2.txt.json" <<'PYEOF' || fail "counters went down between scrapes"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
down = [k for k, v in a.items() if "_total{" in k and k in b and b[k] < v]
print("counters that went down:", down[:5])
assert not down
for k in ("gpuio_monitor_resident_bytes{}", "gpuio_monitor_open_fds{}", 'gpuio_monitor_map_entries{map="process"}'):
    assert k in b, k
    print(k, b[k])
PYEOF
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
echo "PASS: /metrics match fio per cgroup; strict format; loopback only; one instance; clean SIGTERM"
