"""gpuio merge --pytorch (t_merge_pytorch): the profiler's events on the
merged timeline, against the truth the traced program or the generator
(tests/kineto_gen.py) wrote."""
import json
import re

PID_STRIDE = 10000000   # a JSON merge moves host 1's pids by this


def _ns(v):
    """a JSON µs value with 3 decimals as exact ns"""
    s = "%.3f" % v if isinstance(v, float) else str(v)
    neg = s.startswith("-")
    whole, _, frac = s.lstrip("-").partition(".")
    ns = int(whole) * 1000 + int((frac + "000")[:3])
    return -ns if neg else ns


def _load(path):
    with open(path) as f:
        j = json.load(f)
    info = [e for e in j if e.get("name") == "gpuio trace info"][0]
    origin = info["args"]["monotonic_base_ns"] - _ns(info["ts"])   # JSON ts 0 on MONOTONIC
    names = {}
    for e in j:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[(e["pid"], None)] = e["args"]["name"]
    pt = [e for e in j if e.get("cat") == "pytorch"]
    for e in pt:
        e["mono"] = origin + _ns(e["ts"])
        e["dur_ns"] = _ns(e["dur"])
        e["lane"] = names.get((e["pid"], e["tid"]))
        e["proc"] = names.get((e["pid"], None))
    return pt


def _slices_in(trace_path):
    with open(trace_path) as f:
        t = json.load(f)
    evs = t["traceEvents"] if isinstance(t, dict) else t
    return [e for e in evs if e.get("ph") in ("X", "i", "I")]


def torch(merged, trace, truth_path, stderr):
    """the real torch 1.13 run: every profiler event is there once; each
    known_block_i is on the loop thread's PyTorch track, and holds the
    program's own [a, b] within the error the merge printed"""
    with open(truth_path) as f:
        truth = json.load(f)
    with open(stderr) as f:
        err_text = f.read()
    m = re.search(r"aligned through (\d+) .* of tid (\d+) \(pid (\d+)\).*error ±([0-9.]+) µs", err_text)
    assert m, ("no alignment line", err_text)
    used, tid, pid, err_us = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4))
    assert (pid, tid) == (truth["pid"], truth["tid"]), ("matched the wrong thread", pid, tid, truth)
    err = int(err_us * 1000)
    pt = _load(merged)
    want = _slices_in(trace)
    assert len(pt) == len(want), ("profiler events in the output", len(pt), "in the trace", len(want))
    worst = None
    for i, (a, b) in enumerate(truth["blocks"]):
        s = [e for e in pt if e["name"] == "known_block_%d" % i]
        assert len(s) == 1, ("known_block_%d" % i, len(s))
        s = s[0]
        assert s["pid"] == truth["pid"] + PID_STRIDE and s["lane"] == "PyTorch · tid %d" % truth["tid"], \
            ("known_block_%d not on the loop thread's track" % i, s["pid"], s["lane"], truth)
        start, end = s["mono"], s["mono"] + s["dur_ns"]
        # the program reads a after entering the block and b before leaving it
        assert start <= a + err and end >= b - err, \
            ("known_block_%d [%d, %d] does not hold the program's [%d, %d] within ±%d ns"
             % (i, start, end, a, b, err))
        assert start >= a - 1000000 and end <= b + 1000000, ("known_block_%d far from the truth" % i)
        worst = max(x for x in (worst, start - a, b - end) if x is not None)
    print("kineto_truth: %d profiler events; %d known blocks hold the program's own times "
          "(aligned through %d intervals, error ±%.3f µs; worst edge %+.3f µs)"
          % (len(pt), len(truth["blocks"]), used, err_us, worst / 1000))


def synthetic(merged, expect_path, pid, tid):
    """the 2.x-format trace: every event at exactly its MONOTONIC time, on its
    track, with its args"""
    pid, tid = int(pid), int(tid)
    with open(expect_path) as f:
        expect = json.load(f)
    pt = _load(merged)
    assert len(pt) == len(expect), ("profiler events in the output", len(pt), "expected", len(expect))
    for x in expect:
        s = [e for e in pt if e["name"] == x["name"]]
        assert len(s) == 1, (x["name"], len(s))
        s = s[0]
        assert s["mono"] == x["ts"] and s["dur_ns"] == x["dur"], \
            (x["name"], "at", s["mono"], s["dur_ns"], "expected", x["ts"], x["dur"])
        assert s["args"]["category"] == x["cat"], (x["name"], s["args"])
        if x["track"] == "thread":
            assert s["pid"] == pid + PID_STRIDE and s["lane"] == "PyTorch · tid %d" % tid, \
                (x["name"], s["pid"], s["lane"])
        else:
            assert s["proc"].endswith(": PyTorch profiler: GPU 0") and s["lane"].startswith("stream "), \
                (x["name"], s["proc"], s["lane"])
    mm = [e for e in pt if e["name"] == "aten::mm"][0]["args"]
    assert mm["Input Dims"] == "[[16,64],[64,16]]" and mm["Sequence number"] == 7, mm
    k = [e for e in pt if e["name"].startswith("volta")][0]
    assert k["lane"] == "stream 7" and k["args"]["est. achieved occupancy %"] == 12.5, (k["lane"], k["args"])
    print("kineto_truth: %d events of the 2.x-format trace at their exact MONOTONIC times" % len(pt))


def counts(tp_out, n):
    """Perfetto's importer sees n slices of category pytorch"""
    with open(tp_out) as f:
        rows = [r for r in f.read().split("\n") if r.strip()]
    assert rows[-1].strip('"') == str(n), ("pytorch slices in Perfetto", rows, "expected", n)
