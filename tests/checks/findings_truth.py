"""The report's findings on the timeline (per loop a steps track, per GPU an
idle-gaps track) checked against ground truth: gen_capture gpuwait's
manifest, to the ns (t_report_gpu_wait); and for live captures, against the
report's own JSON of the same capture (the shape tests), whose numbers those
tests check against the programs' own clocks."""
import json
from decimal import Decimal

import check_trace as ct
import truth
from checks.common import Checks


def _ns(us):
    return int(Decimal(str(us)) * 1000)


def _ns_dict(d):
    return {k: _ns(v) for k, v in (d or {}).items() if _ns(v)}


def findings(trace):
    """(steps, gaps) of an export, in time order, each slice with "t0" (mono ns) and "d" (ns)"""
    ev = ct.load(trace)
    inf = ct.trace_info(ev)
    with open(trace, "rb") as f:
        pft = f.read(1) == b"\x0a"
    out = {"gpuio_step": [], "gpuio_gap": []}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in out:
            e = dict(e)
            e["t0"] = _ns(e["ts"]) if pft else truth.to_mono_ns(inf, Decimal(str(e["ts"])))
            e["d"] = _ns(e["dur"])
            out[e["cat"]].append(e)
    for v in out.values():
        v.sort(key=lambda e: (e["args"].get("loop", 0), e["t0"]))
    return out["gpuio_step"], out["gpuio_gap"], inf


def gen(manifest, *traces):
    """t_report_gpu_wait: the steps and gaps drawn equal the generator's"""
    m = json.load(open(manifest))
    check = Checks()
    for trace in traces:
        steps, gaps, _ = findings(trace)
        name = trace.rsplit(".", 1)[-1]
        # the generator's times are after its t0; its first gap starts 20 ms before
        t0 = min((g["t0"] for g in gaps), default=0) + 20 * 1000000
        check(len(gaps) == len(m["gaps"]), f"{name}: {len(gaps)} GPU idle slices, the generator left {len(m['gaps'])} gaps")
        for want in m["gaps"]:
            at = t0 + want["start_ms"] * 1000000
            got = [g for g in gaps if g["t0"] == at]
            if not check(len(got) == 1, f"{name}: a GPU idle slice at {want['start_ms']} ms"):
                continue
            a = got[0]["args"]
            st = {k: v * 1000 for k, v in want["us"].items()}
            check(got[0]["d"] == 20000000 and a.get("launcher_tid") == m["gap_launcher"] and a.get("pid") == m["pid"] and
                  _ns_dict(a.get("launcher_state_us")) == st and a.get("cause") == max(st, key=st.get),
                  f"{name}: gap at {want['start_ms']} ms: 20 ms, launcher {m['gap_launcher']}, its states {st} "
                  f"(got {got[0]['d']} ns, {a})")
        check(len(steps) == len(m["steps"]), f"{name}: {len(steps)} step slices, the generator's loop has {len(m['steps'])}")
        for i, (s, want) in enumerate(zip(steps, m["steps"])):
            a = s["args"]
            check(s["t0"] == t0 + want["start_ms"] * 1000000 and _ns(a["wait_us"]) == want["wait_us"] * 1000 and
                  _ns(a["rest_us"]) == want["rest_us"] * 1000 and s["d"] == (want["wait_us"] + want["rest_us"]) * 1000 and
                  a["step"] == i + 1 and s["name"] == f"step {i + 1}",
                  f"{name}: step {i + 1} at {want['start_ms']} ms: wait {want['wait_us']} µs, rest {want['rest_us']} µs ({s['name']} {a})")
        # the first step waited for data: its time by kind says so
        if steps:
            a = steps[0]["args"]
            check(_ns(a["time_us"].get("waiting_for_data", 0)) == m["steps"][0]["wait_us"] * 1000 and
                  a["cause"] == "waiting_for_data",
                  f"{name}: step 1's time by kind has its {m['steps'][0]['wait_us']} µs wait for data ({a})")
    return check.status()


def report(report_json, *traces):
    """shape tests: every loop's steps and the largest GPU idle gaps drawn with the report's numbers"""
    r = json.load(open(report_json), parse_float=Decimal)
    check = Checks()
    loops = [(i, l) for i, l in enumerate(r["loops"]) if l["steps"]]
    for trace in traces:
        steps, gaps, inf = findings(trace)
        name = trace.rsplit(".", 1)[-1]
        want_n = sum(len(l["steps"]) for _, l in loops)
        check(len(steps) == want_n, f"{name}: {len(steps)} step slices, the report's loops have {want_n} steps")
        bad = []
        for i, l in loops:
            got = [s for s in steps if s["args"]["loop"] == i]
            if len(got) != len(l["steps"]):
                bad.append(f"loop {i}: {len(got)} slices for {len(l['steps'])} steps")
                continue
            for k, (s, w) in enumerate(zip(got, l["steps"])):
                a = s["args"]
                same = (s["t0"] == truth.to_mono_ns(inf, w["start_us"]) and _ns(a["wait_us"]) == _ns(w["wait_us"]) and
                        _ns(a["rest_us"]) == _ns(w["rest_us"]) and s["d"] == _ns(w["wait_us"]) + _ns(w["rest_us"]) and
                        a["cause"] == w["cause"] and a["tid"] == l["tid"] and _ns_dict(a["time_us"]) == _ns_dict(w["time_us"]) and
                        a.get("data_files", "") == (l["data_files"] or ""))
                if not same:
                    bad.append(f"loop {i} step {k + 1}: {s['name']} {a} vs report {w}")
        check(not bad, f"{name}: each step slice has the report's start, wait, rest, cause and time by kind ({bad[:2]})")
        lg = (r.get("gpu") or {}).get("largest_gaps") or []
        miss = []
        for w in lg:
            at = truth.to_mono_ns(inf, w["start_ts_us"])
            got = [g for g in gaps if g["t0"] == at and g["d"] == _ns(w["dur_us"])]
            a = got[0]["args"] if got else {}
            if not got or a.get("launcher_tid") != w["launcher_tid"] or \
               _ns_dict(a.get("by_cause_us")) != _ns_dict(w["by_cause_us"]) or \
               _ns_dict(a.get("launcher_state_us")) != _ns_dict(w["launcher_state_us"]):
                miss.append((w["start_ts_us"], w["dur_us"], a))
        check(not miss, f"{name}: the report's {len(lg)} largest GPU gaps are drawn with its causes ({miss[:2]})")
        short = [g for g in gaps if g["d"] < 1000000 and not any(truth.to_mono_ns(inf, w["start_ts_us"]) == g["t0"] for w in lg)]
        check(not short, f"{name}: every GPU idle slice is 1 ms or more, or among the report's largest ({len(short)} not)")
    return check.status()
