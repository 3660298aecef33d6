"""Traces of small test programs against what they measured or did
themselves: the page cache (pc_read's mincore counts, t_pagecache),
writeback (wb_writer, t_writeback), known_io's files (t_install, t_deb)."""
import os

import truth
from checks.common import Checks, events


def parse_kv(text):
    """{key: int} of "k=v k=v ..." (pc_read's output)"""
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split())}


def pagecache(trace, outf, data):
    """t_pagecache: the cold preads' cache_miss_pages sum to >= 90% of the pages
    mincore said were not resident (and <= the file's pages); the warm reads'
    to 0; every read carries cache_miss_pages"""
    with open(outf) as f:
        truth_ = parse_kv(f.read())
    pages, r1, r2 = truth_["pages"], truth_["resident_before_pass1"], truth_["resident_before_pass2"]
    ev = truth.load(trace)
    path = os.path.realpath(data)
    cold = truth.vfs(ev, path=path, names={"pread64"})
    warm = truth.vfs(ev, path=path, names={"read"})
    check = Checks()
    check(cold and warm, f"{len(cold)} cold preads, {len(warm)} warm reads traced")
    check(all("cache_miss_pages" in e["args"] for e in cold + warm), "every read carries cache_miss_pages")
    c = sum(e["args"].get("cache_miss_pages", 0) for e in cold)
    w = sum(e["args"].get("cache_miss_pages", 0) for e in warm)
    need = pages - r1
    check(need > 0.9 * pages, f"mincore: {r1} of {pages} pages resident before the cold pass (fadvise worked)")
    check(0.9 * need <= c <= pages, f"cold pass: cache_miss_pages sum {c}, {need} pages were not cached "
          f"(want {int(0.9 * need)}..{pages})")
    check(r2 == pages, f"mincore: {r2} of {pages} pages resident before the warm pass")
    check(w == 0, f"warm pass: cache_miss_pages sum {w} (want 0)")
    return check.status()


def writeback(trace, path, disk, wpid, size, t_sync):
    """t_writeback: the writer's write(2)s sum to SIZE; writeback requests of
    the file on DISK attributed to it add up to >= SIZE, all submitted after
    the test's sync began (T_SYNC, CLOCK_MONOTONIC ns)"""
    wpid, size, t_sync = int(wpid), int(size), int(t_sync)
    path = os.path.realpath(path)
    ev = truth.load(trace)
    inf = truth.info(ev)
    check = Checks()
    w = truth.vfs(ev, path=path, names={"write"}, pid=wpid)
    check(sum(e["args"].get("bytes", 0) for e in w) == size, f"writer {wpid}: {len(w)} write(2)s of {path}, "
          f"{sum(e['args'].get('bytes', 0) for e in w)} bytes (wrote {size})")
    blk = [b for b in truth.block(ev, disk=disk) if b["name"] == "write"]
    mine = [b for b in blk if b["args"].get("pid") == wpid and b["args"].get("path") == path]
    wb = [b for b in mine if b["args"].get("writeback") is True]
    n = sum(b["args"].get("bytes", 0) for b in wb)
    check(n >= size, f"{len(wb)} writeback requests on {disk} for {wpid} and {os.path.basename(path)}: {n} bytes "
          f"(file {size}); all writes on {disk}: "
          + str(sorted({(b['args'].get('pid'), b['args'].get('path'), b['args'].get('writeback')) for b in blk}, key=str)))
    check(len(wb) == len(mine), f"every write request of the file on {disk} says writeback ({len(mine) - len(wb)} do not)")
    early = [b for b in wb if truth.to_mono_ns(inf, b["ts"]) < t_sync]
    check(not early, f"all were submitted after the test's sync began ({len(early)} before)")
    return check.status()


def known_io_writes(trace, d):
    """t_install, t_deb: every byte known_io wrote to its files in D is in the
    trace's write calls"""
    ev = events(trace)
    files = {os.path.join(d, f): os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)}
    assert files, "known_io wrote nothing"
    w = {}
    for e in ev:
        a = e.get("args", {})
        if e.get("cat") == "vfs" and "write" in e["name"] and a.get("path") in files:
            w[a["path"]] = w.get(a["path"], 0) + (a.get("bytes") or 0)
    bad = [(p, w.get(p, 0), n) for p, n in files.items() if w.get(p, 0) < n]
    assert not bad, bad
    print("installed binary traced %d files, every byte written" % len(files))


def prefetch(trace, report_json, prog_out, d):
    """t_prefetch: prefetch_hints' hints in the trace with their ranges and
    advice; per file, the report's prefetch counts against the program's:
    the reads into the hinted range, those that found every page cached
    (mincore before each read), the pages still read"""
    import truth
    from checks.common import Checks, load_json
    ev = truth.load(trace)
    check = Checks()
    rep = load_json(report_json)
    rows = {f["path"]: f for f in rep["files"]}
    heads = " ".join(rep.get("headlines", []))
    want_adv = {"f.dat": ["POSIX_FADV_DONTNEED", "POSIX_FADV_RANDOM", "POSIX_FADV_WILLNEED"],
                "r.dat": ["POSIX_FADV_DONTNEED", "POSIX_FADV_RANDOM", None],
                "m.dat": ["POSIX_FADV_DONTNEED", "POSIX_FADV_RANDOM", "MADV_WILLNEED"],
                "l.dat": ["POSIX_FADV_DONTNEED", "POSIX_FADV_RANDOM", "POSIX_FADV_WILLNEED",
                          "POSIX_FADV_DONTNEED"]}
    for line in open(prog_out):
        kv = dict(w.split("=", 1) for w in line.split())
        name, path = kv["file"], f"{d}/{kv['file']}"
        hints = truth.vfs(ev, path=path, names={"fadvise64", "readahead", "madvise"})
        check([e["args"].get("advice") for e in hints] == want_adv[name],
              f"{name}: hints in order {[e['args'].get('advice') for e in hints]}")
        h = [e for e in hints if e["name"] == kv["hint"] and
             e["args"].get("advice") in (None, "POSIX_FADV_WILLNEED", "MADV_WILLNEED")]
        check(len(h) == 1 and h[0]["args"].get("offset") == 0 and
              h[0]["args"].get("length") == int(kv["hinted"]),
              f"{name}: one {kv['hint']} of offset 0, length {kv['hinted']}")
        pf = rows.get(path, {}).get("prefetch", {})
        reads, cached = int(kv["reads_in_range"]), int(kv["cached_in_range"])
        got = (pf.get("hints"), pf.get("willneed_hints"), pf.get("hinted_bytes"),
               pf.get("reads_after"), pf.get("read_bytes_after"),
               pf.get("reads_after", 0) - pf.get("reads_after_missed", 0),
               pf.get("miss_pages_after"))
        want = (int(kv["hints"]), 1, int(kv["hinted"]), reads, int(kv["read_bytes_in_range"]),
                cached, int(kv["missing_pages_in_range"]))
        check(got == want, f"{name}: report (hints, willneed, hinted bytes, reads after, their "
              f"bytes, cached, pages read) {got} == the program's {want}")
    check("prefetch hints:" in heads, "a headline names the prefetch hints")
    return check.status()
