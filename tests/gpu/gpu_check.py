#!/usr/bin/env python3
"""gpu_check.py - check gpuio's JSON trace of tests/gpu/gpu_check.cu against the
ground truth the program wrote (cudaEvent timings, host clock probes).

usage: gpu_check.py [--label NAME] TRACE.json[.gz] TRUTH.json   (0 PASS, 1 FAIL)
       gpu_check.py --self-test   hand-made traces: three must pass, nine must fail

Checks, each printed with its numbers:
  collector  the program's GPU collector is on, loaded at launch (or, for a
             --wait-for-file run, injected: "attach"), no CUPTI drops
  streams    truth stream -> CUPTI stream id: cudaStreamGetId's id when the
             trace has it, else the stream whose ops come in the same order
  ops        each kernel/copy is there (name, bytes, stream; graph kernels on
             any stream), as many as in the truth, ordered as synchronized
  durations  kernels: dur within 5% of the cudaEvent time (or spin time), but
             at least 5 us. Copies: an event pair around a copy also times
             the hand-over from the gate kernel's engine to a copy engine
             (~8 us on an H200: 27% of a 1 MiB copy), which the copy's own
             record rightly leaves out. So per direction: the hand-over is
             the median of event - dur over the copies of 1 MiB and up; it
             must lie in [-2, 20] us; each copy's dur within 5% (>= 5 us)
             of its event time less the hand-over; and the bandwidth between
             the smallest and largest serial copy (where a constant cancels)
             within 5% of the events'. A table of all ops follows
  flows      each kernel/copy has flow_in bound to one cuda_api slice of the
             program (same correlation, not later, a launch/memcpy/graph call)
  clock      each probe kernel, on CLOCK_MONOTONIC through the trace info's
             timeline_origin_ns, lies in [host before launch, host after sync];
             error = the largest step outside; must be < 50 us
  structure  tests/check_trace.py accepts the trace
"""
import json
import os
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import check_trace as ct  # noqa: E402

REL_TOL = 0.05
ABS_FLOOR_NS = 5000
ALIGN_LIMIT_NS = 50000


def us(n):    # ns -> "12.3 us"
    return "%.1f us" % (n / 1000.0)


def gpu_slices(ev, truth):
    """The program's kernels, copies and memsets on its device."""
    return [e for e in ev if e.get("ph") == "X" and e.get("cat") == "gpu"
            and e.get("args", {}).get("pid") == truth["pid"]
            and e["args"].get("device") == truth.get("device", e["args"].get("device"))]


def key_of(e):
    return (e["name"], e["args"].get("bytes", 0))


def check_collector(info, truth):
    if not info:
        return ["no \"gpuio trace info\" event"], "not found"
    p = (info.get("gpu") or {}).get("processes", {}).get(str(truth["pid"]))
    if not p:
        return ["no GPU collector listed for pid %d" % truth["pid"]], "not found"
    want = "attach" if truth.get("mode") == "wait" else "launch"
    msg = "pid %d: state %s, how %s, clock %s (offset %d ns, uncertainty %d ns), CUPTI dropped %d" % (
        truth["pid"], p.get("state"), p.get("how"), p.get("clock"), p.get("offset_ns", 0),
        p.get("uncertainty_ns", 0), p.get("cupti_dropped", 0))
    errs = []
    if p.get("state") not in ("on", "final"):
        errs.append("collector %s: %s" % (p.get("state"), p.get("reason", "no reason given")))
    if p.get("how") != want:
        errs.append("collector loaded by %s, expected %s" % (p.get("how"), want))
    if p.get("cupti_dropped"):
        errs.append("CUPTI dropped %d records" % p["cupti_dropped"])
    return errs, msg


def map_streams(truth, gs):
    """truth stream index -> CUPTI stream id, and how it was found."""
    plain = [o for o in truth["ops"] if not o["graph_launch"]]
    idx = sorted({o["stream"] for o in plain})
    ids = {s["index"]: s["stream_id"] for s in truth["streams"]}
    have = {e["args"].get("stream") for e in gs}
    if all(ids.get(i) in have for i in idx):
        return {i: ids[i] for i in idx}, "by cudaStreamGetId"
    # else by signature: the ordered (name, bytes) of the plain ops per stream
    keys = {(o["name"], o["bytes"]) for o in plain}
    want = {i: [(o["name"], o["bytes"]) for o in plain if o["stream"] == i] for i in idx}
    got = defaultdict(list)
    for e in sorted(gs, key=lambda e: e["ts"]):
        if key_of(e) in keys:
            got[e["args"].get("stream")].append(key_of(e))
    m = {}
    for i in idx:
        c = [s for s, seq in got.items() if seq == want[i]]
        if len(c) != 1:
            return None, "stream %d: %d trace streams carry its sequence of ops" % (i, len(c))
        m[i] = c[0]
    return m, "by each stream's sequence of ops (cudaStreamGetId ids not in the trace)"


def match_ops(truth, gs, smap):
    """[(op, slice)] in truth order, and the problems."""
    groups = defaultdict(list)
    for o in truth["ops"]:
        k = ("graph", o["name"]) if o["graph_launch"] else (smap[o["stream"]], o["name"], o["bytes"])
        groups[k].append(o)
    slices = defaultdict(list)
    for e in sorted(gs, key=lambda e: (e["ts"], e["dur"])):
        slices[(e["args"].get("stream"),) + key_of(e)].append(e)
        slices[("graph", e["name"])].append(e)
    pairs, errs = [], []
    for k, ops in groups.items():
        got = slices.get(k, [])
        if len(got) != len(ops):
            o = ops[0]
            errs.append("%s%s on %s: truth has %d, trace %d" % (
                o["name"], " %d B" % o["bytes"] if o["bytes"] else "", "any stream (graph)"
                if o["graph_launch"] else "truth stream %d" % o["stream"], len(ops), len(got)))
        pairs += list(zip(ops, got))
    pairs.sort(key=lambda p: p[0]["seq"])
    # order: the program waited for each op (for the "concurrent" ones: all
    # of them) before it issued the next, so each group starts after the last
    groups = []
    for o, e in pairs:
        g = "concurrent" if o["phase"] == "concurrent" else o["seq"]
        if not groups or groups[-1][0] != g:
            groups.append((g, []))
        groups[-1][1].append((o, e))
    for (_, a), (_, b) in zip(groups, groups[1:]):
        last = max(ct.ns(e["ts"]) for _, e in a)
        first = min(b, key=lambda p: ct.ns(p[1]["ts"]))
        if ct.ns(first[1]["ts"]) <= last:
            errs.append("order: #%d %s starts at ts %.3f, not after #%d started (ts %.3f)" % (
                first[0]["seq"], first[0]["name"], first[1]["ts"], a[-1][0]["seq"], last / 1000.0))
    return pairs, errs


def check_bandwidth(pairs):
    """Per copy direction: (size, dur) vs (size, event) slopes between the
    smallest and largest serial copy; a constant hand-over cancels out."""
    errs, msgs = [], []
    for name in sorted({o["name"] for o, _ in pairs if o["kind"] == "memcpy"}):
        ser = sorted(((o, e) for o, e in pairs if o["name"] == name and o["phase"] == "serial"
                      and o["event_ns"]), key=lambda p: p[0]["bytes"])
        if len(ser) < 2 or ser[0][0]["bytes"] == ser[-1][0]["bytes"]:
            continue
        (o1, e1), (o2, e2) = ser[0], ser[-1]
        db = o2["bytes"] - o1["bytes"]
        dt_ev, dt_tr = o2["event_ns"] - o1["event_ns"], ct.ns(e2["dur"]) - ct.ns(e1["dur"])
        if dt_ev <= 0 or dt_tr <= 0:
            errs.append("%s: no bandwidth (event %d ns, trace %d ns between sizes)" % (name, dt_ev, dt_tr))
            continue
        bw_ev, bw_tr = db / float(dt_ev), db / float(dt_tr)
        rel = bw_tr / bw_ev - 1
        msgs.append("%s %.2f GB/s (events %.2f, %+.2f%%)" % (name.split()[1], bw_tr, bw_ev, 100 * rel))
        if abs(rel) > REL_TOL:
            errs.append("%s bandwidth %.2f GB/s, the events' %.2f GB/s (%+.2f%%)" % (name, bw_tr, bw_ev, 100 * rel))
    return errs, "; bandwidth %s" % ", ".join(msgs) if msgs else ""


HANDOVER_MIN_NS, HANDOVER_MAX_NS, HANDOVER_FROM = -2000, 20000, 1 << 20
SMALL_COPY = 64 << 10


def handovers(pairs):
    """Per copy direction: the median of event - dur over copies >= 1 MiB."""
    out = {}
    for name in sorted({o["name"] for o, _ in pairs if o["kind"] == "memcpy"}):
        d = sorted(o["event_ns"] - ct.ns(e["dur"]) for o, e in pairs
                   if o["name"] == name and o["event_ns"] and o["bytes"] >= HANDOVER_FROM)
        if d:
            out[name] = d[len(d) // 2]
    return out


def check_durations(pairs):
    worst, errs, table = {}, [], []
    handover = handovers(pairs)
    for name, h in sorted(handover.items()):
        if not HANDOVER_MIN_NS <= h <= HANDOVER_MAX_NS:
            errs.append("%s: event - dur is %s (median over copies >= 1 MiB), outside [%s, %s]" % (
                name, us(h), us(HANDOVER_MIN_NS), us(HANDOVER_MAX_NS)))
    for o, e in pairs:
        ref, what = (o["event_ns"], "cudaEvent") if o["event_ns"] is not None else \
            (o["target_ns"], "spin target")
        if o["kind"] == "memcpy" and o["bytes"] < SMALL_COPY:
            # a tiny copy may not use a copy engine at all (inline in the push
            # buffer): inside its events is all an event pair can say of it
            if not 0 < ct.ns(e["dur"]) <= o["event_ns"] + ABS_FLOOR_NS:
                errs.append("#%d %s %d B: dur %s outside its events' %s" % (
                    o["seq"], o["name"], o["bytes"], us(ct.ns(e["dur"])), us(o["event_ns"])))
            continue
        if o["kind"] == "memcpy" and o["event_ns"] is not None:
            ref = max(o["event_ns"] - handover.get(o["name"], 0), 1)
        d = ct.ns(e["dur"]) - ref
        rel = d / float(ref)
        if abs(d) > max(REL_TOL * ref, ABS_FLOOR_NS):
            errs.append("#%d %s%s: dur %s vs %s %s (%+.2f%%)" % (
                o["seq"], o["name"], " %d B" % o["bytes"] if o["bytes"] else "", us(ct.ns(e["dur"])),
                what, us(ref), 100 * rel))
        table.append("  #%-2d %-36s %9s  stream %s  %10s  %s %10s  %+6.2f%%" % (
            o["seq"], o["name"][:36], "%d B" % o["bytes"] if o["bytes"] else "", e["args"].get("stream"),
            us(ct.ns(e["dur"])), "event" if what == "cudaEvent" else "spin ", us(ref), 100 * rel))
        if o["kind"] not in worst or abs(rel) > abs(worst[o["kind"]][0]):
            worst[o["kind"]] = (rel, o)
    msg = ", ".join("worst %s %+.2f%% (#%d %s%s)" % (k, 100 * r, o["seq"], o["name"],
                                                      " %d B" % o["bytes"] if o["bytes"] else "")
                    for k, (r, o) in sorted(worst.items()))
    berrs, bmsg = check_bandwidth(pairs)
    hmsg = "; copies against event - hand-over (%s)" % ", ".join(
        "%s %s" % (k.split()[1], us(v)) for k, v in sorted(handover.items())) if handover else ""
    return errs + berrs, "%d/%d within %d%% (>= %s%s) of their cudaEvent time (or spin time); %s%s\n%s" % (
        len(pairs) - len(errs), len(pairs), int(REL_TOL * 100), us(ABS_FLOOR_NS), hmsg, msg, bmsg,
        "\n".join(table))


def check_flows(ev, pairs, pid):
    outs = defaultdict(list)
    for e in ev:
        if e.get("ph") == "X" and e.get("flow_out") is True and "bind_id" in e:
            outs[str(e["bind_id"])].append(e)
    errs, calls = [], defaultdict(int)
    for o, g in pairs:
        what = "#%d %s" % (o["seq"], o["name"])
        if g.get("flow_in") is not True or "bind_id" not in g:
            errs.append("%s: no flow into it" % what)
            continue
        src = outs.get(str(g["bind_id"]), [])
        if len(src) != 1:
            errs.append("%s: bind_id %s has %d API slices with flow_out" % (what, g["bind_id"], len(src)))
            continue
        a = src[0]
        need = "GraphLaunch" if o["graph_launch"] else "Launch" if o["kind"] == "kernel" else "Memcpy"
        bad = []
        if a.get("cat") != "cuda_api" or a.get("pid") != pid:
            bad.append("from %s slice of pid %s" % (a.get("cat"), a.get("pid")))
        if a.get("args", {}).get("correlation") != g["args"].get("correlation"):
            bad.append("correlation %s vs %s" % (a.get("args", {}).get("correlation"),
                                                  g["args"].get("correlation")))
        if ct.ns(a["ts"]) > ct.ns(g["ts"]):
            bad.append("API call starts after it")
        if need not in a["name"] or (need == "Launch" and "Graph" in a["name"]):
            bad.append("from %s (want a *%s* call)" % (a["name"], need))
        if bad:
            errs.append("%s: %s" % (what, "; ".join(bad)))
        else:
            calls[a["name"]] += 1
    return errs, "%d/%d bound to their API call (%s)" % (
        len(pairs) - len(errs), len(pairs), ", ".join("%s %d" % kv for kv in sorted(calls.items())))


def check_clock(info, truth, gs):
    pr = truth["probes"]
    got = sorted((e for e in gs if e["name"] == pr[0]["name"]), key=lambda e: e["ts"]) if pr else []
    if not info or "timeline_origin_ns" not in info:
        return ["no timeline_origin_ns in the trace info"], "not measured"
    if not pr or len(got) != len(pr):
        return ["%d probe kernels in the truth, %d in the trace" % (len(pr), len(got))], "not measured"
    org = info["timeline_origin_ns"]
    # > 0: the traced kernel ends after the host saw it end / starts before the launch
    late = [org + ct.ns(e["ts"]) + ct.ns(e["dur"]) - p["host_after_ns"] for p, e in zip(pr, got)]
    early = [p["host_before_ns"] - org - ct.ns(e["ts"]) for p, e in zip(pr, got)]
    err, lo, hi = max([0] + late + early), max(late), -max(early)
    msg = "error %s over %d probes (limit %s); the probes bound the GPU-host offset to [%+.1f, %+.1f] us" % (
        us(err), len(pr), us(ALIGN_LIMIT_NS), lo / 1000.0, hi / 1000.0)
    return (["alignment error %s >= %s" % (us(err), us(ALIGN_LIMIT_NS))] if err >= ALIGN_LIMIT_NS else []), msg


def evaluate(ev, truth, label, out=sys.stdout):
    """Run every check; print one line each and the verdict; return True on PASS."""
    pid = truth["pid"]
    info = ct.trace_info(ev)
    gs = gpu_slices(ev, truth)
    res = [("collector",) + check_collector(info, truth)]
    smap, how = map_streams(truth, gs)
    res.append(("streams", [] if smap else [how],
                "not mapped" if not smap else "%s: %s" % (", ".join("%d->%s" % kv for kv in sorted(smap.items())), how)))
    if smap:
        pairs, errs = match_ops(truth, gs, smap)
        nk = sum(1 for o, _ in pairs if o["kind"] == "kernel")
        res.append(("ops", errs, "%d/%d found (%d kernels, %d copies; %d graph kernels), in order" % (
            len(pairs), len(truth["ops"]), nk, len(pairs) - nk, sum(1 for o, _ in pairs if o["graph_launch"]))))
        res.append(("durations",) + check_durations(pairs))
        res.append(("flows",) + check_flows(ev, pairs, pid))
    res.append(("clock",) + check_clock(info, truth, gs))
    serr = ct.check(ev)
    res.append(("structure", serr, "check_trace.py: %s" % ("OK" if not serr else "%d problems" % len(serr))))
    for name, errs, msg in res:
        msg = msg.replace("\n", "\ngpu-check [%s]:     " % label)   # multi-line details
        print("gpu-check [%s]: %-10s %s  %s" % (label, name, "FAIL" if errs else "PASS", msg), file=out)
        for e in errs[:8]:
            print("gpu-check [%s]:   ! %s" % (label, e), file=out)
    failed = [n for n, errs, _ in res if errs]
    print("gpu-check [%s]: %s" % (label, "FAIL (%s)" % ", ".join(failed) if failed else "PASS"), file=out)
    return not failed, failed


def check_files(trace, truth, label, out=sys.stdout):
    try:
        ev = ct.load(trace)
        with open(truth) as f:
            t = json.load(f)
    except (ct.TraceError, OSError, ValueError) as e:
        print("gpu-check [%s]: FAIL: %s" % (label, e), file=out)
        return False, ["load"]
    return evaluate(ev, t, label, out)


# ---- self-test: hand-made traces in gpuio's JSON layout ----
MS, MIB, PID, ORIGIN = 1000000, 1 << 20, 4321, 5000000000
HANDOVER_SAMPLE_NS = 8000
KNAME, PROBE = "spin_kernel(unsigned long long)", "probe_kernel(unsigned long long)"


def sample():
    """A truth as gpu_check.cu writes it, and the trace gpuio makes of it."""
    ops = []

    def op(kind, name, b, ms, s, phase, gl=0):
        ref = ms * MS + 3000 if kind == "kernel" else b * 1000 // 12500  # 12.5 GB/s
        ops.append(dict(seq=len(ops), kind=kind, name=name, bytes=b, stream=s, phase=phase,
                        graph_launch=gl, target_ns=ms * MS, event_ns=ref))
    for i, (ms, size) in enumerate(((2, MIB), (5, 8 * MIB), (10, 64 * MIB))):
        op("kernel", KNAME, 0, ms, i % 3, "serial")
        op("memcpy", "memcpy HtoD", size, 0, (i + 1) % 3, "serial")
        op("memcpy", "memcpy DtoH", size, 0, (i + 2) % 3, "serial")
    op("kernel", KNAME, 0, 5, 0, "concurrent")
    op("kernel", KNAME, 0, 2, 1, "concurrent")
    op("memcpy", "memcpy HtoD", 8 * MIB, 0, 2, "concurrent")
    for gl in (1, 2, 3):
        op("kernel", "graph_kernel_a(unsigned long long)", 0, 1, 2, "graph", gl)
        op("kernel", "graph_kernel_b(unsigned long long)", 0, 3, 2, "graph", gl)
    ops[-1]["event_ns"] = None          # as when the graph had no event nodes
    gpid, ids = 0x60000000, [13, 14, 15]
    ev = [dict(name="process_name", ph="M", pid=PID, args=dict(name="gpu_check")),
          dict(name="thread_name", ph="M", pid=PID, tid=PID, args=dict(name="gpu_check")),
          dict(name="process_name", ph="M", pid=gpid, args=dict(name="GPU 0"))]
    ev += [dict(name="thread_name", ph="M", pid=gpid, tid=0x70000000 + i,
                args=dict(name="GPU 0 \u00b7 stream %d" % s)) for i, s in enumerate(ids)]
    st = {"t": 1000 * 1000, "corr": 100}

    def api(name, corr, t):
        return dict(name=name, cat="cuda_api", ph="X", ts=t / 1000.0, dur=4.0, pid=PID, tid=PID,
                    args=dict(ret=0, source="runtime", correlation=corr))

    def launch(name, gpu, apiname):
        """Append an API call and its activities (gpu: [(name, bytes, stream, start, dur)])."""
        st["corr"] += 1
        c, bid = st["corr"], "0x%08x%08x" % (PID, st["corr"])
        ev.append(dict(api(apiname, c, st["t"]), bind_id=bid, flow_out=True))
        st["t"] += 5000
        for n, b, s, t, d in gpu:
            a = dict(device=0, stream=ids[s], context=1, correlation=c, pid=PID)
            if b:
                a.update(bytes=b, kind=n.split()[1])
            ev.append(dict(name=n, cat="gpu", ph="X", ts=t / 1000.0, dur=d / 1000.0, pid=gpid,
                           tid=0x70000000 + s, bind_id=bid, flow_in=True, args=a))

    op_api = {"kernel": "cudaLaunchKernel_v7000", "memcpy": "cudaMemcpyAsync_v3020"}

    def dur_of(o, ref, scale=1.003):
        """As a real trace has it: kernels near their event time; copies their event
        time less the hand-over to the copy engine (8 us, as on an H200)."""
        return ref - HANDOVER_SAMPLE_NS if o["kind"] == "memcpy" else ref * scale
    conc = [o for o in ops if o["phase"] == "concurrent"]
    for o in ops:
        ref = o["event_ns"] or o["target_ns"] + 2000
        if o["phase"] == "serial":   # a gate kernel first (not in the truth), then the op
            t0 = st["t"]
            gate = "gate_kernel(int volatile*, unsigned long long)"
            launch(gate, [(gate, 0, o["stream"], t0 + 1000, 20000)], "cudaLaunchKernel_v7000")
            launch(o["name"], [(o["name"], o["bytes"], o["stream"], t0 + 22000, dur_of(o, ref))], op_api[o["kind"]])
            st["t"] = t0 + 22000 + ref + 50000
        elif o is conc[0]:
            t0 = st["t"] + 30000
            for c in conc:
                launch(c["name"], [(c["name"], c["bytes"], c["stream"], t0, dur_of(c, c["event_ns"], 0.99))],
                       op_api[c["kind"]])
            st["t"] = t0 + max(c["event_ns"] for c in conc) + 50000
        elif o["graph_launch"] and o["name"].startswith("graph_kernel_a"):
            b = ops[o["seq"] + 1]
            t0 = st["t"] + 10000
            rb = b["event_ns"] or b["target_ns"] + 2000
            launch("graph", [(o["name"], 0, 2, t0, ref), (b["name"], 0, 2, t0 + ref + 2000, rb)],
                   "cudaGraphLaunch_v10000")
            st["t"] = t0 + ref + rb + 50000
    probes = []
    for _ in range(8):
        t0 = st["t"]
        launch(PROBE, [(PROBE, 0, 0, t0 + 9000, 21000)], "cudaLaunchKernel_v7000")
        probes.append(dict(name=PROBE, stream=0, host_before_ns=ORIGIN + t0 - 1000,
                           host_after_ns=ORIGIN + t0 + 30000 + 12000))
        st["t"] = t0 + 60000
    proc = dict(state="final", how="launch", clock="monotonic_callback", offset_ns=0,
                uncertainty_ns=500, cupti_dropped=0)
    ev.append(dict(name="gpuio trace info", cat="gpuio", ph="i", s="g", ts=0.0, pid=0x3fffffff,
                   tid=0x3fffffff, args=dict(timeline_origin_ns=ORIGIN, gpu=dict(processes={str(PID): proc}))))
    truth = dict(pid=PID, mode="launch", clock="CLOCK_MONOTONIC", ops=ops, probes=probes,
                 streams=[dict(index=i, stream_id=s, handle=0x7f0000 + i) for i, s in enumerate(ids)])
    return truth, ev


def _find(ev, name, b=0):
    return [e for e in ev if e.get("cat") == "gpu" and e["name"] == name and e["args"].get("bytes", 0) == b]


def _unbind(ev, g):
    for e in ev:
        if e.get("bind_id") == g["bind_id"] and e is not g and e.get("flow_out"):
            del e["bind_id"], e["flow_out"]
    g.pop("bind_id"), g.pop("flow_in")


def _mut_order(t, ev):    # #1 and #2 (different streams) trade start times
    a, b = _find(ev, "memcpy HtoD", MIB)[0], _find(ev, "memcpy DtoH", MIB)[0]
    a["ts"], b["ts"] = b["ts"], a["ts"]


def _mut_attach(t, ev):   # attach run, CUPTI ids unknown to cudaStreamGetId
    t["mode"] = "wait"
    ct.trace_info(ev)["gpu"]["processes"][str(PID)].update(how="attach", clock="offset", offset_ns=-1234)
    for s in t["streams"]:
        s["stream_id"] += 1000


def _mut_copies(short_ns, only=None):
    """Every copy's slice (or only those of `only` bytes) short_ns shorter."""
    def mut(t, ev):
        for e in ev:
            if e.get("cat") == "gpu" and e["name"].startswith("memcpy") and \
                    only in (None, e["args"].get("bytes")):
                e["dur"] -= short_ns / 1000.0
    return mut


CASES = [  # (name, mutation, the check that must fail or None)
    ("every copy 4 us shorter still (hand-over 12 us)", _mut_copies(4000), None),
    ("every copy 15 us shorter still (hand-over 23 us)", _mut_copies(15000), "durations"),
    ("the 1 MiB copies 12 us shorter than the rest", _mut_copies(12000, MIB), "durations"),
    ("launch trace as the truth says", lambda t, ev: None, None),
    ("attach, stream ids mapped by their ops", _mut_attach, None),
    ("a kernel 8% too long", lambda t, ev: _find(ev, KNAME)[2].update(dur=_find(ev, KNAME)[2]["dur"] * 1.08),
     "durations"),
    ("the 64 MiB DtoH copy missing", lambda t, ev: (_unbind(ev, _find(ev, "memcpy DtoH", 64 * MIB)[0]),
                                                    ev.remove(_find(ev, "memcpy DtoH", 64 * MIB)[0])), "ops"),
    ("a copy without its flow", lambda t, ev: _unbind(ev, _find(ev, "memcpy HtoD", 8 * MIB)[0]), "flows"),
    ("a graph kernel bound to a plain launch",
     lambda t, ev: [e.update(name="cudaLaunchKernel_v7000") for e in ev if e["name"] == "cudaGraphLaunch_v10000"],
     "flows"),
    ("GPU clock 80 us late", lambda t, ev: [e.update(ts=e["ts"] + 80.0) for e in ev if e.get("cat") == "gpu"],
     "clock"),
    ("two copies out of order", _mut_order, "ops"),
    ("collector unavailable", lambda t, ev: ct.trace_info(ev)["gpu"]["processes"][str(PID)].update(
        state="unavailable", reason="CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"), "collector"),
]


def self_test():
    import io
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for i, (name, mut, must_fail) in enumerate(CASES):
            truth, ev = sample()
            mut(truth, ev)
            tp, up = os.path.join(d, "t%d.json" % i), os.path.join(d, "u%d.json" % i)
            for path, obj in ((tp, ev), (up, truth)):
                with open(path, "w") as f:
                    json.dump(obj, f)
            out = io.StringIO()
            ok, failed = check_files(tp, up, "self-test %d" % i, out)
            good = ok if must_fail is None else (not ok and must_fail in failed)
            if i == 0 or not good:
                sys.stdout.write(out.getvalue())
            print("self-test: %-42s expect %-17s got %-30s %s" % (
                name, "PASS" if must_fail is None else "FAIL(%s)" % must_fail,
                "PASS" if ok else "FAIL(%s)" % ",".join(failed), "ok" if good else "WRONG"))
            lines = out.getvalue().splitlines()   # the failed check's first complaint
            at = [j for j, ln in enumerate(lines) if "]: %-10s FAIL" % must_fail in ln]
            why = [ln for ln in lines[at[0]:] if "   ! " in ln][:1] if at else []
            if why:
                print("self-test:   ! " + why[0].split("   ! ", 1)[1])
            bad += not good
    print("self-test: %s" % ("all %d cases as expected" % len(CASES) if not bad else "%d case(s) WRONG" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    a = sys.argv[1:]
    if a == ["--self-test"]:
        sys.exit(self_test())
    label = "gpu"
    if a[:1] == ["--label"] and len(a) >= 2:
        label, a = a[1], a[2:]
    if len(a) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(0 if check_files(a[0], a[1], label)[0] else 1)
