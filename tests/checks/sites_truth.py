"""Python call sites and the loop's time inside next(), against a program
that knows its own lines and times itself (tests/progs/py_sites.py; used by
tests/t_py_stacks.sh).

py_sites(MODE, STACKS, PROGRAM_JSON, REPORT_JSON): MODE workers|threads|none,
STACKS all (gpuio trace --stacks: every call has its stack) or sleeps (the
default: the stacks of sleeps and samples). The checks:
  - the report's first loop is the program's loop thread;
  - its waiting_for_data_us is its time inside next(), within 5% + 20 ms of
    the program's perf_counter sum around next(); the parts add up to it;
    next() is called at the program's SITE:next line, in main;
  - its producers' CPU samples rank the program's busy function first;
  - STACKS all: the loop's fetch sites hold the socket receives at SITE:sock
    (their bytes within 1% of what the program received); per file kind
    (plain reads, mapped slices, the label file) >= 99% of the files' bytes
    are at the kind's exact file:line:function; the plain and label files'
    bytes are what the program read;
  - STACKS sleeps: the calls that slept carry sites, and >= 99% of those
    bytes on the mapped files (their pages dropped: every slice faults and
    waits) are at SITE:mmap.
"""
from .common import Checks, load_json

NEXT_PCT, NEXT_SLACK_MS = 5.0, 20.0
SHARE = 0.99


def _site(prog, kind):
    s = prog["sites"][kind]
    return prog["program"], s["line"], s["function"]


def _at(site, entry):
    return (entry.get("file"), entry.get("line"), entry.get("function")) == site


def _kind_of(path):
    base = path.rsplit("/", 1)[-1]
    if base.startswith("plain-"):
        return "plain"
    if base.startswith("mapped-"):
        return "mmap"
    return "label" if base == "labels.csv" else None


def _files(prog, rep):
    """per kind: (the files' read bytes, their bytes at the kind's site, bytes with any site)"""
    out = {k: [0, 0, 0] for k in ("plain", "mmap", "label")}
    for f in rep.get("files", []):
        k = _kind_of(f["path"])
        if not k or not f["path"].startswith(prog["data"]):
            continue
        site = _site(prog, k)
        out[k][0] += f.get("read_bytes", 0)
        for c in f.get("call_sites") or []:
            out[k][1] += c["bytes"] if _at(site, c) else 0
            out[k][2] += c["bytes"]
    return out


def check_next(ck, prog, lp):
    want_ms = prog["next_ns"] / 1e6
    got_ms = (lp.get("waiting_for_data_us") or 0) / 1e3
    nx = lp.get("next") or {}
    ck(lp.get("waiting_for_data_from") == "next",
       "the loop's wait is its time inside next() (%r)" % lp.get("waiting_for_data_from"))
    ck(abs(got_ms - want_ms) <= want_ms * NEXT_PCT / 100 + NEXT_SLACK_MS,
       "in next() %.1f ms, the program timed %.1f ms (within %g%% + %g ms)"
       % (got_ms, want_ms, NEXT_PCT, NEXT_SLACK_MS))
    parts = sum(nx.get(k) or 0 for k in ("asleep_for_data_us", "asleep_other_us", "runnable_us",
                                           "on_cpu_us"))
    ck(abs(parts - (lp.get("waiting_for_data_us") or 0)) <= 2,
       "its parts (asleep for data, asleep otherwise, runnable, on CPU) add up: %.1f us" % parts)
    file, line, func = _site(prog, "next")
    ck(nx.get("site") == "%s:%d %s" % (file, line, func),
       "next() is called at %s:%d %s (%r)" % (file, line, func, nx.get("site")))


def check_busy(ck, prog, lp):
    funcs = lp.get("cpu_by_function") or []
    top = funcs[0] if funcs else {}
    ck(top.get("function") == prog["busy_function"] and top.get("file") == prog["program"],
       "its producers' CPU: %s first (%s, %s samples of %d)"
       % (prog["busy_function"], top.get("function"), top.get("count"),
          sum(f["count"] for f in funcs)))


def check_all_sites(ck, prog, rep, lp):
    site = _site(prog, "sock")
    got = sum(s["bytes"] for s in lp.get("fetch_sites") or [] if _at(site, s))
    want = prog["bytes"]["sock"]
    ck(want > 0 and abs(got - want) <= want * (1 - SHARE),
       "the loop's fetch sites: %d bytes received at %s:%d %s, the program received %d"
       % (got, site[0], site[1], site[2], want))
    per = _files(prog, rep)
    for k, (read, at_site, _) in per.items():
        ck(read > 0 and at_site >= SHARE * read,
           "%s files: %d of their %d bytes (%.1f%%) at %s:%d %s"
           % (k, at_site, read, 100.0 * at_site / (read or 1), *_site(prog, k)))
    for k in ("plain", "label"):
        ck(per[k][0] == prog["bytes"][k],
           "%s files: read %d bytes, the program read %d" % (k, per[k][0], prog["bytes"][k]))
    ck(per["mmap"][0] >= prog["bytes"]["mmap"],
       "mapped files: faults brought %d bytes, the program touched %d"
       % (per["mmap"][0], prog["bytes"]["mmap"]))


def check_sleep_sites(ck, prog, rep):
    read, at_site, any_site = _files(prog, rep)["mmap"]
    ck(any_site > 0 and at_site >= SHARE * any_site,
       "mapped files, the faults that slept: %d of %d bytes with a site at SITE:mmap (of %d read)"
       % (at_site, any_site, read))


def py_sites(mode, stacks, prog_path, report_path):
    prog, rep = load_json(prog_path), load_json(report_path)
    ck = Checks("%s/%s: " % (mode, stacks))
    loops = rep.get("loops") or []
    lp = loops[0] if loops else {}
    if not ck(lp.get("pid") == prog["pid"] and lp.get("tid") == prog["loop_tid"],
              "the first loop is the program's, pid %d tid %d (%r %r)"
              % (prog["pid"], prog["loop_tid"], lp.get("pid"), lp.get("tid"))):
        return ck.status()
    check_next(ck, prog, lp)
    check_busy(ck, prog, lp)
    if stacks == "all":
        check_all_sites(ck, prog, rep, lp)
    else:
        check_sleep_sites(ck, prog, rep)
    return ck.status()
