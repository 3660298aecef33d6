"""t_report_hosts: `gpuio report --hosts` over two ranks of one job traced
apart (one capture each), against the ranks' own clocks: each rank's time
inside next() and inside the step's gloo all_reduce (CLOCK_MONOTONIC, one
machine: one clock)."""
import json

from checks.common import Checks

BLOCKED = ("file_io", "page_fault", "socket", "pipe", "gpu_sync", "futex", "poll", "child", "sleep",
           "other_sleep")


def _overlap(a, b):
    """ns of the spans a inside the spans b (both lists of (s, e); b disjoint)"""
    return sum(max(0, min(x[1], y[1]) - max(x[0], y[0])) for x in a for y in b)


def hosts(report_json, *ranks):
    r = json.load(open(report_json))
    progs = [json.load(open(p)) for p in ranks]
    check = Checks()
    a = r.get("across_hosts") or {}
    check(len(r.get("reports", [])) == len(progs) and len(a.get("hosts", [])) == len(progs),
          "a report per capture and a host per capture (%d)" % len(progs))
    # the straggler by the programs' own clocks: the largest wait inside next()
    # less its CPU and run delay there (what a data wait is)
    own = [sum(s["wait_s"] * 1e9 - s["wait_cpu_ns"] - s["wait_run_delay_ns"] for s in p["steps"]) for p in progs]
    slow = max(range(len(progs)), key=lambda i: own[i])
    st = a.get("straggler") or {}
    check(st.get("host") == slow and st.get("pid") == progs[slow]["pid"],
          "the straggler is rank %d (pid %d: it waited %.0f ms in next() by its own clock, the others %s): "
          "report says host %r pid %r" % (progs[slow]["rank"], progs[slow]["pid"], own[slow] / 1e6,
                                           ["%.0f" % (o / 1e6) for i, o in enumerate(own) if i != slow],
                                           st.get("host"), st.get("pid")))
    check(st.get("cause") == "waiting_for_data", "its cause: waiting_for_data (%r)" % st.get("cause"))
    # the straggler's waits: within 10% + 20 ms of its own (the shape tests' bound)
    w = st.get("waits_us", 0) * 1000
    check(abs(w - own[slow]) <= 0.10 * own[slow] + 20e6,
          "its waits %.1f ms, its own %.1f ms (10%% + 20 ms)" % (w / 1e6, own[slow] / 1e6))
    # meanwhile: the others blocked in the collective. The report's windows
    # lie inside the straggler's next() and leave out its CPU and run delay
    # there, so the truth lies between the overlap of each other rank's
    # all_reduce with the straggler's next() (less those and the rank's own
    # CPU in all_reduce) and that overlap
    nxt = [(s["t0_mono_ns"], s["t1_mono_ns"]) for s in progs[slow]["steps"]]
    out = sum(s["wait_cpu_ns"] + s["wait_run_delay_ns"] for s in progs[slow]["steps"])
    for i, p in enumerate(progs):
        if i == slow:
            continue
        h = a["hosts"][i]
        loops = [l for l in h["loops"] if l["pid"] == p["pid"] and l["tid"] == p["main_tid"]]
        if not check(len(loops) == 1, "rank %d: its main thread is a loop of host %s" % (p["rank"], h["label"])):
            continue
        m = loops[0]["meanwhile_us"] or {}
        got = sum(m.get(k, 0) for k in BLOCKED) * 1000
        ar = [(s["ar0_mono_ns"], s["ar1_mono_ns"]) for s in p["steps"]]
        hi = _overlap(ar, nxt)
        lo = hi - out - sum(s["ar_cpu_ns"] for s in p["steps"])
        check(lo - 0.10 * lo - 20e6 <= got <= hi * 1.10 + 20e6,
              "rank %d blocked %.1f ms during the straggler's waits; its all_reduce overlapped the "
              "straggler's next() %.1f ms, less CPU and run delay there %.1f ms (10%% + 20 ms)"
              % (p["rank"], got / 1e6, hi / 1e6, lo / 1e6))
        check(loops[0]["meanwhile_busy_with"] in ("futex", "socket", "poll"),
              "rank %d: busy with %r meanwhile (a collective waits in futex, socket or poll)"
              % (p["rank"], loops[0]["meanwhile_busy_with"]))
        check(abs(h["clock_shift_s"]) < 0.001, "one machine: clock shift %.6f s" % h["clock_shift_s"])
    return check.status()
