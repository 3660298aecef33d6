"""Page faults on file mappings (the fault layer) against what mmap_touch
measured of itself: its fault counters (getrusage), mincore before and
after each touch loop, CLOCK_MONOTONIC around each loop (t_mmap_faults)."""
import json

import truth
from checks.common import Checks, load_json

PAGE = 4096


def read_loops(outf):
    """mmap_touch's one JSON object per touch loop"""
    with open(outf) as f:
        return [json.loads(l) for l in f if l.startswith("{")]


def fault_slices(ev, pid):
    """the program's page_fault slices, each with mono ns "t0"/"t1" added"""
    inf = truth.info(ev)
    out = []
    for e in truth.vfs(ev, names={"page_fault"}, pid=pid):
        e = dict(e)
        e["t0"] = truth.to_mono_ns(inf, e["ts"])
        e["t1"] = e["t0"] + round(float(e["dur"]) * 1000)
        out.append(e)
    return out


def _windows(check, loops, slices):
    """every slice on the loops' files inside the loop window of its file;
    [slices] per loop. Faults on other files (the program's own executable
    and libraries, paged in when it starts or when a cold text page is first
    run) are real but not the loops'."""
    per = [[] for _ in loops]
    outside = []
    files = {l["file"] for l in loops}
    slices = [s for s in slices if s["args"].get("path") in files]
    for s in slices:
        k = next((i for i, l in enumerate(loops) if l["file"] == s["args"].get("path") and
                  l["t0"] <= s["t0"] and s["t1"] <= l["t1"]), None)
        if k is None:
            outside.append(s)
        else:
            per[k].append(s)
    check(not outside, f"{len(slices)} page_fault slices, each inside its file's touch loop "
          f"(outside: {[(x['args'].get('path'), x['t0'], x['t1']) for x in outside[:3]]})")
    return per


def _covers(check, l, sl):
    """the pages the slices brought in: every page of the file, each once"""
    got = []
    for s in sl:
        a = s["args"]
        if a["bytes"]:
            got.append((a["readahead_offset"], a["readahead_offset"] + a["bytes"]))
    got.sort()
    pos, gaps, overlaps = 0, 0, 0
    for a, b in got:
        if a > pos:
            gaps += 1
        elif a < pos:
            overlaps += 1
        pos = max(pos, b)
    check(pos == l["size"] and not gaps and not overlaps,
          f"pass {l['pass']} {l['mode']} {l['file']}: the pages brought in (readahead_offset + bytes "
          f"of {len(got)} slices) cover [0, {l['size']}) once ({gaps} gaps, {overlaps} overlaps, up to {pos})")


def _loop(check, l, sl):
    name = f"pass {l['pass']} {l['mode']} {l['file']}"
    brought = (l["resident_after"] - l["resident_before"]) * PAGE
    got = sum(s["args"]["bytes"] for s in sl)
    check(got == brought, f"{name}: slices' bytes {got} = mincore's {brought} brought in")
    major = sum(1 for s in sl if s["args"]["major"])
    check(major == l["majflt"], f"{name}: {major} slices the kernel counted major = majflt {l['majflt']} "
          f"({len(sl) - major} more waited or read ahead)")
    check(all(s["args"]["pages"] * PAGE == s["args"]["bytes"] for s in sl), f"{name}: pages * 4096 = bytes")
    if l["pass"] == 0:
        check(l["resident_before"] == 0, f"{name}: cold ({l['resident_before']} pages resident before)")
        _covers(check, l, sl)
    else:
        check(l["resident_before"] == l["pages"] and not got,
              f"{name}: warm ({l['resident_before']} of {l['pages']} resident), nothing brought in")
    if l["mode"] == "random" and l["pass"] == 0:
        offs = sorted(s["args"]["offset"] for s in sl)
        check(offs == list(range(0, l["size"], PAGE)) and
              all(s["args"]["bytes"] == PAGE and s["args"]["major"] for s in sl),
              f"{name}: MADV_RANDOM: one major 4 KiB fault per page, offsets = every page "
              f"({len(offs)} slices, {l['pages']} pages)")


def _flows(check, ev, slices, files):
    """every block request of the files bound to one of the program's faults,
    inside it, on the same file; a fault's requests carry its bytes"""
    by_bind = {s.get("bind_id"): s for s in slices if s.get("flow_out")}
    inf = truth.info(ev)
    reqs = [b for b in truth.block(ev) if b["args"].get("path") in files]
    unbound, wrong = [], []
    per = {}
    for b in reqs:
        s = by_bind.get(b.get("bind_id")) if b.get("flow_in") else None
        if s is None:
            unbound.append(b)
            continue
        t = truth.to_mono_ns(inf, b["ts"])
        if s["args"]["path"] != b["args"]["path"] or not s["t0"] <= t:
            wrong.append(b)
        per[id(s)] = per.get(id(s), 0) + b["args"]["bytes"]
    check(reqs and not unbound, f"{len(reqs)} block requests of the files, each flow-bound to a "
          f"page_fault ({len(unbound)} unbound)")
    check(not wrong, f"each on its fault's file, inserted after the fault began ({len(wrong)} not)")
    bad = [s for s in slices if s["args"]["bytes"] and per.get(id(s), 0) not in (0, s["args"]["bytes"])]
    check(not bad, f"each fault that brought bytes in: its requests carry exactly those bytes "
          f"({[(s['args']['offset'], s['args']['bytes'], per.get(id(s), 0)) for s in bad[:3]]})")
    # under load, rarely, a page a fault read has no block request recorded at
    # all (none on the disk, tracked or not, no drop counted; cause not found:
    # docs/limitations.md): tolerated once per 1000 faults, never a wrong one
    none = [s for s in slices if s["args"]["bytes"] and not per.get(id(s), 0)]
    check(len(none) <= max(1, len(slices) // 1000),
          f"faults that brought bytes in with no block request recorded: {len(none)} "
          f"({[(s['args']['path'], s['args']['offset']) for s in none[:3]]}; at most 1 in 1000)")


def faults(trace, outf, report):
    """t_mmap_faults: the fault slices against mmap_touch's own measures"""
    loops = read_loops(outf)
    ev = truth.load(trace)
    check = Checks()
    check(loops, f"{len(loops)} touch loops measured")
    pid = loops[0]["pid"]
    files = sorted({l["file"] for l in loops})
    slices = fault_slices(ev, pid)
    per = _windows(check, loops, slices)
    for l, sl in zip(loops, per):
        _loop(check, l, sl)
    _flows(check, ev, slices, set(files))
    inf = truth.info(ev)
    pf = inf.get("page_faults", {})
    listed = {v["path"]: v for v in pf.get("by_file", {}).values()}
    rep = {f["path"]: f for f in load_json(report)["files"]}
    for p in files:
        minor = sum(l["minflt"] for l in loops if l["file"] == p)
        major = sum(l["majflt"] for l in loops if l["file"] == p)
        size = next(l["size"] for l in loops if l["file"] == p)
        i = listed.get(p, {})
        check(i.get("minor") == minor and i.get("major") == major,
              f"{p}: trace info minor {i.get('minor')} major {i.get('major')} = the program's "
              f"minflt {minor} majflt {major}")
        r = rep.get(p, {})
        rf = r.get("page_faults", {})
        check(rf.get("minor") == minor and rf.get("major") == major,
              f"{p}: report minor {rf.get('minor')} major {rf.get('major')} = minflt {minor} majflt {major}")
        check(r.get("read_bytes") == size, f"{p}: report read_bytes {r.get('read_bytes')} = {size}")
    total = sum(rep.get(p, {}).get("read_bytes", 0) for p in files)
    check(total == 48 << 20 or len(files) != 3, f"report: the files' read_bytes sum to {total} (48 MiB)")
    return check.status()


def synthetic(manifest, trace, report, info):
    """t_mmap_faults: gen_capture faults, every page_fault slice's args, flows,
    counts and file bytes exactly as generated"""
    with open(manifest) as f:
        m = json.load(f)
    ev = truth.load(trace)
    check = Checks("gen faults: ")
    inf = truth.info(ev)
    got = fault_slices(ev, m["pid"])
    check(len(got) == len(m["faults"]), f"{len(got)} page_fault slices ({len(m['faults'])} written)")
    for want, s in zip(sorted(m["faults"], key=lambda x: x["ts_ns"]), got):
        a = s["args"]
        exp = {"path": want["path"], "offset": want["offset"], "bytes": want["bytes"],
               "pages": want["pages"], "latency_us": want["dur_ns"] / 1000,
               "major": want["major"], "slept": want["slept"]}
        if want["readahead_offset"] >= 0:
            exp["readahead_offset"] = want["readahead_offset"]
        if want["write"]:
            exp["write"] = True
        if want["cut"]:
            exp["cut"] = True
        check(a == exp and s["tid"] == want["tid"] and s["t0"] == want["ts_ns"] and
              s["t1"] - s["t0"] == want["dur_ns"],
              f"tid {want['tid']} at {want['ts_ns']}: args {a} (want {exp})")
        bound = [b for b in truth.block(ev) if b.get("flow_in") and b.get("bind_id") == s.get("bind_id")]
        check(len(bound) == want["requests"] and bool(s.get("flow_out")) == (want["requests"] > 0),
              f"tid {want['tid']} at {want['ts_ns']}: {len(bound)} block requests bound "
              f"(want {want['requests']})")
    pf = inf.get("page_faults", {})
    listed = {v["path"]: v for v in pf.get("by_file", {}).values()}
    check(pf.get("minor") == m["minor"] and pf.get("major") == m["major"] and
          pf.get("files") == len(m["files"]),
          f"trace info: {pf.get('files')} files, minor {pf.get('minor')}, major {pf.get('major')}")
    check(inf["record_counts"].get("fault_count") == 5, "trace info: 5 fault_count records")
    rep = {f["path"]: f for f in load_json(report)["files"]}
    summary = load_json(report)["summary"].get("page_faults", {})
    check(summary == {"minor": m["minor"], "major": m["major"]}, f"report summary page_faults {summary}")
    for p, w in m["files"].items():
        check(listed.get(p, {}).get("minor") == w["minor"] and listed.get(p, {}).get("major") == w["major"],
              f"{p}: trace info {listed.get(p)} (want minor {w['minor']}, major {w['major']})")
        r = rep.get(p, {})
        check(r.get("page_faults") == {"minor": w["minor"], "major": w["major"]} and
              r.get("read_bytes") == w["read_bytes"] and r.get("role") == w.get("role", "data"),
              f"{p}: report page_faults {r.get('page_faults')}, read_bytes {r.get('read_bytes')}, "
              f"role {r.get('role')} (want {w})")
    i = load_json(info)
    check(i["record_counts"].get("fault_count") == 5 and i["modes"].get("fault") == "tp_btf",
          f"info --json: fault_count {i['record_counts'].get('fault_count')}, "
          f"fault mode {i['modes'].get('fault')}")
    return check.status()
