"""Python stacks in the exports (t_export_stacks) against what
tests/progs/stack_truth.py says of itself: the file, function and line of
each thing it does (read from its own code objects), how many reads and
bytes, its pid and tid.

  - json_sites: in the JSON export, every pread64 of its data file carries
    site = "FILE:LINE FUNCTION" of the read statement and a stack whose
    Python frames begin there (native ones before them); every page_fault on its mapped file the touch line's;
    its sleeps in nap() (state lane) the nap line's; the trace info counts
    the slices with a stack.
  - pftrace_samples: the .pftrace's CPU samples, as Perfetto's importer
    read them (a CSV of cpu_profile_stack_sample with the innermost frame):
    the program's busy function is the most common innermost function, at
    its line, with 0.8 to 1.1 times the samples the rate and its CPU time
    there give, on the program's thread; and the SQL views (gpuio_call_sites,
    gpuio_cpu_functions) say the same.
"""
import collections

import truth
from checks.common import Checks, load_json
from checks.native_truth import is_python
from checks.sql_truth import read_rows


def site_of(t, what):
    """the arg site the program's statement must have: "FILE:LINE FUNCTION" """
    return "%s:%d %s" % (t["file"], t[what + "_line"], t[what + "_func"])


def _reads(ck, t, ev):
    want = site_of(t, "read")
    reads = [e for e in truth.vfs(ev, path=t["data"], names={"pread64"}, pid=t["pid"])]
    ck(len(reads) == t["reads"], "%d pread64 slices of %s (the program made %d)"
       % (len(reads), t["data"], t["reads"]))
    ck(sum(e["args"].get("bytes", 0) for e in reads) == t["bytes"],
       "their bytes: %d (the program read %d)"
       % (sum(e["args"].get("bytes", 0) for e in reads), t["bytes"]))
    sites = collections.Counter(e["args"].get("site") for e in reads)
    ck(sites == {want: len(reads)}, "every one's site is %r: %s" % (want, dict(sites)))
    # the native frames (libc's pread64) come first: the Python ones after
    py = [[f for f in e["args"].get("stack", "").split("\n") if is_python(f)] for e in reads]
    ck(all(p[:1] == [want] for p in py),
       "every one's Python frames begin at that frame (innermost first)")
    ck(all(len(p) >= 2 and p[1].startswith(t["file"] + ":") for p in py),
       "and go on to its caller in the program (main)")


def _faults(ck, t, ev, fault_mode):
    if fault_mode in ("off", "", None):
        print("note: the fault layer is off (%r): the page faults' sites are not checked"
              % fault_mode)
        return
    want = site_of(t, "map")
    faults = truth.vfs(ev, path=t["mapped"], names={"page_fault"}, pid=t["pid"])
    sites = collections.Counter(e["args"].get("site") for e in faults)
    ck(faults and sites == {want: len(faults)},
       "%d page_fault slices of %s (evicted, then touched), each at %r: %s"
       % (len(faults), t["mapped"], want, dict(sites)))
    ck(sum(e["args"].get("bytes", 0) for e in faults) > 0, "they brought pages in: %d bytes"
       % sum(e["args"].get("bytes", 0) for e in faults))


def _sleeps(ck, t, ev):
    want = site_of(t, "nap")
    naps = [e for e in ev if e.get("cat") == "sched" and e.get("name") == "Sleeping" and
            e.get("args", {}).get("tid") == t["tid"] and e["args"].get("site") == want]
    ck(len(naps) == t["naps"], "%d Sleeping states of the thread at %r (the program slept %d "
       "times there)" % (len(naps), want, t["naps"]))
    ck(all(float(e["dur"]) >= 15000 for e in naps), "each of them 15 ms or more (20 ms sleeps): %s"
       % [round(float(e["dur"]) / 1000, 1) for e in naps])


def json_sites(truth_json, export_json):
    t = load_json(truth_json)
    ev = truth.load(export_json)
    inf = truth.info(ev)
    ck = Checks("%s: " % t["python"])
    _reads(ck, t, ev)
    _faults(ck, t, ev, inf.get("fault_mode"))
    _sleeps(ck, t, ev)
    with_stack = sum(1 for e in ev if e.get("cat") == "vfs" and "stack" in e.get("args", {}))
    ps = inf.get("python_stacks", {})
    ck(ps.get("calls") == with_stack, "the trace info's python_stacks.calls %r = the %d call "
       "and fault slices with a stack" % (ps.get("calls"), with_stack))
    return ck.status()


def _leaf_check(ck, t, rows, hz):
    """the innermost frames of the samples (rows: function, file, line, tid)"""
    busy = (t["busy_func"], t["file"])
    funcs = collections.Counter((r["function"], r["file"]) for r in rows)
    top = funcs.most_common(1)[0] if funcs else (None, 0)
    ck(top[0] == busy, "the most common innermost function of the %d samples is %s (%d), "
       "the busy one: %s" % (len(rows), top[0], top[1], busy))
    lines = collections.Counter(r["line"] for r in rows if (r["function"], r["file"]) == busy)
    ck(lines and lines.most_common(1)[0][0] == t["busy_line"],
       "its most common line is the busy statement's, %d: %s" % (t["busy_line"], dict(lines)))
    # the rate times the CPU time the thread had in it (on two busy cores it
    # is preempted often): a sampler tick while it runs is a sample
    want = hz * t["burn_cpu_s"]
    ck(0.8 * want <= funcs[busy] <= 1.1 * want + 5,
       "%d samples in it, %d Hz x its %.3f s on the CPU = %.0f (0.8 to 1.1 times that)"
       % (funcs[busy], hz, t["burn_cpu_s"], want))
    tids = {r["tid"] for r in rows if (r["function"], r["file"]) == busy}
    ck(tids == {t["tid"]}, "all on the program's thread %d: %s" % (t["tid"], tids))


def pftrace_samples(truth_json, hz, samples_csv, functions_csv, sites_csv):
    """samples_csv: function, file, line, tid per cpu_profile_stack_sample;
    functions_csv: gpuio_cpu_functions of the program's pid by self_samples;
    sites_csv: gpuio_call_sites of its data file"""
    t = load_json(truth_json)
    ck = Checks("%s: " % t["python"])
    rows = read_rows(samples_csv)
    _leaf_check(ck, t, rows, int(hz))
    funcs = read_rows(functions_csv)
    ck(funcs and (funcs[0]["function"], funcs[0]["file"]) == (t["busy_func"], t["file"]),
       "gpuio_cpu_functions: the program's first function by self samples is %s: %s"
       % (t["busy_func"], funcs[:1]))
    sites = {r["site"]: r for r in read_rows(sites_csv)}
    r = sites.get(site_of(t, "read"), {})
    ck(r.get("calls") == t["reads"] and r.get("bytes") == t["bytes"],
       "gpuio_call_sites: %s read %s: %r calls, %r bytes (the program: %d, %d)"
       % (site_of(t, "read"), t["data"], r.get("calls"), r.get("bytes"), t["reads"], t["bytes"]))
    return ck.status()
