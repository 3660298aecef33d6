#!/usr/bin/env bash
# VFS -> block flow arrows are bound exactly where the generator put them:
# every block request naming an existing (tid, seq) carries that call's
# bind_id with flow_in, the call carries it with flow_out (one call fanning
# out to three requests), and requests naming a call that is not in the
# capture get no arrow. Block slices sit on lanes that never overlap, as many
# lanes as the requests' maximum concurrency; times, queue/service split,
# throughput counters and the other call shapes (failed open, sendfile,
# ftruncate, fsync error) match what the generator wrote.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$GPUIO" ] || fail "missing $GPUIO (run: make)"

"$GEN" flows "$TMP/f.gpuio" > "$TMP/manifest.json" || fail "gen_capture flows failed"
"$GPUIO" convert "$TMP/f.gpuio" -o "$TMP/f.json" || fail "convert failed"
$CHECK "$TMP/f.json" || fail "check_trace rejects the export"

python3 - "$TMP/manifest.json" "$TMP/f.json" "$GPUIO_SRC/tests" <<'EOF' || fail "flows/lanes differ from the generator's ground truth"
import json, re, sys
sys.path.insert(0, sys.argv[3])
import check_trace as ct

m = json.load(open(sys.argv[1]))
events = ct.load(sys.argv[2])
P = m["pid"]
bad = []

def expect(what, got, exp):
    if got != exp:
        bad.append("%s: got %r, want %r" % (what, got, exp))

# JSON ts 0 is the timeline origin: the earliest of the trace start and every
# event (here some calls began before the anchor), never a negative ts
def all_ts(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "ts_ns":
                yield v
            else:
                yield from all_ts(v)
    elif isinstance(o, list):
        for v in o:
            yield from all_ts(v)
base = min([m["monotonic_ns"]] + list(all_ts(m)))
expect("timeline origin", ct.trace_info(events)["timeline_origin_ns"], base)
expect("earliest ts", min(ct.ns(e["ts"]) for e in events if "ts" in e), 0)

# ts/dur: exactly three decimals, in the raw text
for line in open(sys.argv[2]):
    for k, v in re.findall(r'"(ts|dur)":(-?[0-9.eE+]+)', line):
        if not re.fullmatch(r"-?\d+\.\d{3}", v):
            bad.append("%s %s is not µs with 3 decimals" % (k, v))

vfs = {(e["tid"], ct.ns(e["ts"])): e for e in events
       if e.get("cat") == "vfs" and not e["name"].startswith("io_uring")}
expect("vfs slices", len(vfs), len(m["vfs"]))
for v in m["vfs"]:
    e = vfs.get((v["tid"], v["ts_ns"] - base))
    what = "vfs tid %d seq %d" % (v["tid"], v["seq"])
    if not e:
        bad.append("%s: missing" % what)
        continue
    expect(what + " pid", e["pid"], P)
    expect(what + " dur", ct.ns(e["dur"]), v["dur_ns"])
    if v["flow"]:
        expect(what + " flow_out", e.get("flow_out"), True)
        expect(what + " bind_id", e.get("bind_id"), "0x%x" % (v["tid"] << 32 | v["seq"]))
    else:
        expect(what + " no flow", (e.get("flow_out"), e.get("bind_id")), (None, None))

disk_pid = {}
for e in events:
    if e.get("ph") == "M" and e["name"] == "process_name" and e["args"]["name"].startswith("disk "):
        disk_pid[e["args"]["name"][5:]] = e["pid"]
expect("disks", sorted(disk_pid), sorted(m["lanes"]))
blocks = [e for e in events if e.get("cat") == "block" and e["ph"] == "X"]
expect("block slices", len(blocks), len(m["block"]))
by_key = {}
for e in blocks:
    by_key.setdefault((e["args"]["dev"], e["args"]["sector"]), []).append(e)
ops = ["read", "write", "flush", "discard", "other"]
for b in m["block"]:
    what = "block %s sector %d" % (b["disk"], b["sector"])
    got = by_key.get((b["disk"], b["sector"]), [])
    if len(got) != 1:
        bad.append("%s: %d slices" % (what, len(got)))
        continue
    e = got[0]
    expect(what + " pid", e["pid"], disk_pid.get(b["disk"]))
    expect(what + " name", e["name"], ops[b["op"]])
    expect(what + " ts", ct.ns(e["ts"]), b["ts_ns"] - base)
    expect(what + " dur", ct.ns(e["dur"]), b["complete_ns"] - b["ts_ns"])
    expect(what + " queue", ct.ns(e["args"]["queue_us"]), b["issue_ns"] - b["ts_ns"])
    expect(what + " service", ct.ns(e["args"]["service_us"]), b["complete_ns"] - b["issue_ns"])
    expect(what + " bytes", e["args"]["bytes"], b["bytes"])
    if b["tid"]:
        expect(what + " tid", e["args"].get("tid"), b["tid"])
    else:
        expect(what + " no tid", "tid" in e["args"], False)
    if b["flow"]:
        expect(what + " flow_in", e.get("flow_in"), True)
        expect(what + " bind_id", e.get("bind_id"), b["bind_id"])
    else:
        expect(what + " no flow", (e.get("flow_in"), e.get("bind_id")), (None, None))

# lanes: as many as the maximum concurrency, named, never overlapping
for disk, want_lanes in m["lanes"].items():
    pid = disk_pid.get(disk)
    lanes = {}
    for e in blocks:
        if e["pid"] == pid:
            # lane tids are unique trace-wide: 0x50000000 + (disk index << 16) + lane
            if e["tid"] >> 28 != 5 or (e["tid"] >> 16) & 0xfff != pid - 0x40000000:
                bad.append("%s: lane tid 0x%x is not in the disk's lane range" % (disk, e["tid"]))
            lanes.setdefault(e["tid"] & 0xffff, []).append((ct.ns(e["ts"]), ct.ns(e["ts"]) + ct.ns(e["dur"])))
    expect("lanes of " + disk, sorted(lanes), list(range(1, want_lanes + 1)))
    for tid, sl in lanes.items():
        sl.sort()
        for a, b in zip(sl, sl[1:]):
            if b[0] < a[1]:
                bad.append("%s lane %d: %r overlaps %r" % (disk, tid, a, b))
    names = {e["tid"] & 0xffff: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e["name"] == "thread_name" and e["pid"] == pid}
    expect("lane names of " + disk, names, {n: "lane %d" % n for n in range(1, want_lanes + 1)})

# throughput counters integrate back to the bytes read/written per disk
for disk, pid in disk_pid.items():
    cs = sorted((ct.ns(e["ts"]), e["args"]) for e in events
                if e.get("ph") == "C" and e["pid"] == pid)
    expect("counter name " + disk, {e["name"] for e in events if e.get("ph") == "C" and e["pid"] == pid},
           {"throughput " + disk})
    if not cs or cs[-1][1] != {"read_MiBps": 0, "write_MiBps": 0}:
        bad.append("%s: counters do not end at zero" % disk)
    for col, op in (("read_MiBps", 0), ("write_MiBps", 1)):
        total = sum(a[col] * (t1 - t0) / 1e9 * 1048576 for (t0, a), (t1, _) in zip(cs, cs[1:]))
        want = sum(b["bytes"] for b in m["block"] if b["disk"] == disk and b["op"] == op)
        if abs(total - want) > max(0.005 * want, 64):
            bad.append("%s %s integrates to %.0f bytes, want %d" % (disk, col, total, want))

# the other call shapes, as the generator wrote them
calls = {(e["tid"], e["name"]): e["args"] for e in vfs.values()}
a = calls.get((201, "openat"))
fails = [e["args"] for e in vfs.values() if e["name"] == "openat" and "errno" in e["args"]]
oks = [e["args"] for e in vfs.values() if e["name"] == "openat" and "errno" not in e["args"]]
expect("failed openat", fails, [{"errno": 2, "error": "ENOENT", "flags": "O_RDONLY"}])
expect("openat", oks, [{"path": "/data/b.bin", "fd": 9, "flags": "O_RDONLY|O_DIRECT|O_CLOEXEC"}])
expect("sendfile", calls.get((201, "sendfile")),
       {"path": "/data/b.bin", "fd": 9, "bytes": 1000, "requested": 2000, "offset": 10,
        "path2": "/data/out.bin", "fd2": 6, "offset2": 500})
expect("ftruncate", calls.get((201, "ftruncate")), {"path": "/data/out.bin", "fd": 6, "length": 1048576})
expect("fsync", calls.get((201, "fsync")), {"path": "/data/out.bin", "fd": 6, "errno": 5, "error": "EIO"})
expect("pread cache misses", [e["args"]["cache_miss_pages"] for e in vfs.values()
                              if e["tid"] == 201 and e["args"].get("path") == "/data/b.bin"
                              and e["name"] == "pread64"], [2])

# io_uring requests overlap on their thread: per-process lanes, submitter in args.tid
ur = [e for e in events if e.get("cat") == "vfs" and e["name"] == "io_uring_read"]
expect("io_uring slices", len(ur), len(m["uring"]))
lane_names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"
              and e["name"] == "thread_name" and e["args"]["name"].startswith("io_uring lane")}
expect("io_uring lanes", sorted(lane_names.values()),
       ["io_uring lane %d" % i for i in range(1, m["uring_lanes"] + 1)])
for u in m["uring"]:
    got = [e for e in ur if ct.ns(e["ts"]) == u["ts_ns"] - base]
    if len(got) != 1:
        bad.append("io_uring at %d: %d slices" % (u["ts_ns"], len(got)))
        continue
    e = got[0]
    expect("io_uring pid", e["pid"], P)
    expect("io_uring submitter", e["args"].get("tid"), u["tid"])
    expect("io_uring offset", e["args"].get("offset"), u["offset"])
    expect("io_uring dur", ct.ns(e["dur"]), u["dur_ns"])
    if e["tid"] not in lane_names:
        bad.append("io_uring slice on tid %d, not on a lane" % e["tid"])

info = ct.trace_info(events)
expect("info flows", info["flows"], sum(1 for b in m["block"] if b["flow"]))
expect("info dangling", info["dangling_block_refs"],
       sum(1 for b in m["block"] if b["seq"] and not b["flow"]))

# per-file totals agree with what the generator's calls moved
ft = ct.file_totals(events)
# a.bin: pread 4096 + read 12288 + pread 4096 + three io_uring reads of 4096
expect("a.bin read_bytes", ft["/data/a.bin"]["read_bytes"], 4096 + 12288 + 4096 + 3 * 4096)
expect("a.bin reads", ft["/data/a.bin"]["reads"], 6)
expect("out.bin write_bytes", ft["/data/out.bin"]["write_bytes"], 100 + 1000)
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF

# the same capture through gzip gives the same events
"$GPUIO" convert "$TMP/f.gpuio" -o "$TMP/f.json.gz" || fail "convert to .json.gz failed"
[ "$(head -c2 "$TMP/f.json.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ] || fail ".json.gz is not gzip"
cmp <(gzip -dc "$TMP/f.json.gz") "$TMP/f.json" || fail ".json.gz differs from .json"
echo "flows bound where the generator put them"
