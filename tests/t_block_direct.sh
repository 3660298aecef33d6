#!/usr/bin/env bash
# t_block_direct: O_DIRECT I/O on an ext4 image on a loop device gives exact
# block requests, each joined to the VFS call that caused it.
#
# fio does 4 KiB O_DIRECT random reads (4 MiB) and 64 KiB O_DIRECT
# sequential writes (4 MiB) on files laid out beforehand (untraced). Ground
# truth: fio's io_bytes/total_ios, and the files' physical extents
# (filefrag). Checks:
#   - read/write bytes and request counts on the loop disk == fio's;
#   - every such request has bind_id + flow_in, and the VFS slice with the
#     same bind_id + flow_out is fio's pread64/pwrite64 on the job's file,
#     same pid, and the request lies inside the call;
#   - per VFS call, its requests' bytes sum to the call's bytes;
#   - each request's sector is where filefrag says the call's file offset is;
#   - the checker accepts the trace (flows bound).
source "$(dirname "$0")/lib.sh"
need_root
command -v fio >/dev/null || skip "fio not installed"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
command -v filefrag >/dev/null || skip "filefrag (e2fsprogs) not installed"

LOOP=""
MNT="$TMP/mnt"
on_exit '[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null'
on_exit 'mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"'

truncate -s 96M "$TMP/img"
mkfs.ext4 -q -F -b 4096 "$TMP/img" || fail "mkfs.ext4 failed"
LOOP=$(losetup -f --show "$TMP/img") || skip "no loop device available (losetup -f failed)"
mkdir -p "$MNT"
mount -o noatime "$LOOP" "$MNT" || fail "mount $LOOP failed"
DISK=$(basename "$LOOP")

cat >"$TMP/job.fio" <<EOF
[global]
directory=$MNT
size=4m
direct=1
ioengine=psync

[dread]
rw=randread
bs=4k

[dwrite]
rw=write
bs=64k
EOF
fio "$TMP/job.fio" --create_only=1 >"$TMP/layout.out" 2>&1 || { cat "$TMP/layout.out"; fail "fio layout failed"; }
sync
for f in dread.0.0 dwrite.0.0; do
  filefrag -v -b512 "$MNT/$f" >"$TMP/$f.frag" || fail "filefrag $f failed"
done

"$GPUIO" trace -q -o "$TMP/run.json" -- \
  fio "$TMP/job.fio" --output-format=json --output="$TMP/fio.json" 2>"$TMP/gpuio.err" \
  || { cat "$TMP/gpuio.err"; fail "gpuio trace -- fio exited non-zero"; }
cat "$TMP/gpuio.err"
check_struct "$TMP/run.json"

python3 - "$TMP/run.json" "$TMP/fio.json" "$MNT" "$DISK" "$TMP" <<'EOF' || fail "block requests do not match fio's O_DIRECT I/O"
import collections, json, os, re, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth

trace, fiojson, mnt, disk, tmp = sys.argv[1:]
ev = truth.load(trace)
fio = {j["jobname"]: j for j in json.load(open(fiojson))["jobs"]}
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        bad += 1

def extents(f):
    """[(logical, physical, length)] in 512-byte units from filefrag -v -b512"""
    out = []
    for l in open(os.path.join(tmp, f + ".frag")):
        m = re.match(r"\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*(\d+):\s*(\d+)", l)
        if m:
            out.append((int(m[1]), int(m[3]), int(m[5])))
    return out

def sector_of(ext, off):
    s = off // 512
    for lo, phys, n in ext:
        if lo <= s < lo + n:
            return phys + s - lo
    return None

blk = truth.block(ev, disk=disk)
check(len(blk) > 0, f"{len(blk)} block requests on {disk}")
vfs_by_bind = truth.flows_ok(ev)
for job, op, call in (("dread", "read", "pread64"), ("dwrite", "write", "pwrite64")):
    want = (fio[job][op]["io_bytes"], fio[job][op]["total_ios"])
    path = os.path.join(mnt, job + ".0.0")
    # data requests (an ext4 metadata read, flagged meta, is not fio's data)
    reqs = [e for e in blk if e["args"].get("op") == op and "meta" not in e["args"].get("flags", "").split("|")]
    got = (sum(e["args"]["bytes"] for e in reqs), len(reqs))
    check(got == want, f"{disk} {op}: {got[0]} bytes in {got[1]} requests == fio {job} {want}")
    calls = truth.vfs(ev, path=path, names={call})
    check(sum(e["args"].get("bytes", 0) for e in calls) == want[0] and len(calls) == want[1],
          f"{job}: {len(calls)} {call} calls on {path} == fio's {want[1]}")
    ext = extents(job + ".0.0")
    per_call = collections.defaultdict(int)
    unbound = misbound = outside = badsector = 0
    for r in reqs:
        b = r.get("bind_id")
        v = vfs_by_bind.get(b) if b is not None and r.get("flow_in") else None
        if v is None:
            unbound += 1
            continue
        a = v["args"]
        if v["name"] != call or a.get("path") != path or v["pid"] != r["args"].get("pid"):
            misbound += 1
            continue
        per_call[id(v)] += r["args"]["bytes"]
        if not (v["ts"] - 0.001 <= r["ts"] and r["ts"] + r["dur"] <= v["ts"] + v["dur"] + 0.001):
            outside += 1
        # which part of the call this request carries: the call's offset
        # plus what earlier requests of the same call carried
        done = per_call[id(v)] - r["args"]["bytes"]
        if sector_of(ext, a["offset"] + done) != r["args"].get("sector"):
            badsector += 1
    check(unbound == 0, f"{op}: every request has flow_in + a bound VFS slice ({unbound} without)")
    check(misbound == 0, f"{op}: every request is bound to {call} on {path} by the same pid ({misbound} not)")
    check(outside == 0, f"{op}: every request lies inside its call's [ts, ts+dur] ({outside} outside)")
    check(badsector == 0, f"{op}: every request's sector is the file's physical block at the call's offset ({badsector} not)")
    whole = sum(1 for v in calls if per_call.get(id(v)) == v["args"].get("bytes"))
    check(whole == len(calls), f"{op}: {whole}/{len(calls)} calls' requests add up to the call's bytes")
sys.exit(1 if bad else 0)
EOF
echo "PASS: block requests on $DISK equal fio's O_DIRECT I/O, each joined to its syscall"
