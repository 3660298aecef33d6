"""Exports (JSON, Perfetto protobuf) of gen_capture's synthetic captures
against the manifests it prints, the ground truth written beside each
capture (t_export_flows, t_export_hostile, t_export_gpu, t_export_pftrace,
t_pftrace_protoc, t_capture_errors).

What computes truth is apart and unit-tested: timeline_base (JSON ts 0 of
a manifest), counter_bytes (what throughput counters integrate to),
decoded (the documented replacement rule for invalid UTF-8),
parse_textproto (protoc --decode's text format)."""
import gzip
import json
import re
import sys
from collections import Counter

import check_trace as ct
import pftrace as pf


def timeline_base(m):
    """JSON ts 0 of a capture: the earliest of its start (monotonic_ns) and
    every ts_ns anywhere in its manifest M (calls may begin before the anchor)"""
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
    return min([m["monotonic_ns"]] + list(all_ts(m)))


def counter_bytes(cs, col):
    """bytes a throughput counter column integrates to: CS is [(ts_ns, args)]
    in time order, args[COL] in MiB/s held until the next sample"""
    return sum(a[col] * (t1 - t0) / 1e9 * 1048576 for (t0, a), (t1, _) in zip(cs, cs[1:]))


def decoded(hexstr):
    """the string a name must export as: its bytes decoded with one U+FFFD per
    maximal ill-formed subpart (user/lib/json_writer.h's rule, Python's own)"""
    return bytes.fromhex(hexstr).decode("utf-8", "replace")


def textproto_tokens(text):
    """the tokens of protoc --decode's text output"""
    pat = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(-?[0-9][0-9.eE+-]*)|("(?:[^"\\]|\\.)*")|([:{}]))')
    i = 0
    while True:
        m = pat.match(text, i)
        if not m or m.end() == i:
            if text[i:].strip():
                raise SystemExit("cannot parse protoc output at %r" % text[i:i + 40])
            return
        i = m.end()
        yield m.group(1) or m.group(2) or m.group(3) or m.group(4)


def textproto_unquote(s):
    """a quoted text-format string (C escapes, bytes as octal) as UTF-8 text"""
    b = s[1:-1].encode("latin-1").decode("unicode_escape").encode("latin-1")
    return b.decode("utf-8")


def textproto_parse(it):
    """{field: [value, ...]} of a message's tokens (nested messages as dicts)"""
    msg = {}
    for tok in it:
        if tok == "}":
            return msg
        name = tok
        nxt = next(it)
        if nxt == "{":
            val = textproto_parse(it)
        else:
            assert nxt == ":", nxt
            v = next(it)
            val = textproto_unquote(v) if v.startswith('"') else (int(v) if re.fullmatch(r"-?\d+", v) else
                  float(v) if re.fullmatch(r"-?[0-9.eE+-]+", v) else
                  {"true": True, "false": False}.get(v, v))
        msg.setdefault(name, []).append(val)
    return msg


def parse_textproto(text):
    return textproto_parse(iter(textproto_tokens(text)))


def flows(manifest, trace):
    """t_export_flows: VFS -> block arrows bound exactly where the generator put
    them, lanes as many as the requests' concurrency and never overlapping,
    times, queue/service split, counters and every other call shape as
    generated"""
    m = json.load(open(manifest))
    events = ct.load(trace)
    P = m["pid"]
    bad = []

    def expect(what, got, exp):
        if got != exp:
            bad.append("%s: got %r, want %r" % (what, got, exp))

    # JSON ts 0 is the timeline origin: the earliest of the trace start and every
    # event (here some calls began before the anchor), never a negative ts
    base = timeline_base(m)
    expect("timeline origin", ct.trace_info(events)["timeline_origin_ns"], base)
    expect("earliest ts", min(ct.ns(e["ts"]) for e in events if "ts" in e), 0)

    # ts/dur: exactly three decimals, in the raw text
    for line in open(trace):
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
            total = counter_bytes(cs, col)
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
                  and e["name"] == "thread_name" and e["args"]["name"].startswith("async I/O lane")}
    expect("io_uring lanes", sorted(lane_names.values()),
           ["async I/O lane %d" % i for i in range(1, m["uring_lanes"] + 1)])
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


def hostile(manifest, path):
    """t_export_hostile: hostile names (quotes, backslashes, control bytes, NUL,
    invalid UTF-8) in paths, process/thread/disk names and the header export
    as valid JSON, one event per line, each name decoded(its bytes)"""
    m = json.load(open(manifest))
    events = ct.load(path)            # strict UTF-8 + strict JSON (no raw control chars)
    bad = []

    want = decoded

    def expect(what, got, exp):
        if got != exp:
            bad.append("%s: got %r, want %r" % (what, got, exp))

    # one event per line: every line between [ and ] parses on its own
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    lines = raw.decode("utf-8").split("\n")
    expect("first line", lines[0], "[")
    body = [l for l in lines[1:] if l not in ("]", "")]
    for l in body:
        json.loads(l[:-1] if l.endswith(",") else l)
    expect("lines", len(body), len(events))

    vfs = [e for e in events if e.get("cat") == "vfs"]
    by_fd = {}
    for e in vfs:
        by_fd.setdefault(e["args"].get("fd"), []).append(e)
    for p in m["paths"]:
        evs = by_fd.get(p["fd"], [])
        if not evs:
            bad.append("no vfs event for fd %d" % p["fd"])
            continue
        for e in evs:
            expect("path of fd %d" % p["fd"], e["args"]["path"], want(p["expect_hex"]))
        if "ftype" in p:
            expect("ftype of fd %d" % p["fd"], evs[0]["args"].get("ftype"), p["ftype"])
        elif "ftype" in evs[0]["args"]:
            bad.append("fd %d: regular file with ftype %r" % (p["fd"], evs[0]["args"]["ftype"]))

    names = {}
    for e in events:
        if e.get("ph") == "M" and e["name"] in ("process_name", "thread_name"):
            names[(e["name"], e["pid"], e.get("tid"))] = e["args"]["name"]
    pr = m["process"]
    expect("process_name", names.get(("process_name", pr["pid"], None)), want(pr["name_hex"]))
    for t in m["threads"]:
        expect("thread_name %d" % t["tid"], names.get(("thread_name", pr["pid"], t["tid"])),
               want(t["name_hex"]))
    disk = want(m["disk_hex"])
    expect("disk process_name", names.get(("process_name", 0x40000000, None)), "disk " + disk)
    blocks = [e for e in events if e.get("cat") == "block" and e["ph"] == "X"]
    expect("block slices", len(blocks), 1)
    if blocks:
        expect("block dev", blocks[0]["args"]["dev"], disk)
        expect("block path", blocks[0]["args"]["path"], want(m["block_path_hex"]))
    counters = {e["name"] for e in events if e.get("ph") == "C"}
    expect("counter names", counters, {"throughput " + disk})

    info = ct.trace_info(events)
    expect("hostname", info["hostname"], want(m["hostname_hex"]))
    expect("cmdline", info["cmdline"], want(m["cmdline_hex"]))
    expect("target", info["target"], want(m["target_hex"]))
    expect("dropped", info["dropped"], m["dropped"])
    expect("drops_known", info["drops_known"], True)
    expect("unresolved_paths", info["unresolved_paths"], m["unresolved_paths"])
    expect("capture_complete", info["capture_complete"], True)

    # the replacement rule itself, on bytes the generator wrote (sanity of the oracle)
    expect("rule: lone c3", want("c378"), "\ufffdx")
    expect("rule: cut 3-byte", want("e282"), "\ufffd")
    expect("rule: surrogate", want("eda080"), "\ufffd\ufffd\ufffd")

    for b in bad:
        print("  " + b)
    sys.exit(1 if bad else 0)


def gpu(manifest, trace, pftrace):
    """t_export_gpu: every GPU-side slice exactly as generated (category, name,
    track, ts, dur), the GPU tracks and lanes, flows by correlation, merged
    CUPTI/uprobe calls, busy counters, collector status and drops in the info,
    and the protobuf's arrows"""

    m = json.load(open(manifest))
    ev = ct.load(trace)
    GPU_CATS = {"gpu", "cuda_api", "nvtx", "cuda_sync", "cupti_overhead"}
    pname = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "thread_name"}

    def track(e):
        if e["pid"] < 0x20000000 and e["tid"] < 0x20000000:
            return "thread %d" % e["tid"]
        return tname[(e["pid"], e["tid"])]

    got = [e for e in ev if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
    want = Counter((s["cat"], bytes.fromhex(s["name_hex"]).decode(), s["track"], s["ts_ns"], s["dur_ns"])
                   for s in m["slices"])
    have = Counter((e["cat"], e["name"], track(e), ct.ns(e["ts"]), ct.ns(e["dur"])) for e in got)
    for k in want - have:
        print("missing:", k)
    for k in have - want:
        print("unexpected:", k)
    assert want == have, "GPU slices differ from the manifest"
    assert len(got) == len(m["slices"]), (len(got), len(m["slices"]))

    # GPU processes and the lanes they hold
    gpus = sorted(n for p, n in pname.items() if n.startswith("GPU "))
    assert gpus == ["GPU 0", "GPU 1"], gpus
    lanes = sorted(n for (p, t), n in tname.items() if n.startswith("GPU "))
    assert lanes == sorted(["GPU 0 \u00b7 stream 7", "GPU 0 \u00b7 stream 7 \u00b7 lane 2",
                            "GPU 0 \u00b7 stream 13", "GPU 0 \u00b7 CUPTI overhead",
                            "GPU 1 \u00b7 stream 7", "GPU 1 \u00b7 stream 21", "GPU 1 \u00b7 sync"]), lanes
    for (p, t), n in tname.items():
        if n.startswith("GPU "):
            assert pname[p] == n.split(" \u00b7 ")[0], (pname[p], n)

    # flows: by correlation, out of API calls, into activities; counts as generated
    outs = {e["bind_id"]: e for e in got if e.get("flow_out")}
    ins = [e for e in got if e.get("flow_in")]
    assert len(ins) == m["flows"], (len(ins), m["flows"])
    for e in ins:
        src = outs[e["bind_id"]]
        assert src["cat"] == "cuda_api" and e["cat"] == "gpu", (src["name"], e["name"])
        assert src["args"]["correlation"] == e["args"]["correlation"], (src, e)
        assert src["args"]["source"] == "runtime", src
    for s in m["slices"]:
        if s["flow"] == "out":
            e = [g for g in got if g["cat"] == s["cat"] and ct.ns(g["ts"]) == s["ts_ns"]][0]
            assert e.get("flow_out") and sum(1 for i in ins if i["bind_id"] == e["bind_id"]) == s["nflow"], e
        elif s["flow"] == "in":
            e = [g for g in got if g["cat"] == s["cat"] and ct.ns(g["ts"]) == s["ts_ns"] and
                 track(g) == s["track"]][0]
            assert e.get("flow_in"), e
        else:
            for g in got:
                if g["cat"] == s["cat"] and ct.ns(g["ts"]) == s["ts_ns"] and track(g) == s["track"]:
                    assert "bind_id" not in g, g

    # dedup: the merged calls carry the uprobe's args, the uprobe-only launch its symbol
    api = [e for e in got if e["cat"] == "cuda_api"]
    assert not any(e["args"]["source"].startswith("uprobe") and e["name"] != "cuLaunchKernel" for e in api), \
        "a uprobe record CUPTI also saw was not merged"
    for mg in m["merged"]:
        e = [a for a in api if a["name"] == mg["name"] and ct.ns(a["ts"]) == mg["ts_ns"]]
        assert len(e) == 1, (mg, e)
        a = e[0]["args"]
        assert a.get("uprobe") is True, a
        for k in ("func", "kernel", "bytes", "memcpy_kind"):
            if k in mg:
                assert a.get(k) == mg[k], (k, a.get(k), mg[k])
    uo = [e for e in api if e["args"]["source"] == "uprobe_driver"]
    assert len(uo) == 1 and uo[0]["args"]["kernel"] == m["uprobe_only"]["kernel"], uo
    err = [e for e in api if e["args"]["ret"] != 0]
    assert len(err) == 1 and err[0]["args"]["error"] == "cudaErrorMemoryAllocation", err

    # busy fraction per GPU: exactly the union of activities per 1 ms bucket
    for g, pts in m["busy"].items():
        pid = [p for p, n in pname.items() if n == g][0]
        c = [(ct.ns(e["ts"]), e["args"]["fraction"]) for e in ev
             if e.get("ph") == "C" and e["pid"] == pid]
        assert c == [(t, v) for t, v in pts], (g, c, pts)

    # the info: collector status, drops
    info = ct.trace_info(ev)
    gi = info["gpu"]
    assert info["dropped"] == m["cupti_dropped"] and info["drops"]["cupti_dropped"] == m["cupti_dropped"], info["drops"]
    assert gi["cupti_dropped"] == m["cupti_dropped"], gi
    assert gi["processes"]["500"]["state"] == "final" and gi["processes"]["500"]["clock"] == "monotonic_callback"
    p6 = gi["processes"]["600"]
    assert p6["state"] == "unavailable" and "MULTIPLE_SUBSCRIBERS" in p6["reason"] and p6["cupti_error"] == 39, p6
    assert gi["api_calls_merged"] == m["merged_count"] and gi["flows"] == m["flows"], gi
    assert gi["dangling_correlations"] == m["dangling"] and gi["overlap_slices"] == m["overlap_slices"], gi
    assert info["record_counts"]["gpu_kernel"] == 6 and info["record_counts"]["cuda_api"] == 17, info["record_counts"]

    # protobuf: the same arrows, bound the way trace processor binds them
    t = pf.load(pftrace)
    assert not t.errors, t.errors[:3]
    fl = t.flows(t.slices())
    assert len(fl) == m["flows"] + 0, len(fl)
    assert all(a["cat"] == "cuda_api" and b["cat"] == "gpu" for a, b in fl)
    print("gpu: %d GPU-side slices, %d arrows, %d GPU lanes, busy counters and info as generated" %
          (len(got), len(ins), len(lanes)))


def gpu_info(info):
    """t_export_gpu: gpuio info --json counts the generated GPU records"""
    i = json.load(open(info))
    assert i["record_counts"]["gpu_kernel"] == 6 and i["record_counts"]["nvtx"] == 4, i["record_counts"]
    g = i["gpu"]
    assert g["cupti_dropped"] == 7 and len(g["collectors"]) == 2, g
    assert g["collectors"][1]["pid"] == 600 and g["collectors"][1]["state"] == "unavailable", g


def gpu_bad_traces(trace, bad1, bad2):
    """t_export_gpu: two broken copies of TRACE for the checker to refuse: a
    kernel moved onto the lane of the kernel it overlaps (BAD1), a kernel
    before its launch call (BAD2)"""
    ev = json.load(open(trace))
    k = [e for e in ev if e.get("ph") == "X" and e["name"] == "relu_kernel"][0]
    gem = [e for e in ev if e.get("ph") == "X" and e["name"] == "gemm_kernel" and e["pid"] == k["pid"]][0]
    k["tid"] = gem["tid"]                       # onto the lane of the kernel it overlaps
    json.dump(ev, open(bad1, "w"))
    ev = json.load(open(trace))
    k = [e for e in ev if e.get("ph") == "X" and e["name"] == "relu_kernel"][0]
    k["ts"] = 1000.0                            # before its launch (1099.5 us)
    json.dump(ev, open(bad2, "w"))


def gpu_merged(trace):
    """t_export_gpu: two hosts merged: four GPU processes, 22 arrows"""
    ev = ct.load(trace)
    gp = sorted(e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"
                and " GPU " in " " + e["args"]["name"])
    assert len(gp) == 4 and len(set(gp)) == 4, gp
    fl = sum(1 for e in ev if e.get("flow_in") and e.get("cat") == "gpu")
    assert fl == 22, fl
    print("merge: %s, %d arrows" % (gp, fl))


def flows_pftrace(manifest, pftrace):
    """t_export_pftrace: the protobuf's arrows and io_uring lanes as generated"""
    m = json.load(open(manifest))
    t = pf.load(pftrace)
    assert not t.errors, t.errors
    sl = t.slices()
    want = sum(1 for b in m["block"] if b["flow"])
    flows = t.flows(sl)
    assert len(flows) == want, "%d flows, want %d" % (len(flows), want)
    for src, dst in flows:
        assert src["cat"] == "vfs" and dst["cat"] == "block", (src["name"], dst["name"])
        key = (dst["args"]["tid"], src["ts"] - m["monotonic_ns"])
        ok = [v for v in m["vfs"] if (v["tid"], v["ts_ns"] - m["monotonic_ns"]) == key and v["flow"]]
        assert ok, "flow from a call the generator did not bind: %r" % (key,)
    lanes = {tr.name for tr in t.tracks.values() if tr.name and tr.name.startswith("async I/O lane")}
    assert len(lanes) == m["uring_lanes"], lanes
    print("flows: %d arrows, %d io_uring lanes as generated" % (len(flows), len(lanes)))


def tamper(src, dst):
    """t_export_pftrace: DST is SRC with its first /data/b.bin made /data/c.bin"""
    raw = open(src, "rb").read()
    i = raw.index(b"/data/b.bin")
    open(dst, "wb").write(raw[:i] + b"/data/c.bin" + raw[i + 11:])


def fork_workers_pftrace(pftrace):
    """t_export_pftrace: fork_workers' processes and named threads in the protobuf"""
    t = pf.load(pftrace)
    procs = [tr for tr in t.tracks.values() if tr.kind == "process"]
    names = {tr.name for tr in t.tracks.values() if tr.kind == "thread"}
    assert len(procs) >= 5, [p.name for p in procs]        # parent, 3 workers, sh/cat
    for want in ("gw-thread0", "gw-thread1", "gw-worker0", "gw-worker1", "gw-worker2"):
        assert want in names, (want, names)
    print("fork_workers: %d processes, threads %s" % (len(procs), sorted(n for n in names if n.startswith("gw-"))))


def truncated(trace, nvfs):
    """t_capture_errors: a cut capture exports its NVFS whole calls, not complete,
    its 7 drops known not final"""
    ev = ct.load(trace)
    n = sum(1 for e in ev if e.get("cat") == "vfs")
    info = ct.trace_info(ev)
    assert n == int(nvfs), "vfs slices %d, want %s" % (n, nvfs)
    assert info["capture_complete"] is False, info
    assert info["drops_final"] is False and info["dropped"] == 7, info


def protoc_basic(txt):
    """t_pftrace_protoc: protoc's decode of gen_capture basic's .pftrace holds,
    field by field, what the capture holds (clock snapshot, sequence flags,
    tracks, slices and args, the block request, its flow, counters, info)"""
    with open(txt) as f:
        trace = parse_textproto(f.read())
    pkts = trace["packet"]
    bad = []
    def expect(what, got, want):
        if got != want:
            bad.append("%s: got %r, want %r" % (what, got, want))
    def one(m, k, default=None):
        v = m.get(k)
        return v[0] if v else default

    BASE = 1000000000000
    # packet 0: the clock snapshot that makes Perfetto keep the events
    p0 = pkts[0]
    cs = one(p0, "clock_snapshot")
    expect("clocks", [(one(c, "clock_id"), one(c, "timestamp")) for c in cs["clocks"]],
           [(3, BASE), (1, 1700000000123456789), (6, BASE)])  # BOOTTIME: another boot, no suspend known
    expect("primary clock", one(cs, "primary_trace_clock"), "BUILTIN_CLOCK_MONOTONIC")
    expect("first flags", one(p0, "sequence_flags"), 1)
    expect("defaults clock", one(one(p0, "trace_packet_defaults"), "timestamp_clock_id"), 3)
    for i, p in enumerate(pkts):
        expect("packet %d sequence" % i, one(p, "trusted_packet_sequence_id"), 1)
        if i:
            expect("packet %d flags" % i, one(p, "sequence_flags"), 2)

    # interning tables (one sequence, cleared once)
    names, cats, anames, strs = {}, {}, {}, {}
    for p in pkts:
        for d in p.get("interned_data", []):
            for k, tab, f in (("event_names", names, "name"), ("event_categories", cats, "name"),
                              ("debug_annotation_names", anames, "name"),
                              ("debug_annotation_string_values", strs, "str")):
                for e in d.get(k, []):
                    assert one(e, "iid") not in tab, "iid %d of %s bound twice" % (one(e, "iid"), k)
                    tab[one(e, "iid")] = one(e, f)

    tracks = {}
    for p in pkts:
        td = one(p, "track_descriptor")
        if td:
            tracks[one(td, "uuid")] = td
    procs = [(one(one(t, "process"), "pid"), one(one(t, "process"), "process_name"))
             for t in tracks.values() if "process" in t]
    expect("processes", procs, [(10, "app: app --epochs 3")])
    threads = sorted((one(one(t, "thread"), "pid"), one(one(t, "thread"), "tid"),
                      one(one(t, "thread"), "thread_name")) for t in tracks.values() if "thread" in t)
    expect("threads", threads, [(10, 10, "app"), (10, 11, "app-worker")])
    plain = {one(t, "name"): t for t in tracks.values() if "name" in t}
    disk = plain.get("disk sda")
    expect("disk track", disk is not None, True)
    if disk:
        expect("disk children order", one(disk, "child_ordering"), "EXPLICIT")
        lane = plain.get("lane 1", {})
        expect("lane parent", one(lane, "parent_uuid"), one(disk, "uuid"))
        expect("lane rank", one(lane, "sibling_order_rank"), 1)
        for col in ("read", "write"):
            c = plain.get("throughput sda %s_MiBps" % col, {})
            expect(col + " counter parent", one(c, "parent_uuid"), one(disk, "uuid"))
            expect(col + " counter unit", one(one(c, "counter", {}), "unit_name"), "MiB/s")

    def args(te):
        out = {}
        for a in te.get("debug_annotations", []):
            k = anames[one(a, "name_iid")]
            if "string_value_iid" in a:
                out[k] = strs[one(a, "string_value_iid")]
            else:
                for f in ("int_value", "uint_value", "bool_value", "double_value", "string_value"):
                    if f in a:
                        out[k] = one(a, f)
        return out

    events = [(one(p, "timestamp"), one(p, "track_event")) for p in pkts if "track_event" in p]
    by_name = {}
    for ts, te in events:
        if one(te, "type") == "TYPE_SLICE_BEGIN":
            by_name.setdefault(names[one(te, "name_iid")], []).append((ts, te))
    uuid_of_thread = {one(one(t, "thread"), "tid"): u for u, t in tracks.items() if "thread" in t}

    ts, op = by_name["openat"][0]
    expect("openat ts", ts, BASE + 1000)
    expect("openat track", one(op, "track_uuid"), uuid_of_thread[10])
    expect("openat category", [cats[c] for c in op["category_iids"]], ["vfs"])
    expect("openat args", args(op), {"path": "/srv/ds/data.bin", "fd": 3, "flags": "O_RDONLY"})
    ends = [t for t, te in events if one(te, "type") == "TYPE_SLICE_END" and
            one(te, "track_uuid") == uuid_of_thread[10]]
    expect("openat end", ends[0], BASE + 1500)

    preads = sorted(by_name["pread64"], key=lambda x: x[0])
    ts, pr = preads[0]
    expect("pread ts/track", (ts, one(pr, "track_uuid")), (BASE + 20000, uuid_of_thread[11]))
    expect("pread args", args(pr), {"path": "/srv/ds/data.bin", "fd": 3, "bytes": 4096,
                                    "requested": 4096, "offset": 0, "cache_miss_pages": 0})
    ts, rd = by_name["read"][0]
    expect("block ts", ts, BASE + 21000)
    expect("block track", one(rd, "track_uuid"), one(plain.get("lane 1", {}), "uuid"))
    expect("block args", args(rd), {"dev": "sda", "op": "read", "flags": "sync", "sector": 2048,
                                    "bytes": 4096, "queue_us": 1.0, "service_us": 8.0, "pid": 10,
                                    "tid": 11, "path": "/srv/ds/data.bin", "writeback": False})
    expect("flow", (len(pr.get("flow_ids", [])), rd.get("terminating_flow_ids")),
           (1, pr.get("flow_ids")))
    expect("second pread has no flow", preads[1][1].get("flow_ids"), None)

    counters = [(ts, one(te, "double_counter_value")) for ts, te in events
                if one(te, "type") == "TYPE_COUNTER"]
    expect("counters end at zero", [v for _, v in counters[-2:]], [0.0, 0.0])
    info = [(ts, te) for ts, te in events if one(te, "type") == "TYPE_INSTANT"]
    expect("info instant", [(ts, names[one(te, "name_iid")]) for ts, te in info],
           [(BASE, "gpuio trace info")])
    ia = args(info[0][1])
    expect("info", (ia["hostname"], ia["vfs_events"], ia["block_requests"], ia["flows"],
                    ia["capture_complete"]), ("genhost", 3, 1, 1, True))
    for b in bad:
        print("  " + b)
    print("protoc: %d packets decoded, %d tracks, %d events checked" % (len(pkts), len(tracks), len(events)))
    sys.exit(1 if bad else 0)



def info_truncated(info, off, part):
    """t_capture_errors: gpuio info --json of a cut capture: where it was cut and
    how much, not complete, the stats not final"""
    with open(info) as f:
        d = json.load(f)
    assert d["truncated_at"] == int(off) and d["truncated_bytes"] == int(part), d
    assert d["complete"] is False and d["stats"]["final"] is False, d


def header_only(trace):
    """t_capture_errors: a capture of a header alone exports with drops unknown
    (never "0 dropped"), not complete"""
    with open(trace) as f:
        info = [e for e in json.load(f) if e["name"] == "gpuio trace info"][0]["args"]
    assert info["dropped"] is None and info["drops_known"] is False and info["capture_complete"] is False, info


def hostile_info():
    """t_export_hostile: gpuio info --json (stdin) of the hostile capture: its 5
    drops, complete"""
    d = json.load(sys.stdin)
    assert d["stats"]["dropped"] == 5 and d["complete"], d
