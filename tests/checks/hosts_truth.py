"""t_report_hosts: `gpuio report --hosts` over the ranks of one job traced
apart (one capture each), against the ranks' own clocks: each rank's time
inside next() and inside the step's gloo all_reduce (CLOCK_MONOTONIC, one
machine: one clock), its thread CPU and its schedstat run delay there, and
its schedstat over its whole life (read right before it exits).

What each side measures, and so what is compared:
- the program's wait in next() is wall time: its CPU there (unpickling) and
  its waits for a CPU are in it; the report counts those as on_cpu and
  runnable, and as waiting for data the sleeps its workers ended plus the
  runnable time right after each (data_then_runnable). The program's sleep
  inside next() (wait less CPU less run delay) is the report's data sleep;
  its waiting_for_data lies between that and it plus the run delay there;
- the straggler is the loop that waited for data the largest share of its
  run: where the ranks' bounds on that share overlap, either may be it, and
  the output says so;
- its cause is its largest part but on_cpu, over the thread's whole life
  (import torch and start-up too, when ranks outnumber CPUs). Its waiting
  for data, its runnable time (schedstat over its life) and the rest of its
  off-CPU time (its life less its run and run delay) have bounds from the
  program's clocks; the cause is checked where those bounds order them,
  else the output says it is not."""
import json

from checks.common import Checks

BLOCKED = ("file_io", "page_fault", "socket", "pipe", "gpu_sync", "waiting_for_ranks", "futex", "poll", "child", "sleep",
           "other_sleep")
TOL_REL, TOL_ABS = 0.10, 20e6      # the shape tests' bound on a wait: 10% + 20 ms (ns)


def tol(x):
    return TOL_REL * abs(x) + TOL_ABS


def _overlap(a, b):
    """ns of the spans a inside the spans b (both lists of (s, e); b disjoint)"""
    return sum(max(0, min(x[1], y[1]) - max(x[0], y[0])) for x in a for y in b)


def own_sleep(prog):
    """ns the rank slept inside next(): each step's wait less its CPU and run delay there"""
    return sum(max(0, s["wait_s"] * 1e9 - s["wait_cpu_ns"] - s["wait_run_delay_ns"]) for s in prog["steps"])


def own_run_delay(prog):
    """ns the rank waited for a CPU inside next()"""
    return sum(s["wait_run_delay_ns"] for s in prog["steps"])


def wait_bounds(prog):
    """(lo, hi) ns of the report's waiting_for_data for this rank's loop: its
    sleep inside next(), up to that plus its run delay there, 10% + 20 ms"""
    d = own_sleep(prog)
    return d - tol(d), d + own_run_delay(prog) + tol(d)


def straggler_candidates(bounds):
    """the indexes whose (lo, hi) share bounds reach the largest lower bound:
    each may have waited the largest share"""
    top = max(lo for lo, _ in bounds)
    return [i for i, (_, hi) in enumerate(bounds) if hi >= top]


def cause_expected(prog, span_ns, exit_ns):
    """(expected, detail): what the straggler's cause must be by its own
    clocks: "waiting_for_data", "runnable", "not waiting_for_data" (its run
    delay surely exceeds its data wait, what exceeds what else is not known)
    or None (the bounds overlap: not checked). span_ns and exit_ns are its
    thread's span and exit in the trace (when it lived); the program's
    schedstat at its end (main_schedstat_end: run, run delay since the
    thread started) leaves the tail from that read to the exit unmeasured:
    each bound allows all of it."""
    end = prog["main_schedstat_end"]
    run, rd = end[0], end[1]
    tail = max(0, exit_ns - prog["main_schedstat_end_mono_ns"])
    w_lo, w_hi = wait_bounds(prog)
    rdn = own_run_delay(prog)
    # runnable as the report counts it: all of it less the part right after data
    r_lo, r_hi = rd - rdn - tol(rd), rd + tail + tol(rd)
    # every other kind (file_io, futex, ...) is at most the rest of its life
    # off a CPU and not runnable, less its data sleep
    o_hi = span_ns - run - rd - w_lo + tail + TOL_ABS
    detail = ("waiting for data %.0f-%.0f ms, runnable %.0f-%.0f ms, any other kind <= %.0f ms "
              "(schedstat over its life: run %.0f ms, run delay %.0f ms; %.0f ms from its last reading "
              "to its exit)" % (w_lo / 1e6, w_hi / 1e6, r_lo / 1e6, r_hi / 1e6, o_hi / 1e6, run / 1e6,
                                rd / 1e6, tail / 1e6))
    if w_lo > r_hi and w_lo > o_hi:
        return "waiting_for_data", detail
    if r_lo > w_hi and r_lo > o_hi:
        return "runnable", detail
    if r_lo > w_hi:
        return "not waiting_for_data", detail
    return None, detail


def _loop(report, pid, tid):
    """the loop (pid, tid) of one capture's report: its wait section"""
    w = report.get("wait") or {}
    return w if (w.get("pid"), w.get("tid")) == (pid, tid) else None


def hosts(report_json, *ranks):
    r = json.load(open(report_json))
    progs = [json.load(open(p)) for p in ranks]
    check = Checks()
    a = r.get("across_hosts") or {}
    n = len(progs)
    if not check(len(r.get("reports", [])) == n and len(a.get("hosts", [])) == n,
                 "a report per capture and a host per capture (%d)" % n):
        return check.status()
    loops = [_loop(r["reports"][i], p["pid"], p["main_tid"]) for i, p in enumerate(progs)]
    if not check(all(loops), "each capture's loop is its rank's main thread"):
        return check.status()
    base = [rep["monotonic_base_ns"] for rep in r["reports"]]
    spans = [l["span_us"] * 1000 for l in loops]
    exits = [base[i] + int(round((l["start_us"] + l["span_us"]) * 1000)) for i, l in enumerate(loops)]

    # the straggler: the largest share of its run waiting for data
    bounds = [(lo / spans[i], hi / spans[i]) for i, (lo, hi) in enumerate(map(wait_bounds, progs))]
    cand = straggler_candidates(bounds)
    st = a.get("straggler") or {}
    h = st.get("host")
    says = ", ".join("rank %d %.1f-%.1f%%" % (p["rank"], 100 * lo, 100 * hi)
                     for p, (lo, hi) in zip(progs, bounds))
    if len(cand) == 1:
        check(h == cand[0] and st.get("pid") == progs[cand[0]]["pid"],
              "the straggler is rank %d by the ranks' own clocks (share of its run waiting for data: %s): "
              "report says host %r pid %r" % (progs[cand[0]]["rank"], says, h, st.get("pid")))
    else:
        print("note: the ranks' own clocks cannot tell the straggler among ranks %s (share of the run "
              "waiting for data: %s): any of them is right" % ([progs[i]["rank"] for i in cand], says))
        check(h in cand and st.get("pid") == progs[h]["pid"],
              "the straggler (host %r pid %r) is one of ranks %s" % (h, st.get("pid"), [progs[i]["rank"] for i in cand]))
    if h not in cand:
        return check.status()
    slow = progs[h]

    # its cause: its largest part but on_cpu, over its whole life
    want, detail = cause_expected(slow, spans[h], exits[h])
    cause = st.get("cause")
    if want is None:
        print("note: its cause (%r) is not checked: its own clocks do not order its parts: %s"
              % (cause, detail))
    elif want == "not waiting_for_data":
        check(cause != "waiting_for_data", "its cause is not waiting_for_data (%r): %s" % (cause, detail))
    else:
        check(cause == want, "its cause: %s (%r): %s" % (want, cause, detail))

    # its waits: the report's sleeps waiting for data, against its own sleep
    # inside next() (or between it and it plus the runnable time right after,
    # schedstat's run delay starting at the enqueue, the report's at the wake-up)
    got, d = st.get("waits_us", 0) * 1000, own_sleep(slow)
    dtr = loops[h].get("data_then_runnable_us", 0) * 1000
    check(abs(got - d) <= tol(d) or got - TOL_ABS <= d <= (got + dtr) * (1 + TOL_REL) + TOL_ABS,
          "its waits %.1f ms, its own sleep inside next() %.1f ms (10%% + 20 ms; runnable right after "
          "the data %.1f ms)" % (got / 1e6, d / 1e6, dtr / 1e6))

    # meanwhile: the others blocked in the collective. The report's windows
    # lie inside the straggler's next() and leave out its CPU and run delay
    # there, so the truth lies between the overlap of each other rank's
    # all_reduce with the straggler's next() (less those, and the rank's own
    # CPU and run delay in all_reduce) and that overlap
    nxt = [(s["t0_mono_ns"], s["t1_mono_ns"]) for s in slow["steps"]]
    out = sum(s["wait_cpu_ns"] + s["wait_run_delay_ns"] for s in slow["steps"])
    for i, p in enumerate(progs):
        if i == h:
            continue
        host = a["hosts"][i]
        ls = [l for l in host["loops"] if l["pid"] == p["pid"] and l["tid"] == p["main_tid"]]
        if not check(len(ls) == 1, "rank %d: its main thread is a loop of host %s" % (p["rank"], host["label"])):
            continue
        m = ls[0]["meanwhile_us"] or {}
        got = sum(m.get(k, 0) for k in BLOCKED) * 1000
        ar = [(s["ar0_mono_ns"], s["ar1_mono_ns"]) for s in p["steps"]]
        hi = _overlap(ar, nxt)
        lo = hi - out - sum(s["ar_cpu_ns"] + s["ar_run_delay_ns"] for s in p["steps"])
        check(lo - tol(lo) <= got <= hi * (1 + TOL_REL) + TOL_ABS,
              "rank %d blocked %.1f ms during the straggler's waits; its all_reduce overlapped the "
              "straggler's next() %.1f ms, less CPU and run delay there %.1f ms (10%% + 20 ms)"
              % (p["rank"], got / 1e6, hi / 1e6, lo / 1e6))
        # what it did most: the collective, where that surely took half the waits
        if lo - tol(lo) >= 0.5 * st.get("waits_us", 0) * 1000:
            check(ls[0]["meanwhile_busy_with"] in ("futex", "socket", "poll"),
                  "rank %d: busy with %r meanwhile (a collective waits in futex, socket or poll)"
                  % (p["rank"], ls[0]["meanwhile_busy_with"]))
        else:
            print("note: rank %d: what it did most during the straggler's waits (%r) is not checked: "
                  "its all_reduce surely took only %.1f ms of their %.1f ms"
                  % (p["rank"], ls[0]["meanwhile_busy_with"], max(0, lo - tol(lo)) / 1e6,
                     st.get("waits_us", 0) / 1e3))
        check(abs(host["clock_shift_s"]) < 0.001, "one machine: clock shift %.6f s" % host["clock_shift_s"])
    return check.status()
