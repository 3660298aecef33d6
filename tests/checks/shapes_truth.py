"""The job shapes (tests/progs/torch_shapes.py, tests/shapes_lib.sh, the
t_shape_*.sh tests): the programs' own numbers against the truth the test
set up (throttle, fincore, blkio, the object store's log), and `gpuio
report --json` against the programs' own numbers, inside the trace window.

The report's side targets the schema of the loops analysis:

  top level  "loops": [LOOP, ...], most data-waiting first; "wait" ==
             loops[0]; "stragglers" (>= 2 loops): [{pid, tid,
             waiting_for_data_us, span_us, waited_pct, cause}], waited_pct
             descending, cause = the loop's largest loop_us key but on_cpu
  LOOP       today's "wait" fields (pid, tid, start_us, span_us, loop_us,
             wakers, wakers_meanwhile_us, files, steps, headline, ...) and
             "thread", "process" (names); loop_us keys LOOP_KEYS (µs,
             summing to span_us); wakers[] with "tid" and "kind"
             ("process" | "thread"); wakers_meanwhile_us keys MEANWHILE_KEYS;
             "peers": [{peer "127.0.0.1:PORT", bytes, requests, us}];
             "recommendations": [{kind, text}] (kinds no_workers,
             remote_data, ...)

A field the report does not have yet is a FAIL line naming it ("the report
has no loops[0].peers"), never a traceback. Times are compared within
10% + 20 ms of the program's (TOL_REL, TOL_ABS). In attach mode the
program's waits are clipped to the trace window: the capture's first and
last timestamps (`gpuio info --json`: first_ts_ns, last_ts_ns, CLOCK_MONOTONIC
like the programs' *_mono_ns).

What computes truth is unit-tested (test_shapes_truth.py): clip, own_waits,
dig, within, requests_in, the report checks on hand-made reports (right,
wrong loop, wrong tid, values outside the tolerance, missing fields)."""
import json
import os
import re
import sys

from checks.common import Checks, load_json

TOL_REL, TOL_ABS = 0.10, 0.020
LOOP_KEYS = ("on_cpu", "runnable", "waiting_for_data", "file_io", "page_fault", "socket", "pipe",
             "futex", "poll", "sleep", "gpu_sync", "waiting_for_ranks", "other_sleep")
CPU_KEYS = ("on_cpu", "runnable")
MEANWHILE_KEYS = ("reading_files", "page_faults", "network", "on_cpu", "runnable", "other")


# ---- truth helpers (unit-tested)
def clip(intervals, lo, hi):
    """ns of the [a, b] intervals inside [lo, hi]"""
    return sum(max(0, min(b, hi) - max(a, lo)) for a, b in intervals)


def window(info):
    """the trace window [first, last] (CLOCK_MONOTONIC ns) of `gpuio info --json`"""
    return int(info["first_ts_ns"]), int(info["last_ts_ns"])


def own_waits(prog, lo, hi):
    """the program's waits for data (each step's [t0, t1]) inside [lo, hi], s"""
    return clip([(s["t0_mono_ns"], s["t1_mono_ns"]) for s in prog["steps"]], lo, hi) / 1e9


def own_asleep_waits(prog, lo, hi):
    """the program's waits for data inside [lo, hi] less its own CPU time and
    its schedstat run delay inside them (each step's wait_cpu_ns and
    wait_run_delay_ns, in proportion to the part inside), s: the time it
    slept inside next(). next() unpickles and rebuilds the batch on the
    loop's CPU, and is preempted inside like any code: the report shows
    those as on_cpu and runnable (its waiting_for_data less
    data_then_runnable is the sleep)"""
    t = 0
    for st in prog["steps"]:
        a, b = st["t0_mono_ns"], st["t1_mono_ns"]
        inside = clip([(a, b)], lo, hi)
        if inside and b > a:
            off = st.get("wait_cpu_ns", 0) + st.get("wait_run_delay_ns", 0)
            t += max(0, inside - off * inside / (b - a))
    return t / 1e9


def own_span(prog, lo, hi):
    """the program's loop (first t0 .. last t2) inside [lo, hi], s"""
    return clip([(prog["loop_start_mono_ns"], prog["loop_end_mono_ns"])], lo, hi) / 1e9


def within(got, want, rel=TOL_REL, abs_=TOL_ABS):
    return abs(got - want) <= rel * want + abs_


def requests_in(log, lo, hi):
    """(requests wholly inside [lo, hi], requests overlapping it, bytes of the
    wholly inside ones) of [{start_mono_ns, end_mono_ns, bytes}]"""
    inside = [e for e in log if e["start_mono_ns"] >= lo and e["end_mono_ns"] <= hi]
    over = [e for e in log if e["end_mono_ns"] > lo and e["start_mono_ns"] < hi]
    return len(inside), len(over), sum(e["bytes"] for e in inside)


class Missing(Exception):
    """a field the report does not have (its path, e.g. loops[0].peers)"""


def dig(obj, path):
    """obj's value at PATH ("loops[0].loop_us.waiting_for_data"); Missing names
    the first part that is not there"""
    cur, done = obj, ""
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            i = int(part[1:-1])
            done += part
            if not isinstance(cur, list) or i >= len(cur):
                raise Missing(done)
            cur = cur[i]
        else:
            done += ("." if done else "") + part
            if not isinstance(cur, dict) or part not in cur:
                raise Missing(done)
            cur = cur[part]
    return cur


class Judge(Checks):
    """Checks that also say what the report lacks: get(obj, path, what) is the
    value, or None after a FAIL line naming the missing field"""

    def get(self, obj, path, what, base=""):
        try:
            return dig(obj, path)
        except Missing as e:
            self(False, "%s: the report has no %s%s" % (what, base, e))
            return None


# ---- scenario bookkeeping (shapes_lib.sh)
def _load(path):
    with open(path) as f:
        return json.load(f)


def _save(path, d):
    with open(path + ".tmp", "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")
    os.rename(path + ".tmp", path)


def merge_ranks(out, *paths):
    """shape_ranks: the ranks' JSON files (PATHS) as one: {"shape": "ranks",
    "ranks": [...] by rank}"""
    ranks = sorted((_load(p) for p in paths), key=lambda d: d["rank"])
    _save(out, {"program": "torch_shapes", "shape": "ranks", "format": 1, "ranks": ranks})


def add_scenario(path, *kv):
    """shapes_lib.sh: add "scenario" (the KEY=VALUE facts the test set up; a
    VALUE of @FILE is that JSON file) to the program's JSON at PATH; print its
    summary"""
    d = _load(path)
    sc = {}
    for a in kv:
        k, v = a.split("=", 1)
        if v.startswith("@"):
            v = _load(v[1:]) if os.path.exists(v[1:]) else None
        else:
            try:
                v = int(v)
            except ValueError:
                pass
        sc[k] = v
    d["scenario"] = sc
    _save(path, d)
    for p in d.get("ranks", [d]):
        print("%s/%s%s: pid %d, %d steps, wait %.3f s (first %.3f s), compute %.3f s, loop %.3f s, "
              "%d samples, %d bytes, run %.2f s"
              % (sc.get("name"), sc.get("mode"), " rank %d" % p["rank"] if "rank" in p else "", p["pid"],
                 len(p["steps"]), p["total_wait_s"], p["first_wait_s"] or 0, p["total_compute_s"],
                 p["loop_s"], p["samples"], p["bytes"], p["run_s"]))


# ---- the programs' own numbers against the scenario
def _steps_ok(check, name, p):
    st = p["steps"]
    check(len(st) > 0, f"{name}: {len(st)} steps")
    t = []
    for s in st:
        t += [s["t0_mono_ns"], s["t1_mono_ns"], s["t2_mono_ns"]]
    check(all(a <= b for a, b in zip(t, t[1:])), f"{name}: t0 <= t1 <= t2 <= next t0")
    check(p["loop_start_mono_ns"] == st[0]["t0_mono_ns"] and p["loop_end_mono_ns"] == st[-1]["t2_mono_ns"],
          f"{name}: loop = first t0 .. last t2")
    check(p["samples"] == sum(s["samples"] for s in st) and p["bytes"] == sum(s["bytes"] for s in st),
          f"{name}: {p['samples']} samples, {p['bytes']} bytes received")
    check(p["main_tid"] == p["pid"] and str(p["main_tid"]) in p["main_threads"],
          f"{name}: the loop thread {p['main_tid']} is the main thread")


def _workers_ok(check, name, p):
    pids = p["worker_pids"]
    check(len(pids) == p["config"]["workers"] and len(set(pids)) == len(pids) and p["pid"] not in pids,
          f"{name}: {len(pids)} worker pids {pids}")
    check(sorted(w["pid"] for w in p["workers"]) == sorted(pids) and all(w["tid"] == w["pid"] for w in p["workers"]),
          f"{name}: every worker reported at its exit, its loop on its main thread")
    check(not any(os.path.exists("/proc/%d" % x) for x in pids), f"{name}: the workers are gone")
    got = sum(w["samples"] for w in p["workers"])
    check(got >= p["samples"], f"{name}: the workers made {got} samples >= the {p['samples']} received")


def _cold_ok(check, name, p, nbytes):
    sc = p["scenario"]
    check(sc["resident_bytes"] == 0, f"{name}: cold, {sc['resident_bytes']} bytes resident before the run")
    check(sc["cgroup_read_bytes"] >= nbytes,
          f"{name}: blkio counted {sc['cgroup_read_bytes']} bytes read from {sc['device']} (>= {nbytes})")
    floor = nbytes / sc["throttle_bps"]
    return floor


def _clipped(p):
    sc = p.get("scenario", {})
    info = sc.get("info")
    if info and sc.get("mode") == "attach":
        return window(info)
    return 0, 1 << 63


def own(shape, path):
    """the program's own numbers (PATH, with the "scenario" the test added)
    against the truth the test set up: SHAPE ranks, threads, noworkers,
    memmap, remote, loader (attach, pin_memory)"""
    d = _load(path)
    name = shape if shape != "ranks" else "ranks%d" % len(d["ranks"])
    check = Checks("[%s/%s] " % (name, d.get("scenario", {}).get("mode")))
    if shape == "ranks":
        ranks = d["ranks"]
        n = d["scenario"]["ranks"]
        check(len(ranks) == n and [r["rank"] for r in ranks] == list(range(n))
              and all(r["world_size"] == n for r in ranks), f"{len(ranks)} ranks of {n}")
        check(len({r["pid"] for r in ranks}) == n, "one process per rank")
        for r in ranks:
            name = "rank %d" % r["rank"]
            _steps_ok(check, name, r)
            _workers_ok(check, name, r)
            check(r["config"]["data"].endswith("/rank-%d" % r["rank"]), f"{name}: its own files {r['config']['data']}")
            check(r["total_wait_s"] > 0, f"{name}: waited {r['total_wait_s']:.3f} s of {r['loop_s']:.3f} s "
                  f"({r['cpu_us']:.0f} us CPU per sample)")
        # per sample: CPU, then a sleep (either sets the rank's speed)
        slow = max(ranks, key=lambda r: r["cpu_us"] + r.get("sleep_us", 0))
        share = lambda r: r["total_wait_s"] / r["loop_s"]
        most = max(ranks, key=share)
        check(most is slow, "the slowest rank (%d, %.0f us per sample) waited most: %s" % (
            slow["rank"], slow["cpu_us"] + slow.get("sleep_us", 0), ", ".join("rank %d %.0f%%" % (r["rank"], 100 * share(r)) for r in ranks)))
        return check.status()

    _steps_ok(check, shape, d)
    sc = d["scenario"]
    if shape in ("memmap", "remote", "loader", "pin_memory", "attach"):
        _workers_ok(check, shape, d)
    if shape == "threads":
        floor = _cold_ok(check, shape, d, d["bytes"])
        check(d["total_wait_s"] >= 0.5 * floor,
              f"threads: waited {d['total_wait_s']:.3f} s in queue.get(), >= 50% of bytes / throttle = {floor:.3f} s")
        check(d["total_wait_s"] >= 5 * d["total_compute_s"],
              f"threads: wait {d['total_wait_s']:.3f} s >= 5 x compute {d['total_compute_s']:.3f} s")
        tids = d["reader_tids"]
        check(len(tids) == d["config"]["readers"] and len(set(tids)) == len(tids) and d["main_tid"] not in tids,
              f"threads: reader threads {tids}, not the loop's {d['main_tid']}")
        check(sum(r["samples"] for r in d["readers"]) == d["config"]["files"] == d["samples"],
              f"threads: every file read once by a reader ({d['samples']})")
        check(any(s["woke"] for s in d["steps"]), "threads: readers handed batches to a waiting loop "
              f"({sum(s['woke'] for s in d['steps'])} of {len(d['steps'])} steps)")
    elif shape == "noworkers":
        floor = _cold_ok(check, shape, d, d["bytes"])
        rd = d["reads"]
        check(rd["tid"] == d["main_tid"] and rd["samples"] == d["samples"] == d["config"]["files"],
              f"noworkers: the loop thread read all {rd['samples']} files itself")
        check(rd["read_s"] >= 0.5 * floor,
              f"noworkers: {rd['read_s']:.3f} s in open+read+close, >= 50% of bytes / throttle = {floor:.3f} s")
        check(rd["read_s"] <= d["total_wait_s"],
              f"noworkers: its reads {rd['read_s']:.3f} s lie inside next() {d['total_wait_s']:.3f} s")
        check("worker_pids" not in d, "noworkers: no worker process")
    elif shape == "memmap":
        total = sum(f["size"] for f in d["mmap_files"])
        floor = _cold_ok(check, shape, d, total)
        for f in d["mmap_files"]:
            check(f["resident_before"] in (0, None), f"memmap: {f['path']}: {f['resident_before']} bytes "
                  "resident before (mincore)")
            check(f["touched"] == f["size"], f"memmap: {f['path']}: the samples touched {f['touched']} "
                  f"of {f['size']} bytes")
            check(f["resident_after"] in (f["size"], None), f"memmap: {f['path']}: {f['resident_after']} bytes "
                  "resident after (mincore)")
        check(all(w["read_calls"] == 0 for w in d["workers"]), "memmap: the workers made no read()")
        check(d["total_wait_s"] >= 0.5 * floor,
              f"memmap: waited {d['total_wait_s']:.3f} s, >= 50% of bytes / throttle = {floor:.3f} s")
        check(d["samples"] == total // d["config"]["sample_size"], f"memmap: {d['samples']} samples")
    elif shape == "remote":
        srv = sc.get("server")
        if not check(srv is not None, "remote: the object store wrote its log"):
            return check.status()
        n, size, lat = d["config"]["objects"], sc["size"], srv["latency_ms"] / 1e3
        check(srv["requests"] == d["requests"] == n, f"remote: {srv['requests']} requests served, "
              f"{d['requests']} made, {n} objects")
        check(srv["bytes_sent"] == d["request_bytes"] == n * size == d["bytes"],
              f"remote: {srv['bytes_sent']} bytes sent, {d['request_bytes']} received")
        check(all(r["end_mono_ns"] - r["start_mono_ns"] >= lat * 1e9 for r in srv["per_request"]),
              f"remote: every request took >= {lat * 1e3:.0f} ms at the server")
        floor = n * lat / d["config"]["workers"]
        check(d["total_wait_s"] >= 0.5 * floor,
              f"remote: waited {d['total_wait_s']:.3f} s, >= 50% of requests x latency / workers = {floor:.3f} s")
    elif shape in ("attach", "loader", "pin_memory"):
        check(d["total_wait_s"] > 0.3 * d["loop_s"],
              f"{shape}: waited {d['total_wait_s']:.3f} s, > 30% of the loop's {d['loop_s']:.3f} s")
        check(d["loop_s"] >= d["config"]["seconds"], f"{shape}: the loop ran {d['loop_s']:.2f} s "
              f"(asked {d['config']['seconds']} s)")
        if shape == "pin_memory":
            t = d.get("pin_thread_tid")
            check(d.get("pin") in ("cuda", "stand-in") and t and str(t) in d["main_threads"] and t != d["main_tid"],
                  f"pin_memory: pin-memory thread {t} ({d.get('pin_thread_name')}, {d.get('pin')})")
    if sc.get("mode") == "attach":
        lo, hi = _clipped(d)
        w = own_waits(d, lo, hi)
        check(w > 0 and own_span(d, lo, hi) > 0, f"{shape}: {w:.3f} s of its waits inside the trace window")
    return check.status()


# ---- the report against the programs
def _names(rank):
    return {str(k): v.get("comm") for k, v in rank.get("main_threads", {}).items()}


def _attach_from(J, p, lp, lo, hi, anchor, label):
    """Attached, the loop may be asleep inside next() already: its sleep
    began before gpuio looked, with no stack to say where, and shows only
    from its wake-up on (docs/limitations.md). The program's waits are
    compared from the report's loop start, which must come by the program's
    first wake-up inside the window (+20 ms), and never before lo"""
    st = lp.get("start_us")
    if st is None:
        return lo
    ls = anchor + int(st * 1000)
    wake = min((s["t1_mono_ns"] for s in p["steps"] if s["t1_mono_ns"] >= lo), default=hi)
    J(ls <= wake + 20 * 1000 * 1000, "%s: the loop starts %.1f ms into the window, by the program's "
      "first wake-up from next() there (%.1f ms)" % (label, (ls - lo) / 1e6, (wake - lo) / 1e6))
    return max(lo, min(ls, wake))


def check_loop(J, loops, p, lo, hi, label, waits=True, anchor=None):
    """the loop of program P among LOOPS (by pid and main tid), its names,
    its loop_us and (WAITS) waiting_for_data vs P's waits inside [lo, hi]
    (attached, ANCHOR the capture's monotonic_ns: from the loop's first
    wake-up inside the window on, see _attach_from): (index, loop) or
    (None, None)"""
    idx = [i for i, l in enumerate(loops) if isinstance(l, dict) and l.get("pid") == p["pid"]
           and l.get("tid") == p["main_tid"]]
    if not J(len(idx) == 1, "%s: one loop on pid %d tid %d (the main thread), found %d; loops on %s" % (
            label, p["pid"], p["main_tid"], len(idx),
            [(l.get("pid"), l.get("tid")) for l in loops if isinstance(l, dict)])):
        return None, None
    i = idx[0]
    lp = loops[i]
    base = "loops[%d]." % i
    comm = p.get("main_comm")
    th = J.get(lp, "thread", label, base)
    if th is not None:
        J(th == comm, f"{label}: thread name {th!r}, the program's comm {comm!r}")
    pr = J.get(lp, "process", label, base)
    if pr is not None:
        J(isinstance(pr, str) and pr != "", f"{label}: process name {pr!r}")
    lu = J.get(lp, "loop_us", label, base)
    span = J.get(lp, "span_us", label, base)
    if isinstance(lu, dict):
        missing = [k for k in LOOP_KEYS if k not in lu]
        J(not missing, f"{label}: loop_us has {sorted(lu)}; missing {missing}")
        if span is not None:
            tot = sum(v for v in lu.values() if isinstance(v, (int, float)))
            J(abs(tot - span) <= 0.001 * len(lu) + 1, f"{label}: loop_us sums to {tot:.3f} us, span {span:.3f} us")
    wf = J.get(lp, "loop_us.waiting_for_data", label, base) if waits else None
    if wf is not None:
        # The report's runnable-after-data starts at the waker's wake-up
        # (sched_waking); schedstat's run_delay at the enqueue, which a remote
        # wake-up reaches later (an IPI; tens of us in a VM under load). So
        # the program's sleep lies between the report's sleep and its sleep
        # plus that runnable time: near the low end, unless the loop is
        # woken thousands of times on busy CPUs (a fast rank on 2 cores:
        # trace 0.318 s runnable inside next(), schedstat 0.184 s, 3871 wakes;
        # bpftrace sched_waking -> sched_wakeup of python3 during this test:
        # mean 10.9 us, 29% of wakes 16-64 us).
        lo_w = _attach_from(J, p, lp, lo, hi, anchor, label) if anchor is not None else lo
        want = own_asleep_waits(p, lo_w, hi)
        dtr = (lp.get("data_then_runnable_us") or 0) / 1e6
        got = wf / 1e6 - dtr
        since = ""
        nx = lp.get("next")
        if isinstance(nx, dict) and "asleep_for_data_us" in nx:
            # stacks found next(): its sleeps are the program's, a producer's
            # hand-over or not (a poll's timeout inside next() is a sleep the
            # program times but no producer ended)
            got = (nx["asleep_for_data_us"] + (nx.get("asleep_other_us") or 0)) / 1e6
            dtr = (nx.get("runnable_us") or 0) / 1e6
            if anchor is not None:
                # attached: the sleep under way at the attach switched out
                # before it, so no stack says it is next()'s
                # (docs/limitations.md); the program's own count starts
                # where that next() returns, its first wake-up in the window.
                # Unless the loop woke inside that next() (a timed wait's
                # wake-up: the report's loop start) and slept again: that
                # sleep has its stack, and counts from the loop's start.
                first = min((st["t1_mono_ns"] for st in p["steps"] if st["t1_mono_ns"] >= lo_w),
                            default=hi)
                want = own_asleep_waits(p, max(lo_w, first), hi)
                want_early = own_asleep_waits(p, lo_w, hi)
                since = " from its first return from next()"
                if abs(got - want_early) < abs(got - want):
                    want, since = want_early, " from the loop's start"
        ok = within(got, want) or (got - TOL_ABS <= want <= (got + dtr) * (1 + TOL_REL) + TOL_ABS)
        # reader threads hand over their last batch and exit: a wake-up
        # followed by its waker's exit within 200 us reads as a join
        # (docs/limitations.md), so up to one futex sleep per reader may be
        # the program's last waits; accepted only as that, and said
        join = 0.0
        if not ok and p.get("shape") == "threads":
            fx = [b for b in lp.get("blocked_in") or [] if b.get("kind") == "futex"]
            if fx and sum(b["sleeps"] for b in fx) <= len(p.get("reader_tids") or []):
                join = sum(b["us"] for b in fx) / 1e6
                ok = within(got + join, want)
                if ok:
                    print("    note %s: %.3f s of futex sleeps (%d, at most one per reader) read as "
                          "joins: a reader's last hand-over right before its exit" %
                          (label, join, sum(b["sleeps"] for b in fx)))
        J(ok, "%s: asleep waiting for data %.3f s (%s %.3f s), "
          "the program asleep inside next() %.3f s%s (%.3f s in all) (%+.1f%%; tolerance 10%% + 20 ms, "
          "or between the two)"
          % (label, got, "next()'s sleeps; runnable" if isinstance(nx, dict) and "asleep_for_data_us" in nx
             else "waiting_for_data less data_then_runnable", dtr, want, since, own_waits(p, lo_w, hi),
             100 * (got - want) / want if want else 0))
    wk = J.get(lp, "wakers", label, base)
    if isinstance(wk, list):
        for j, w in enumerate(wk):
            for k in ("tid", "kind"):
                if k not in w:
                    J(False, f"{label}: the report has no {base}wakers[{j}].{k}")
                    break
    return i, lp


def _meanwhile(J, lp, base, label, key):
    """wakers_meanwhile_us: KEY > 0, the largest and >= 50%"""
    m = J.get(lp, "wakers_meanwhile_us", label, base)
    if not isinstance(m, dict):
        return
    missing = [k for k in MEANWHILE_KEYS if k not in m]
    J(not missing, f"{label}: wakers_meanwhile_us has {sorted(m)}; missing {missing}")
    tot = sum(v for v in m.values() if isinstance(v, (int, float))) or 1
    v = m.get(key, 0)
    top = max(m, key=lambda k: m[k] if isinstance(m[k], (int, float)) else -1)
    J(v > 0 and top == key and v >= 0.5 * tot, "%s: the wakers meanwhile mostly %s: %s" % (
        label, key, ", ".join("%s %.0f%%" % (k, 100 * x / tot) for k, x in m.items() if isinstance(x, (int, float)))))


def _waker_pids(J, lp, base, label, allowed, kind, what):
    """every waker's pid (kind process) or tid (kind thread) is in ALLOWED;
    returns the set"""
    wk = J.get(lp, "wakers", label, base)
    if not isinstance(wk, list):
        return set()
    key = "pid" if kind == "process" else "tid"
    got = {w.get(key) for w in wk}
    J(len(wk) > 0 and got <= set(allowed),
      f"{label}: woken by {key}s {sorted(got, key=str)}, {what} {sorted(allowed)}")
    kinds = {w.get("kind") for w in wk}
    J(kinds <= {kind}, f"{label}: wakers' kind {sorted(kinds, key=str)}, want {kind!r}")
    return got


def _recommend(J, lp, base, label, kind):
    recs = J.get(lp, "recommendations", label, base)
    if not isinstance(recs, list):
        return
    got = [x for x in recs if isinstance(x, dict) and x.get("kind") == kind]
    J(len(got) == 1 and any(ch.isdigit() for ch in got[0].get("text", "")),
      f"{label}: a {kind} recommendation with numbers: {[x.get('kind') for x in recs]} {got[:1]}")


def report(shape, prog, rep, info, *more):
    """the report REP (`gpuio report --json`) of the program PROG's run (its
    JSON with the scenario), the capture's INFO (`gpuio info --json`): SHAPE
    ranks, threads, noworkers, memmap, remote, attach, pin_memory"""
    p, r, inf = _load(prog), _load(rep), _load(info)
    lo, hi = window(inf)
    mode = p.get("scenario", {}).get("mode", "?")
    name = shape if shape != "ranks" else "ranks%d" % len(p["ranks"])
    J = Judge("[%s/%s] " % (name, mode))
    print("[%s/%s] trace window %.3f s" % (name, mode, (hi - lo) / 1e9))
    return _report(J, shape, p, r, lo, hi, inf.get("monotonic_ns") if mode == "attach" else None)


def _report(J, shape, p, r, lo, hi, anchor=None):
    loops = J.get(r, "loops", shape)
    if loops is None:
        return J.status()
    if not J(isinstance(loops, list) and len(loops) > 0, f"{shape}: loops: {len(loops or [])}"):
        return J.status()
    J(r.get("wait") == loops[0], f"{shape}: wait is loops[0]")
    for i, lp in enumerate(loops):
        if isinstance(lp, dict) and lp.get("headline"):
            print("  loops[%d]: %s" % (i, lp["headline"]))

    if shape == "ranks":
        ranks = p["ranks"]
        J(len(loops) == len(ranks), f"ranks: {len(loops)} loops found, {len(ranks)} ranks")
        everyone = {}
        for rk in ranks:
            for x in [rk["pid"]] + rk["worker_pids"]:
                everyone[x] = rk["rank"]
        loop_of = {}
        for rk in ranks:
            label = "rank %d" % rk["rank"]
            i, lp = check_loop(J, loops, rk, lo, hi, label, anchor=anchor)
            if lp is None:
                continue
            loop_of[rk["rank"]] = lp
            base = "loops[%d]." % i
            wk = J.get(lp, "wakers", label, base)
            if isinstance(wk, list):
                other = [w.get("pid") for w in wk if everyone.get(w.get("pid"), rk["rank"]) != rk["rank"]]
                J(not other, f"{label}: no waker of another rank ({other})")
            _waker_pids(J, lp, base, label, rk["worker_pids"], "process", "its workers are")
        J(not [l for l in loops if isinstance(l, dict) and l.get("pid") in everyone
               and l.get("pid") != next((rk["pid"] for rk in ranks if rk["rank"] == everyone[l["pid"]]), None)],
          "ranks: no loop on a worker process")
        st = J.get(r, "stragglers", "ranks")
        if isinstance(st, list) and J(len(st) == len(loops), f"ranks: {len(st)} stragglers, one per loop"):
            pct = [s.get("waited_pct", 0) for s in st]
            J(pct == sorted(pct, reverse=True), f"ranks: stragglers by waited_pct descending {pct}")
            share = lambda rk: own_waits(rk, lo, hi) / (own_span(rk, lo, hi) or 1)
            slow = max(ranks, key=share)
            s0 = st[0]
            J((s0.get("pid"), s0.get("tid")) == (slow["pid"], slow["main_tid"]),
              "ranks: stragglers[0] is pid %s tid %s, the slowest rank is %d (pid %d, waited %s)" % (
                  s0.get("pid"), s0.get("tid"), slow["rank"], slow["pid"],
                  ", ".join("rank %d %.0f%%" % (rk["rank"], 100 * share(rk)) for rk in ranks)))
            for j, s in enumerate(st):
                lp = next((l for l in loops if isinstance(l, dict) and (l.get("pid"), l.get("tid")) ==
                           (s.get("pid"), s.get("tid"))), None)
                if not J(lp is not None and all(k in s for k in ("waiting_for_data_us", "span_us", "waited_pct", "cause")),
                         f"ranks: stragglers[{j}] {s} is a loop's, with its fields"):
                    continue
                lu = lp.get("loop_us", {})
                # the loop's wait: its time in next() where its stacks said, else its sleeps
                J(s["waiting_for_data_us"] == lp.get("waiting_for_data_us", lu.get("waiting_for_data"))
                  and s["span_us"] == lp.get("span_us")
                  and abs(s["waited_pct"] - 100.0 * s["waiting_for_data_us"] / (s["span_us"] or 1)) <= 0.5,
                  f"ranks: stragglers[{j}] waited {s['waited_pct']}% = its loop's waiting_for_data / span")
                # the cause may be runnable (a loop starved of CPU): only on_cpu is left out
                cause = max((k for k in lu if k != "on_cpu"), key=lambda k: lu[k], default=None)
                J(s["cause"] == cause, f"ranks: stragglers[{j}] cause {s['cause']!r}, its loop's largest "
                  f"non-CPU part is {cause!r}")
        return J.status()

    # no workers: the loop's next() is its own reads (file_io), no wait for data
    i, lp = check_loop(J, loops, p, lo, hi, shape, waits=shape != "noworkers", anchor=anchor)
    if lp is None:
        return J.status()
    base = "loops[%d]." % i
    J(i == 0, f"{shape}: the program's loop is loops[0] (index {i})")
    if shape == "threads":
        got = _waker_pids(J, lp, base, shape, p["reader_tids"], "thread", "the reader threads are")
        pids = {w.get("pid") for w in (lp.get("wakers") or [])}
        J(pids <= {p["pid"]}, f"threads: the waking threads are the program's own ({sorted(pids, key=str)})")
        handed = {p["readers"][s["source"]]["tid"] for s in p["steps"]
                  if s["woke"] and lo <= s["put_mono_ns"] <= hi and s["t0_mono_ns"] >= lo}
        J(handed <= got, f"threads: every reader that handed a batch to the waiting loop "
          f"{sorted(handed)} woke it ({sorted(got, key=str)})")
        _meanwhile(J, lp, base, shape, "reading_files")
    elif shape == "noworkers":
        fio = J.get(lp, "loop_us.file_io", shape, base)
        if fio is not None:
            want = clip([(e["start_mono_ns"], e["end_mono_ns"]) for e in p["reads"]["log"]], lo, hi) / 1e9
            got = fio / 1e6
            J(within(got, want), "noworkers: file_io %.3f s, its own open+read+close %.3f s (%+.1f%%)"
              % (got, want, 100 * (got - want) / want if want else 0))
        _recommend(J, lp, base, shape, "no_workers")
    elif shape == "memmap":
        _waker_pids(J, lp, base, shape, p["worker_pids"], "process", "its workers are")
        _meanwhile(J, lp, base, shape, "page_faults")
        files = J.get(r, "files", shape)
        if isinstance(files, list):
            rows = {f.get("path"): f for f in files}
            log = [e for w in p["workers"] for e in w["log"]]
            attach = p["scenario"].get("mode") == "attach"
            in_window = 0
            for k, f in enumerate(p["mmap_files"]):
                row = rows.get(f["path"])
                lf = [e for e in log if e["file"] == k]
                n_in, _, touched = requests_in(lf, lo, hi) if attach else (None, None, f["touched"])
                first = min((e["start_mono_ns"] for e in lf), default=None)
                if attach and row is None and (n_in == 0 or (first is not None and first < lo)):
                    # read before gpuio attached: readahead and fault-around may
                    # have mapped the rest by then, nothing of it left to fault.
                    # A file first touched inside the window was cold (mincore
                    # before): its first touch faults, and must be seen
                    J(True, f"memmap: {os.path.basename(f['path'])} not in the report's files, "
                      f"first touched before the window ({n_in} samples copied inside it)")
                    continue
                if not J(row is not None, f"memmap: {f['path']} in the report's files"
                         + ("" if n_in is None else f" ({n_in} samples copied inside the window)")):
                    continue
                got = row.get("read_bytes", 0)
                brought = (f["resident_after"] - (f["resident_before"] or 0)
                           if f["resident_after"] is not None else None)
                if attach:
                    # pages touched inside the window may have come in before it
                    # (readahead ahead of the workers when gpuio attached: a file
                    # read early may have none left to fault in): only what
                    # faults brought in while it looked is the file's
                    in_window += got
                    J(brought is None or got <= brought,
                      f"memmap: {os.path.basename(f['path'])}: read_bytes {got} ({touched} touched "
                      f"in the window){'' if brought is None else ' <= the %d mincore saw come in' % brought}")
                elif brought is None:
                    J(got >= touched, f"memmap: {os.path.basename(f['path'])}: read_bytes {got} >= {touched} touched")
                else:
                    J(got >= touched and got == brought,
                      f"memmap: {os.path.basename(f['path'])}: read_bytes {got} >= {touched} touched, "
                      f"== the {brought} bytes mincore saw come in")
            if attach:
                J(in_window > 0, f"memmap: faults brought {in_window} bytes of the files in while gpuio looked")
    elif shape == "remote":
        _waker_pids(J, lp, base, shape, p["worker_pids"], "process", "its workers are")
        _meanwhile(J, lp, base, shape, "network")
        # its workers read no data file, only their code: no file named as its data
        df = lp.get("data_files")
        J(df in ("", None), f"remote: data_files {df!r}, want none (the workers read only code)")
        peers = J.get(lp, "peers", shape, base)
        if isinstance(peers, list):
            want_peer = "127.0.0.1:%d" % p["port"]
            pe = [x for x in peers if isinstance(x, dict) and x.get("peer") == want_peer]
            if J(len(pe) == 1, f"remote: peer {want_peer} in {[x.get('peer') for x in peers]}"):
                log = [e for w in p["workers"] for e in w["log"]]
                n_in, n_over, b_in = requests_in(log, lo, hi)
                srv = p["scenario"].get("server") or {}
                if p["scenario"].get("mode") != "attach":
                    n_in = n_over = srv.get("requests", n_in)
                    b_in = srv.get("bytes_sent", b_in)
                x = pe[0]
                J(x.get("bytes", -1) >= b_in, f"remote: {x.get('bytes')} bytes with {want_peer}, "
                  f">= the {b_in} the server sent for the traced requests")
                # attached: a request the worker sent just before the attach
                # took effect can reach the server's log inside the window
                lo_n = n_in - 1 if p["scenario"].get("mode") == "attach" else n_in
                J(lo_n <= x.get("requests", -1) <= n_over, f"remote: {x.get('requests')} requests to {want_peer}, "
                  f"the server's {n_in}" + (f"..{n_over} (some cut by the window)" if n_over != n_in else ""))
        _recommend(J, lp, base, shape, "remote_data")
    elif shape == "attach":
        J(lp.get("pid") not in p["worker_pids"], "attach: the loop is the training process, not a worker")
        _waker_pids(J, lp, base, shape, p["worker_pids"], "process", "its workers are")
    elif shape == "pin_memory":
        wk = J.get(lp, "wakers", shape, base)
        if isinstance(wk, list) and wk:
            top = max(wk, key=lambda w: w.get("wait_us", 0))
            J(top.get("tid") == p["pin_thread_tid"] and top.get("kind") == "thread" and top.get("pid") == p["pid"],
              f"pin_memory: woken mostly by the pin-memory thread {p['pin_thread_tid']} (kind thread): "
              f"{[(w.get('pid'), w.get('tid'), w.get('kind'), w.get('wait_us')) for w in wk]}")
        else:
            J(False, f"pin_memory: no wakers {wk}")
    return J.status()


# ---- exports
WROTE = re.compile(r"wrote (\S+): (\d+) (events|packets) \((\d+) vfs, (\d+) block, (\d+) flows"
                   r"(?:, (\d+) loop steps, (\d+) GPU idle gaps)?\)")


def export_counts(log, trace):
    """the counts `gpuio convert` said it wrote (its stderr in LOG) are the
    file's: events (JSON; .pftrace: packets, those of the model walk), vfs
    slices, block slices, flows; and the trace info event's"""
    import check_trace as ct
    import pftrace as pf
    with open(log) as f:
        m = [x for x in WROTE.finditer(f.read()) if x.group(1).endswith(os.path.basename(trace))]
    check = Checks("[%s] " % os.path.basename(trace))
    if not check(len(m) == 1, "convert said what it wrote"):
        return 1
    _, n, unit, vfs, blk, flows, steps, gaps = m[0].groups()
    n, vfs, blk, flows = int(n), int(vfs), int(blk), int(flows)
    steps, gaps = int(steps or 0), int(gaps or 0)
    ev = ct.load(trace)
    if trace.endswith((".pftrace", ".pftrace.gz")):
        got_n = len(pf.split_packets(pf.read_raw(trace))[0])
        got_flows = len(pf.load(trace).flows())
    else:
        got_n = len(ev)
        outs = {e["bind_id"] for e in ev if e.get("ph") == "X" and e.get("flow_out") is True}
        got_flows = sum(1 for e in ev if e.get("ph") == "X" and e.get("flow_in") is True and e.get("bind_id") in outs)
    got_vfs = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "vfs")
    got_blk = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "block")
    info = ct.trace_info(ev) or {}
    check(got_n == n, f"{n} {unit} said, {got_n} in the file")
    check(got_vfs == vfs == info.get("vfs_events"), f"{vfs} vfs said, {got_vfs} vfs slices, info {info.get('vfs_events')}")
    check(got_blk == blk == info.get("block_requests"),
          f"{blk} block said, {got_blk} block slices, info {info.get('block_requests')}")
    check(got_flows == flows == info.get("flows"), f"{flows} flows said, {got_flows} in the file, info {info.get('flows')}")
    got_steps = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "gpuio_step")
    got_gaps = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "gpuio_gap")
    check(got_steps == steps and got_gaps == gaps,
          f"{steps} loop steps and {gaps} GPU idle gaps said, {got_steps} and {got_gaps} in the file")
    return check.status()


if __name__ == "__main__":
    sys.exit(__doc__)
