"""t_sql: the PerfettoSQL views of user/export/sql/gpuio.sql, as
trace_processor_shell computes them on real and synthetic exports, against
what the traced program did, what the generator wrote, what the device
counted and what gpuio report computes in C.

Query results come as trace_processor_shell's CSV (`-q FILE`: one block per
statement that returns rows, blocks separated by a blank line, NULL written
[NULL]); each check reads the last block of its file.
"""
import csv
import io
import re

from checks.common import Checks, load_json

MIB = 1048576.0     # trace_processor prints doubles with 6 decimals: compare to 1e-6


# ---- reading trace_processor's output and the docs ----

def _val(s):
    if s == "[NULL]":
        return None
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s


def parse_csv(text):
    """the rows of the last result block of trace_processor_shell -q output
    (lines before the first header, e.g. its log, are not CSV: dropped)"""
    blocks, cur = [], []
    for line in text.splitlines():
        if line.startswith("[") and "]" in line[:16] and not line.startswith('["'):
            continue            # a log line: "[123.456] file.cc:12 ..."
        if line.strip():
            cur.append(line)
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    if not blocks:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(blocks[-1]))))
    head = rows[0]
    return [{k: _val(v) for k, v in zip(head, r)} for r in rows[1:]]


def read_rows(path):
    with open(path) as f:
        return parse_csv(f.read())


MARK = re.compile(r"^<!-- t_sql: ([a-z_]+) -->\s*$")


def doc_queries(md, outdir):
    """write each ```sql block of MD that follows a `<!-- t_sql: NAME -->`
    line to OUTDIR/NAME.sql; the docs' three queries are exactly these"""
    with open(md) as f:
        lines = f.read().splitlines()
    found = {}
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        i += 1
        if not m:
            continue
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        assert i < len(lines) and lines[i].strip() == "```sql", "%s: no ```sql after %s" % (md, m.group(1))
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        found[m.group(1)] = "\n".join(lines[i + 1:j]) + "\n"
        i = j + 1
    want = {"files", "block", "gaps"}
    assert set(found) == want, "docs queries: %s, want %s" % (sorted(found), sorted(want))
    for name, q in found.items():
        with open("%s/%s.sql" % (outdir, name), "w") as f:
            f.write(q)
    print("ok   %s: queries %s" % (md, ", ".join(sorted(found))))


# ---- GPU gaps from a list of activities (the truth, computed here) ----

def union_gaps(acts):
    """acts: (ts, end, name). The holes between busy periods (overlapping or
    touching activities merged), each (start, end, prev_names, next_names):
    prev = the activities ending at the gap's start, next = those starting
    at its end."""
    acts = sorted(acts)
    gaps, cur_end = [], None
    for ts, end, _ in acts:
        if cur_end is not None and ts > cur_end:
            prev = {n for s, e, n in acts if e == cur_end}
            nxt = {n for s, e, n in acts if s == ts}
            gaps.append((cur_end, ts, prev, nxt))
        cur_end = end if cur_end is None else max(cur_end, end)
    return gaps


def _lane(track):
    """'GPU 0 · stream 7 · lane 2' -> (0, 7)"""
    m = re.match(r"GPU (\d+) \u00b7 stream (\d+)", track)
    return (int(m.group(1)), int(m.group(2))) if m else None


def gen_gpu_gaps(manifest, gaps_csv, stream_csv):
    """gen_capture gpu: gpuio_gpu_gaps (per GPU) and gpuio_gpu_stream_gaps (per
    stream) equal the gaps of the union of the generated kernels, copies and
    memsets, to the ns, with the activities before and after each"""
    m = load_json(manifest)
    base, pid = m["monotonic_ns"], m["pid"]
    acts = []
    for s in m["slices"]:
        if s["cat"] != "gpu":
            continue
        dev, stream = _lane(s["track"])
        name = bytes.fromhex(s["name_hex"]).decode()
        acts.append((dev, stream, base + s["ts_ns"], base + s["ts_ns"] + s["dur_ns"], name))
    ck = Checks()
    for what, path, key in (("gpu", gaps_csv, lambda a: (a[0],)),
                            ("stream", stream_csv, lambda a: (a[0], a[1]))):
        want = []
        for k in sorted({key(a) for a in acts}):
            for g in union_gaps([(a[2], a[3], a[4]) for a in acts if key(a) == k]):
                want.append((k,) + g)
        rows = read_rows(path)
        got = sorted(rows, key=lambda r: (r["device"], r.get("stream") or 0, r["ts"]))
        ck(len(got) == len(want), "%s gaps: %d rows, %d generated" % (what, len(got), len(want)))
        for w, r in zip(want, got):
            k, s, e, prev, nxt = w
            rk = (r["device"],) if what == "gpu" else (r["device"], r["stream"])
            ok = (rk == k and r["ts"] == s and r["end_ts"] == e and r["dur"] == e - s
                  and r["pid"] == pid and r["prev_name"] in prev and r["next_name"] in nxt
                  and r["gpu"] == "GPU %d" % k[0])
            ck(ok, "%s gap %s %d..%d (%d ns) %s -> %s: got %s" %
               (what, k, s - base, e - base, e - s, sorted(prev), sorted(nxt),
                {x: r[x] for x in ("device", "stream", "ts", "dur", "prev_name", "next_name") if x in r}))
    return ck.status()


def report_gaps(report_json, gaps_csv, top_csv):
    """a real capture: per (pid, device) the number of gaps and the idle time
    of gpuio_gpu_gaps equal gpuio report's (computed in C), and its largest
    gaps (start, dur) are the report's largest_gaps"""
    r = load_json(report_json)
    ck = Checks()
    rows = read_rows(gaps_csv)
    got = {(x["pid"], x["device"]): (x["gaps"], x["idle_ns"]) for x in rows}
    want = {(d["pid"], d["device"]): (d["gaps"], round(d["idle_us"] * 1000)) for d in r["gpu"]["devices"]}
    ck(len(want) > 0, "the report has %d GPU(s) of a process" % len(want))
    ck(got == want, "gaps and idle ns per (pid, device): SQL %s, report %s" % (got, want))
    base = r["monotonic_base_ns"]
    top = read_rows(top_csv)
    rep = [(g["pid"], g["device"], base + round(g["start_ts_us"] * 1000), round(g["dur_us"] * 1000))
           for g in r["gpu"]["largest_gaps"]]
    sql = [(x["pid"], x["device"], x["ts"], x["dur"]) for x in top][:len(rep)]
    ck(len(rep) > 0 and sql == rep, "largest gaps (pid, device, ts, dur): SQL %s, report %s" % (sql[:3], rep[:3]))
    return ck.status()


def doc_gaps_gpuwait(manifest, q_csv):
    """the docs' GPU-gap query on gen_capture gpuwait: its five 20 ms gaps at
    the generated starts; the gap from 10 ms holds exactly the worker's read
    (tests/gen_capture.c gen_gpuwait: pread of /data/shard-0.tar, 1 MiB, from
    t0 + 13 ms for 13 ms, by the loader process), the gaps from -20, 40 and
    100 ms no read"""
    m = load_json(manifest)
    rows = read_rows(q_csv)
    ck = Checks()
    starts = sorted(g["start_ms"] for g in m["gaps"])
    ck(len(rows) == len(starts), "%d gaps over 10 ms, %d generated" % (len(rows), len(starts)))
    ck(all(abs(r["gap_ms"] - 20.0) < 1e-9 for r in rows), "every gap 20 ms: %s" % [r["gap_ms"] for r in rows])
    at = sorted(r["at_s"] for r in rows)
    rel = [round((a - at[0]) * 1000) for a in at]
    ck(rel == [s - starts[0] for s in starts], "gap starts (ms after the first): %s, generated %s" %
       (rel, [s - starts[0] for s in starts]))
    by_start = {s: r for s, r in zip(starts, sorted(rows, key=lambda r: r["at_s"]))}
    g = by_start.get(10)
    ck(g is not None and g["reads"] == 1 and g["files"] == 1 and abs(g["mib"] - 1.0) < 1e-9
       and abs(g["read_ms_in_gap"] - 13.0) < 1e-9 and g["readers"] == "loader",
       "gap from 10 ms: the worker's 1 MiB, 13 ms read: %s" % g)
    for s in (-20, 40, 100):
        g = by_start.get(s)
        ck(g is not None and g["reads"] == 0 and g["mib"] == 0, "gap from %d ms: no read: %s" % (s, g))
    return ck.status()


def gen_findings(manifest, steps_csv, causes_csv):
    """gpuio_loop_steps and gpuio_gap_causes on gen_capture gpuwait: its four
    NVTX steps (start, wait, rest; step 1's wait is waiting_for_data) and, per
    gap, the launching thread's state as generated (µs)"""
    m = load_json(manifest)
    steps, causes = read_rows(steps_csv), read_rows(causes_csv)
    ck = Checks()
    ck(len(steps) == len(m["steps"]), "%d steps, generated %d" % (len(steps), len(m["steps"])))
    t0 = min((int(r["ts"]) for r in causes), default=0) + 20 * 10**6   # the first gap: 20 ms before t0
    for i, (r, w) in enumerate(zip(steps, m["steps"])):
        ck(r["loop"] == 0 and r["step"] == i + 1 and r["tid"] == m["pid"] and
           int(r["ts"]) - t0 == w["start_ms"] * 10**6 and int(r["dur"]) == (w["wait_us"] + w["rest_us"]) * 1000 and
           r["wait_us"] == w["wait_us"] and r["rest_us"] == w["rest_us"] and
           r["waiting_for_data_us"] == w["wait_us"],
           "step %d at %d ms: wait %d µs, rest %d µs: %s" % (i + 1, w["start_ms"], w["wait_us"], w["rest_us"], r))
    for g in m["gaps"]:
        at = t0 + g["start_ms"] * 10**6
        got = {r["cause"]: r["us"] for r in causes if int(r["ts"]) == at and r["source"] == "launcher" and r["us"]}
        ck(got == g["us"] and all(r["launcher_tid"] == m["gap_launcher"] for r in causes if int(r["ts"]) == at),
           "gap at %d ms: the launcher's states %s, generated %s" % (g["start_ms"], got, g["us"]))
    return ck.status()


def gen_faults(manifest, q_csv):
    """gen_capture faults: gpuio_page_faults has every generated fault with
    its args (readahead_offset -1 = none = NULL) and block request count"""
    m = load_json(manifest)
    rows = sorted(read_rows(q_csv), key=lambda r: r["ts"])
    ck = Checks()
    ck(len(rows) == len(m["faults"]), "%d page_fault rows, %d generated" % (len(rows), len(m["faults"])))
    for f, r in zip(sorted(m["faults"], key=lambda f: f["ts_ns"]), rows):
        want = dict(ts=f["ts_ns"], dur=f["dur_ns"], tid=f["tid"], path=f["path"], offset=f["offset"],
                    bytes=f["bytes"], pages=f["pages"],
                    readahead_offset=None if f["readahead_offset"] < 0 else f["readahead_offset"],
                    major=int(f["major"]), slept=int(f["slept"]), is_write=int(f["write"]),
                    cut=int(f["cut"]), block_requests=f["requests"], pid=m["pid"])
        got = {k: r[k] for k in want}
        ck(got == want, "fault at %d: %s" % (f["ts_ns"], "as generated" if got == want else
                                              "got %s, want %s" % (got, want)))
    return ck.status()


# ---- known_io, traced for real ----

# tests/progs/known_io.c: what it does to DIR/w.dat and DIR/v.dat
KNOWN_CALLS = {
    "w.dat": {"openat": (3, None), "close": (3, None), "write": (16, 65536), "fsync": (1, None),
              "fadvise64": (1, None), "read": (32, 65536), "pread64": (8, 32768)},
    "v.dat": {"openat": (1, None), "close": (1, None), "pwrite64": (4, 16384), "writev": (2, 8000),
              "preadv": (2, 8192), "readv": (1, 300), "preadv2": (1, 4096), "pread64": (1, 4096)},
}


def known_io(d, calls_csv, block_csv, states_csv, diskstat, switches):
    """known_io DIR traced: gpuio_file_calls holds each file's calls with
    known_io's counts, bytes and offsets, 16 page-cache misses on w.dat;
    gpuio_block_requests: w.dat's 16 missed pages (64 KiB) read by the reads
    that missed, each O_DIRECT pread64's 4 KiB request bound to it, the 64 KiB
    fsync'd written bound to the fsync, and no more bytes than the device
    counted (/sys/block/DEV/stat deltas: DISKSTAT is 'dev read_bytes
    write_bytes' or '-' when the directory is on no block device);
    gpuio_thread_states: each O_DIRECT pread64 asleep inside itself (file_io)
    exactly when known_io counted a voluntary switch inside it (SWITCHES:
    'offset count' lines, its KNOWN_IO_SWITCHES file), at least one did"""
    ck = Checks()
    calls = read_rows(calls_csv)
    for f, want in KNOWN_CALLS.items():
        path = "%s/%s" % (d, f)
        mine = [c for c in calls if c["path"] == path]
        got = {}
        for c in mine:
            n, b = got.get(c["call"], (0, None))
            got[c["call"]] = (n + 1, None if c["bytes"] is None else (b or 0) + c["bytes"])
        ck(got == want, "%s: calls and bytes %s" % (f, "as known_io made them" if got == want else
                                                     "got %s, want %s" % (got, want)))
    w = "%s/w.dat" % d
    wc = [c for c in calls if c["path"] == w]
    offs = lambda call: sorted(c["offset"] for c in wc if c["call"] == call)
    ck(offs("write") == [i * 4096 for i in range(16)], "w.dat writes at 0, 4096, ..., 61440")
    ck(offs("read") == [i * 2048 for i in range(32)], "w.dat reads at 0, 2048, ..., 63488")
    ck(offs("pread64") == [i * 4096 for i in range(8)], "w.dat O_DIRECT preads at 0, 4096, ..., 28672")
    miss = sum(c["cache_miss_pages"] or 0 for c in wc if c["call"] == "read")
    ck(miss == 16, "w.dat reads missed %d pages (16: fadvise DONTNEED dropped them)" % miss)
    ck(all(c["tid"] == c["pid"] and c["thread_name"] == "known_io" for c in wc),
       "every w.dat call on known_io's one thread, named")

    blocks = read_rows(block_csv)
    wb = [b for b in blocks if b["path"] == w]
    rd = sum(b["bytes"] for b in wb if b["op"] == "read")
    wr = sum(b["bytes"] for b in wb if b["op"] == "write")
    ck(rd == 65536 + 8 * 4096, "w.dat read from the device: %d (64 KiB missed + 8 x 4 KiB O_DIRECT)" % rd)
    ck(wr == 65536, "w.dat written to the device: %d (the 64 KiB fsync'd)" % wr)
    ck(all(b["call_id"] is not None and b["call_path"] == w and b["call_thread_name"] == "known_io"
           for b in wb), "every w.dat request bound to a known_io call on w.dat")
    ck(all(b["call"] == "fsync" for b in wb if b["op"] == "write"), "w.dat's writes bound to the fsync")
    by_call = lambda call: sum(b["bytes"] for b in wb if b["op"] == "read" and b["call"] == call)
    ck(by_call("read") == 65536, "reads that missed: %d bytes bound (65536)" % by_call("read"))
    ck(by_call("pread64") == 32768, "O_DIRECT preads: %d bytes bound (32768)" % by_call("pread64"))
    preads = [c for c in wc if c["call"] == "pread64"]
    ck(all(c["block_requests"] == 1 and c["block_bytes"] == 4096 for c in preads),
       "gpuio_file_calls: each O_DIRECT pread64 caused one 4 KiB request: %s" %
       [(c["block_requests"], c["block_bytes"]) for c in preads])
    ck(sum(c["block_bytes"] for c in wc if c["call"] == "read") == 65536,
       "gpuio_file_calls: the reads' block_bytes sum to 65536")

    with open(diskstat) as f:
        parts = f.read().split()
    if parts and parts[0] != "-":
        dev, drd, dwr = parts[0], int(parts[1]), int(parts[2])
        trd = sum(b["bytes"] for b in blocks if b["dev"] == dev and b["op"] == "read")
        twr = sum(b["bytes"] for b in blocks if b["dev"] == dev and b["op"] == "write")
        ck(0 < trd <= drd, "%s: %d bytes of read requests, the device read %d meanwhile" % (dev, trd, drd))
        ck(0 < twr <= dwr, "%s: %d bytes of write requests, the device wrote %d meanwhile" % (dev, twr, dwr))
    else:
        print("note: the test directory is on no block device: device counters not compared")

    # known_io's own count of the voluntary switches inside each read: a
    # read that slept is asleep inside its call in the view; one the device
    # answered before the thread could sleep (a fast virtual disk, now and
    # then) has no sleep there
    with open(switches) as f:
        nvcsw = {int(a): int(b) for a, b in (ln.split() for ln in f if ln.strip())}
    states = read_rows(states_csv)
    ck(sum(1 for v in nvcsw.values() if v) >= 1,
       "known_io slept inside %d of its 8 O_DIRECT reads (>= 1)" % sum(1 for v in nvcsw.values() if v))
    for c in preads:
        slept = [s for s in states if s["call_id"] == c["id"]]
        asleep = [s for s in slept if s["blocked"] == 1 and s["blocked_kind"] == "file_io"
                  and s["call"] == "pread64" and s["call_path"] == w and c["ts"] <= s["ts"] < c["end_ts"]]
        want = nvcsw.get(c["offset"])
        ck(want is not None and bool(asleep) == bool(want),
           "O_DIRECT pread64 at %d: asleep inside it (file_io) %s, known_io counted %s switch(es) "
           "inside it: %s" % (c["offset"], bool(asleep), want,
                              [(s["state"], s["blocked_kind"]) for s in slept]))
    return ck.status()


def doc_known_io(d, files_csv, block_csv):
    """the docs' file and block-request queries on known_io's trace: w.dat's
    row (64 calls with its fadvise, 160 KiB moved, 16 missed pages, at least the 160 KiB the
    device moved for it, asleep > 0) and v.dat's (13 calls, 41068 bytes, no
    miss); the slowest requests in order, each on w.dat bound to its call"""
    ck = Checks()
    rows = {r["path"]: r for r in read_rows(files_csv)}
    w, v = rows.get("%s/w.dat" % d), rows.get("%s/v.dat" % d)
    ck(w is not None and w["calls"] == 64 and abs(w["mib"] - 163840 / MIB) < 1e-6
       and w["miss_pages"] == 16 and w["disk_mib"] >= 163840 / MIB - 1e-6 and w["asleep_ms"] > 0,
       "files query, w.dat: %s" % w)
    ck(v is not None and v["calls"] == 13 and abs(v["mib"] - 41068 / MIB) < 1e-6 and v["miss_pages"] == 0,
       "files query, v.dat: %s" % v)
    ms = [r["asleep_ms"] for r in read_rows(files_csv)]
    ck(ms == sorted(ms, reverse=True), "files query: most asleep first")
    b = read_rows(block_csv)
    ck(0 < len(b) <= 6, "block query: %d rows" % len(b))
    us = [r["us"] for r in b]
    ck(us == sorted(us, reverse=True), "block query: slowest first")
    for r in b:
        if r["path"] == "%s/w.dat" % d:
            ck(r["call"] in ("read", "pread64", "fsync") and r["call_thread_name"] == "known_io",
               "block query: request %d (%s, %d B) from %s by %s" %
               (r["id"], r["op"], r["bytes"], r["call"], r["call_thread_name"]))
    return ck.status()
