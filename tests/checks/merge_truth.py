"""Captures from several hosts on one timeline (t_merge) and traces started
together (t_start_at), against the clocks the captures were made with."""
import csv
import io
import re

import check_trace as ct
import pftrace as pf
import compare_exports as ce


def tp_blocks(text):
    """trace_processor_shell -q output of several queries: one list of CSV
    rows (header first) per query, the queries' outputs apart by blank lines"""
    return [list(csv.reader(io.StringIO(b))) for b in text.strip().split("\n\n")]


def machines(tp_out, json_a, json_b):
    """t_merge: Perfetto sees two machines named after the hosts, each holding
    its host's preadloop with the pid its own export gives it, 2000 reads each"""
    with open(tp_out) as f:
        blocks = tp_blocks(f.read())
    procs, reads, nm = blocks[0][1:], blocks[1][1:], blocks[2][1:]
    want = []
    for k, path in enumerate((json_a, json_b)):
        j = ct.load(path)
        host = ct.trace_info(j)["hostname"]
        pid = [e["pid"] for e in j if e.get("name") == "process_name" and e["args"]["name"].startswith("preadloop")]
        want.append([str(k), host, str(pid[0])])
    assert procs == want, ("machine, host, pid", procs, want)
    assert reads == [["0", "2000"], ["1", "2000"]], reads
    assert nm == [["2"]], nm
    print("machines (raw_id, name, pid):", procs, "reads per machine:", reads)


def clocks(pftrace, err, bjson, case):
    """t_merge b1/b2: each host a machine with its own pids; offsets from the
    anchors (min 0, B - A = the rewrite's shift + the anchors' own gap); B's
    calls exactly on its own MONOTONIC times moved by its offset; b1 after A,
    b2 an hour before"""
    t = pf.load(pftrace)
    assert not t.errors, t.errors[:5]
    # the hosts as machines: one SystemInfo each, their own pids (< 10,000,000)
    assert sorted(t.machines) == [0, 1], t.machines
    assert all(tr.pid < 10**7 for tr in t.tracks.values() if tr.kind == "process"), \
        [(tr.pid, tr.name) for tr in t.tracks.values() if tr.kind == "process"]
    ce.as_json_merge(t)      # the rest in the JSON's host-by-pid form
    shift = {"b1": -1000 * 10**9, "b2": -3600 * 10**9}[case]
    info = sorted((i["args"]["host_index"], i["args"]) for i in t.instants() if i["name"] == "gpuio trace info")
    assert [h for h, _ in info] == [0, 1], info
    a, b = info[0][1], info[1][1]
    # the anchors' own difference: these captures came from one machine
    d = (b["realtime_base_ns"] - b["monotonic_base_ns"]) - (a["realtime_base_ns"] - a["monotonic_base_ns"])
    d -= shift if case == "b2" else -10**12   # undo the rewrite to get the true one
    # within 1 s: NTP slewing a just-booted machine's clock (chrony up to 83 ms/s)
    # moves it between two captures; a wrong anchor is off by the shift's seconds
    assert abs(d) < 10**9, "the two captures' anchors differ by %d ns" % d
    want_rel = shift + d                       # B's offset minus A's
    off_a, off_b = a["clock_offset_ns"], b["clock_offset_ns"]
    assert min(off_a, off_b) == 0 and off_b - off_a == want_rel, (off_a, off_b, want_rel)
    assert (a["pid_offset"], b["pid_offset"]) == (10**7, 2 * 10**7)
    with open(err) as f:
        errtext = f.read()
    m = re.search(r"b[12]\.gpuio: host (\S+), machine 1, clock offset \S+ s \(([+-]\d+) ns\)", errtext)
    assert m and int(m.group(2)) == off_b, errtext

    reads = {}
    for s in t.slices():
        tr = t.tracks[s["track"]]
        if s["name"] == "pread64" and s["args"].get("path", "").endswith("/data"):
            reads.setdefault(tr.pid // 10**7, []).append(s)
    ra, rb = reads.get(1, []), reads.get(2, [])
    assert len(ra) == len(rb) == 2000, (len(ra), len(rb))
    procs = {tr.pid: tr.name for tr in t.tracks.values() if tr.kind == "process"}
    assert all(n.startswith("vm#") or ": " in n for n in procs.values()), procs
    hosts = {pid // 10**7: n.split(": ")[0] for pid, n in procs.items()}
    assert hosts[1] != hosts[2], hosts
    # B's calls on the merged clock: their own MONOTONIC times (the rewritten
    # capture's: + 1000 s for B1) moved by B's offset
    bj = ct.load(bjson)
    binfo = ct.trace_info(bj)
    t0 = [e["ts"] for e in bj if e.get("name") == "gpuio trace info"][0]
    bts = sorted(binfo["monotonic_base_ns"] + ct.ns(e["ts"]) - ct.ns(t0) for e in bj
                 if e.get("name") == "pread64" and e["args"].get("path", "").endswith("/data"))
    mts = sorted(s["ts"] for s in rb)
    mono = 10**12 if case == "b1" else 0
    assert all(x - y == mono + off_b for x, y in zip(mts, bts)), (mts[0] - bts[0], mono + off_b)
    if case == "b1":
        assert max(s["ts"] + s["dur"] for s in ra) < min(s["ts"] for s in rb), "B1 before A"
        print("b1: B's calls after A's, exactly on B's own times; offsets A %+d B %+d ns" % (off_a, off_b))
    else:
        assert max(s["ts"] + s["dur"] for s in rb) < min(s["ts"] for s in ra), "B2 not an hour early"
        print("b2: B's calls an hour before A's; offsets A %+d B %+d ns" % (off_a, off_b))


def skew(mjson, mpftrace, mono, real):
    """t_merge skews: a timeline from >= 0 (no JSON ts < 0, no protobuf time
    past 2^63), B - A = the wall-clock skew minus the boot difference (within
    1 s: the clock may be slewed between the captures), every read there"""
    j, t = ct.load(mjson), pf.load(mpftrace)
    mono, real = int(mono), int(real)
    neg = [e for e in j if "ts" in e and e["ts"] < 0]
    assert not neg, "negative JSON ts: %s" % neg[:2]
    big = [s for s in t.slices() if s["ts"] >= 2**63 or s["ts"] + s["dur"] >= 2**63]
    assert not big and not t.errors, (big[:2], t.errors[:3])
    info = sorted((i["args"]["host_index"], i["args"]) for i in t.instants() if i["name"] == "gpuio trace info")
    off = [x["clock_offset_ns"] for _, x in info]
    assert min(off) == 0, off
    # B - A: the wall-clock skew minus the boot difference
    rel = off[1] - off[0] - (real - mono)
    assert abs(rel) < 10**9, (off, real, mono)    # as in clocks(): NTP may slew meanwhile
    n = sum(1 for e in j if e.get("name") == "pread64" and e["args"].get("path", "").endswith("/data"))
    assert n == 4000, n
    print("skew mono %+d real %+d s: offsets %s, ts >= 0, %d reads" % (mono // 10**9, real // 10**9, off, n))


def start_at(h1, h2, start):
    """t_start_at: both traces' wall-clock anchors within 0.5 s after START (s),
    their first read of the data file after it, 0.5 s apart at most"""
    start = int(start) * 10**9
    anchors = []
    for path in (h1, h2):
        ev = ct.load(path)
        info = ct.trace_info(ev)
        real, mono = info["realtime_base_ns"], info["monotonic_base_ns"]
        assert start <= real < start + 5 * 10**8, (path, real - start)
        reads = [ct.ns(e["ts"]) for e in ev if e.get("name") == "read" and
                 e["args"].get("path", "").endswith("/data")]
        assert reads, "no reads of the data file in %s" % path
        # the first read on the wall clock: anchor + (origin - anchor) + ts
        first = real + info["timeline_origin_ns"] - mono + min(reads)
        assert first >= start, (path, first - start)
        anchors.append(real)
        print("%s: attached %.3f s after TIME, first read %.3f s after" %
              (path.split("/")[-1], (real - start) / 1e9, (first - start) / 1e9))
    assert abs(anchors[0] - anchors[1]) < 5 * 10**8, anchors
