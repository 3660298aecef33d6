"""`gpuio monitor`'s /metrics pages, scraped with curl and parsed strictly
(parse_prom), against the I/O and calls the tests made (t_monitor_*): fio's
own JSON per job, the CALL lines of fake_libcuda_calls, the stand-in NVML's
file, the preadloop bursts, the churn's counts.

parse_prom is unit-tested; so is cuda_kinds' reading of the C table."""
import ast
import collections
import json
import math
import os
import re
import sys

import truth
from checks.common import Checks, load_json


class PromError(Exception):
    pass


NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*$')


def parse_prom(text):
    """{"name{sorted labels}": value} of a /metrics page in the Prometheus text
    format 0.0.4, parsed strictly: every line a HELP/TYPE comment or a sample;
    names and labels well-formed, escapes legal, one contiguous group per
    family, TYPE before samples, no duplicate series, counters end _total and
    are >= 0, histograms have ascending le, cumulative buckets, +Inf ==
    _count and a _sum. Raises PromError saying what (and on which line)."""
    if not text.endswith("\n"):
        raise PromError("page does not end with a newline")
    types, helps, seen_fam, done_fam, series, out = {}, {}, [], set(), set(), {}
    hist = {}
    cur = None
    def fam_of(name):
        for suf in ("_bucket", "_sum", "_count"):
            if name.endswith(suf) and types.get(name[:-len(suf)]) == "histogram":
                return name[:-len(suf)]
        return name
    def err(n, msg):
        raise PromError(f"line {n}: {msg}")
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("#"):
            m = re.match(r'# (HELP|TYPE) (\S+) (.*)$', line)
            if not m: continue
            kind, name, rest = m.groups()
            if not NAME.match(name): err(n, f"bad metric name {name!r}")
            if kind == "TYPE":
                if name in types: err(n, f"second TYPE for {name}")
                if rest not in ("counter", "gauge", "histogram", "summary", "untyped"): err(n, f"bad type {rest!r}")
                if name in done_fam or name in seen_fam: err(n, f"TYPE after samples of {name}")
                types[name] = rest
            else:
                if name in helps: err(n, f"second HELP for {name}")
                helps[name] = rest
            continue
        if not line.strip(): err(n, "blank line")
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$', line)
        if not m: err(n, f"not a sample: {line!r}")
        name, _, lab, val = m.group(1), m.group(2), m.group(3), m.group(4)
        labels = {}
        if lab:
            i = 0
            while i < len(lab):
                lm = re.match(r'([a-zA-Z_][a-zA-Z0-9_]*)="', lab[i:])
                if not lm: err(n, f"bad label at {lab[i:]!r}")
                k = lm.group(1); i += lm.end(); v = ""
                while True:
                    if i >= len(lab): err(n, "unterminated label value")
                    c = lab[i]
                    if c == "\\":
                        if i + 1 >= len(lab) or lab[i+1] not in '\\"n': err(n, "illegal escape")
                        v += {"\\": "\\", '"': '"', "n": "\n"}[lab[i+1]]; i += 2; continue
                    if c == '"': i += 1; break
                    if c == "\n": err(n, "raw newline in label")
                    v += c; i += 1
                if k in labels: err(n, f"duplicate label {k}")
                labels[k] = v
                if i < len(lab):
                    if lab[i] != ",": err(n, f"expected ',' at {lab[i:]!r}")
                    i += 1
        try:
            fv = float(val)
        except ValueError:
            err(n, f"bad value {val!r}")
        fam = fam_of(name)
        if fam not in types: err(n, f"sample of {name} without a TYPE")
        if cur != fam:
            if fam in done_fam: err(n, f"family {fam} is not contiguous")
            if cur: done_fam.add(cur)
            cur = fam; seen_fam.append(fam)
        t = types[fam]
        if t == "counter":
            if not name.endswith("_total"): err(n, f"counter {name} does not end in _total")
            if fv < 0 or math.isnan(fv): err(n, f"counter {name} = {fv}")
        key = name + "{" + ",".join(f'{k}="{labels[k]}"' for k in sorted(labels)) + "}"
        if key in series: err(n, f"duplicate series {key}")
        series.add(key); out[key] = fv
        if t == "histogram":
            base = {k: v for k, v in labels.items() if k != "le"}
            hk = fam + repr(sorted(base.items()))
            h = hist.setdefault(hk, {"b": [], "sum": None, "count": None, "line": n})
            if name.endswith("_bucket"):
                if "le" not in labels: err(n, "bucket without le")
                le = float("inf") if labels["le"] == "+Inf" else float(labels["le"])
                if h["b"] and (le <= h["b"][-1][0] or fv < h["b"][-1][1]): err(n, f"buckets not ascending/cumulative in {hk}")
                h["b"].append((le, fv))
            elif name.endswith("_sum"): h["sum"] = fv
            elif name.endswith("_count"): h["count"] = fv
    for hk, h in hist.items():
        if not h["b"] or h["b"][-1][0] != float("inf"):
            raise PromError(f"histogram {hk}: no +Inf bucket")
        if h["count"] is None or h["sum"] is None:
            raise PromError(f"histogram {hk}: no _sum/_count")
        if h["b"][-1][1] != h["count"]:
            raise PromError(f"histogram {hk}: +Inf {h['b'][-1][1]} != _count {h['count']}")
    return out


def prom_parse(path):
    """monitor_lib.sh prom_parse: the strict parse of a scraped page (parse_prom)
    as JSON on stdout; exit 1 saying why where the page breaks the format"""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        out = parse_prom(text)
    except PromError as e:
        sys.exit(str(e))
    json.dump(out, sys.stdout)


def cuda_kinds(src):
    """t_monitor_cuda: {driver function: its kind} from the table the monitor
    probes from (user/cuda/cuda_lib.c's drv_fns), as JSON"""
    with open(src) as f:
        src = f.read()
    tab = src[src.index("static const struct cuda_fn drv_fns[]"):]
    tab = tab[:tab.index("};")]
    kinds = {}
    for m in re.finditer(r'\.name = "(\w+)", \.kind = GPUIO_API_(\w+)', tab):
        kinds[m.group(1)] = m.group(2).lower()
    for m in re.finditer(r'DRV_COPY\("(\w+)"', tab):
        kinds[m.group(1)] = "memcpy"
    assert len(kinds) > 30, kinds
    json.dump(kinds, sys.stdout)


def cuda_counts(kindsf, callsf, cg, comm, live, exited, tag):
    """t_monitor_cuda: per-process and per-cgroup CUDA call counts on the LIVE and
    EXITED pages == the calls the program printed (CALLSF), by kind (KINDSF)"""
    kinds = json.load(open(kindsf))
    truth = collections.Counter()
    for l in open(callsf):
        if l.startswith("CALL "):
            truth[kinds[l.split()[1]]] += 1
    assert sum(truth.values()) == 11, truth
    check = Checks()
    for page in (live, exited):
        m = json.load(open(page))
        when = "live" if "live" in page else "exited"
        for fam, lab in (("gpuio_process_cuda_calls_total", f'cgroup="{cg}",comm="{comm}"'),
                         ("gpuio_cgroup_cuda_calls_total", f'cgroup="{cg}"')):
            got = collections.Counter()
            for k, v in m.items():
                if k.startswith(fam + "{") and lab + "," in k.replace("}", ",", 1) and v:
                    api = k.split('api="')[1].split('"')[0]
                    kind = k.split('kind="')[1].split('"')[0]
                    got[(api, kind)] += int(v)
            want = collections.Counter({("driver", k): n for k, n in truth.items()})
            check(got == want, f"{tag} {when}: {fam}{{{lab}}} {dict(got)} == calls made {dict(want)}")
        check(m.get('gpuio_monitor_map_full_total{map="cuda_process"}') == 0, f"{tag} {when}: no CUDA map full")
    return check.status()


def jobs_v2(page, tmp, dev, uid, cid, cg_s, cg_k):
    """t_monitor_jobs: the Slurm step's and the Kubernetes container's series on
    the cgroup v2 hierarchy carry their identity labels and fio's bytes and
    calls; pseudo filesystems are counted apart"""
    m = load_json(page)
    def fio(name, rw):
        j = json.load(open(f"{tmp}/fio-{name}.json"))["jobs"][0]
        assert not j["error"]
        return j[rw]["io_bytes"], j[rw]["total_ios"]
    def key(name, **lab):
        return name + "{" + ",".join(f'{k}="{lab[k]}"' for k in sorted(lab)) + "}"
    FS = dict(device=dev, mountpoint=f"{tmp}/mnt", fstype="ext4")
    jobs = [("slurm", "read", dict(cgroup=cg_s, slurm_job="4242", slurm_step="0", unit="slurmstepd.scope")),
            ("kube", "write", dict(cgroup=cg_k, k8s_pod_uid=uid, k8s_qos="burstable", container_id=cid))]
    for name, op, ident in jobs:
        b, n = fio(name, op)
        got_b = m.get(key("gpuio_cgroup_vfs_bytes_total", op=op, **ident, **FS))
        got_n = m.get(key("gpuio_cgroup_vfs_ops_total", op=op, **ident, **FS))
        assert (got_b, got_n) == (b, n), (name, got_b, got_n, "fio", b, n, [k for k in m if cg_s in k or "k8s" in k][:6])
        got_blk = m.get(key("gpuio_cgroup_block_bytes_total", op=op, **ident, **FS))
        assert got_blk == b, (name, "block", got_blk, b)
        print(f"{name}: {ident} -> {got_n} {op}s, {got_b} bytes (fio {n}, {b}); block {got_blk}")
        # the process series carry the same identity
        pk = key("gpuio_process_vfs_bytes_total", op=op, comm="fio", **ident)
        assert m.get(pk, 0) >= b, (pk, m.get(pk))
    # no cgroup series of a pseudo filesystem, and what they did is counted apart
    pseudo = [k for k in m if k.startswith("gpuio_cgroup_vfs") and any(f'fstype="{t}"' in k for t in ("proc", "sysfs", "cgroup", "cgroup2"))]
    assert not pseudo, pseudo[:3]
    assert "gpuio_pseudo_fs_vfs_ops_total{op=\"read\"}" in m, "no pseudo-fs total"
    print("pseudo filesystems: no cgroup series; %d reads counted apart" % m['gpuio_pseudo_fs_vfs_ops_total{op="read"}'])


def jobs_v1(page, tmp, dev):
    """t_monitor_jobs: a Slurm step in the v1 memory hierarchy labelled, with fio's
    reads"""
    m = load_json(page)
    j = json.load(open(f"{tmp}/fio-v1.json"))["jobs"][0]
    b, n = j["read"]["io_bytes"], j["read"]["total_ios"]
    lab = dict(cgroup="/slurm/uid_0/job_4343/step_batch", slurm_job="4343", slurm_step="batch",
               device=dev, mountpoint=f"{tmp}/mnt", fstype="ext4", op="read")
    k = "gpuio_cgroup_vfs_ops_total{" + ",".join(f'{x}="{lab[x]}"' for x in sorted(lab)) + "}"
    assert m.get(k) == n, (k, m.get(k), n, [x for x in m if "4343" in x][:4])
    print(f"v1 memory hierarchy: slurm_job 4343 step batch -> {m[k]} reads (fio {n})")


def metrics_fio(page, fio_a, fio_b, cga, cgb, dev, mnt):
    """t_monitor_metrics: the page accounts exactly for fio's I/O per cgroup: VFS
    bytes and ops, latency histograms, block and page-cache counters, device
    histograms, per-process series"""
    m = json.load(open(page))
    fa, fb = json.load(open(fio_a)), json.load(open(fio_b))
    # the filesystem's series carry where it is mounted and its type (ground truth: our mount)
    FS = dict(mountpoint=mnt, fstype="ext4")
    check = Checks()
    def get(name, **lab):
        key = name + "{" + ",".join(f'{k}="{lab[k]}"' for k in sorted(lab)) + "}"
        return m.get(key)
    def fio(f, job, rw):
        j = [x for x in f["jobs"] if x["jobname"] == job]
        assert j and not j[0]["error"], f"fio job {job}"
        return j[0][rw]["io_bytes"], j[0][rw]["total_ios"]
    rr = fio(fa, "rr-direct", "read"); sq = fio(fa, "seq-buffered", "read")
    wr = fio(fb, "rw-direct", "write")
    print(f"fio: A rr-direct {rr}, A seq-buffered {sq}, B rw-direct {wr}; series on device={dev}")
    for cg, rb, ro, wb, wo in ((cga, rr[0] + sq[0], rr[1] + sq[1], 0, 0), (cgb, 0, 0, wr[0], wr[1])):
        L = dict(cgroup=cg, device=dev, **FS)
        for op, b, o in (("read", rb, ro), ("write", wb, wo)):
            gb, go = get("gpuio_cgroup_vfs_bytes_total", op=op, **L), get("gpuio_cgroup_vfs_ops_total", op=op, **L)
            check(gb == b, f"{cg}: vfs {op} bytes {gb} == fio {b}")
            check(go == o, f"{cg}: vfs {op} ops {go} == fio {o}")
            c = get("gpuio_cgroup_vfs_latency_seconds_count", op=op, **L)
            check((c or 0) == o, f"{cg}: {op} latency histogram _count {c} == ops {o}")
            if o:
                s = get("gpuio_cgroup_vfs_latency_seconds_sum", op=op, **L)
                check(s is not None and 0 < s < 60 * o, f"{cg}: {op} latency _sum {s} s is plausible")
    # block layer: O_DIRECT requests are submitted by fio itself, one per call
    L = dict(cgroup=cgb, device=dev, **FS)
    bb, bo = get("gpuio_cgroup_block_bytes_total", op="write", **L), get("gpuio_cgroup_block_ops_total", op="write", **L)
    check(bb == wr[0], f"{cgb}: block write bytes {bb} == fio {wr[0]}")
    check(bo == wr[1], f"{cgb}: block write ops {bo} == fio {wr[1]}")
    L = dict(cgroup=cga, device=dev, **FS)
    br = get("gpuio_cgroup_block_bytes_total", op="read", **L) or 0
    check(br >= rr[0], f"{cga}: block read bytes {br} >= the O_DIRECT reads' {rr[0]} (buffered reads add readahead)")
    check(br <= rr[0] + sq[0] + (1 << 20), f"{cga}: block read bytes {br} <= direct + buffered + 1 MiB of readahead")
    # page cache: the buffered job's bytes, and it missed (cache dropped, invalidate=1)
    pr = get("gpuio_cgroup_pagecache_read_bytes_total", **L)
    check(pr == sq[0], f"{cga}: page-cache read bytes {pr} == buffered job's {sq[0]} (O_DIRECT excluded)")
    miss = get("gpuio_cgroup_pagecache_miss_bytes_total", **L) or 0
    check(sq[0] * 0.5 <= miss <= sq[0] + (1 << 20), f"{cga}: page-cache misses {miss} bytes for a cold {sq[0]}-byte read")
    hr = get("gpuio_cgroup_pagecache_hit_ratio", **L)
    check(hr is not None and hr <= 0.5, f"{cga}: hit ratio {hr} of a cold sequential read is low")
    # the disk: the device histograms count every request
    for op in ("read", "write"):
        ops = get("gpuio_device_ops_total", device=dev, op=op)
        c = get("gpuio_device_service_seconds_count", device=dev, op=op)
        check(ops is not None and c == ops, f"device {dev}: {op} service histogram _count {c} == ops {ops}")
    check((get("gpuio_device_ops_total", device=dev, op="write") or 0) >= wr[1], f"device {dev}: >= {wr[1]} writes")
    # per process: fio's job processes, comm "fio", in their cgroups
    pa = get("gpuio_process_vfs_ops_total", cgroup=cga, comm="fio", op="read") or 0
    pb = get("gpuio_process_vfs_ops_total", cgroup=cgb, comm="fio", op="write") or 0
    check(pa >= rr[1] + sq[1], f"{cga}: process comm=fio read ops {pa} >= fio's {rr[1] + sq[1]}")
    check(pb >= wr[1], f"{cgb}: process comm=fio write ops {pb} >= fio's {wr[1]}")
    check(any(k.startswith('gpuio_process_vfs_bytes_total{cgroup="other",comm="other"') for k in m), "the folded 'other' process series exists")
    check(m.get('gpuio_monitor_map_full_total{map="process"}') == 0, "no map full")
    return check.status()


def metrics_idle(page, cg, dev, mnt):
    """t_monitor_metrics: a live idle process's 100 reads of 4 KiB are on the page"""
    m = json.load(open(page)); L = f'cgroup="{cg}",device="{dev}",fstype="ext4",mountpoint="{mnt}"'
    o, b = m.get(f'gpuio_cgroup_vfs_ops_total{{{L},op="read"}}'), m.get(f'gpuio_cgroup_vfs_bytes_total{{{L},op="read"}}')
    print(f"live idle process: {o} read ops, {b} bytes (wants 100, 409600)")
    assert o == 100 and b == 409600


def metrics_monotonic(page1, page2):
    """t_monitor_metrics: no counter went down between two scrapes; the monitor's
    health series are there"""
    a, b = json.load(open(page1)), json.load(open(page2))
    down = [k for k, v in a.items() if "_total{" in k and k in b and b[k] < v]
    print("counters that went down:", down[:5])
    assert not down
    for k in ("gpuio_monitor_resident_bytes{}", "gpuio_monitor_open_fds{}", 'gpuio_monitor_map_entries{map="process"}'):
        assert k in b, k
        print(k, b[k])


def nvml_page(page, expect):
    """t_monitor_nvml: the per-GPU and per-process series are exactly EXPECT (a
    Python literal: series -> value), no more"""
    page = json.load(open(page))
    want = ast.literal_eval(expect)
    got = {k: v for k, v in page.items() if k.startswith(("gpuio_gpu_process_", "gpuio_gpu_utilization",
                                                          "gpuio_gpu_memory_utilization", "gpuio_gpu_nvml"))
           and not k.startswith("gpuio_gpu_process_series_dropped")}
    missing = {k: v for k, v in want.items() if got.get(k) != v}
    extra = {k: v for k, v in got.items() if k not in want}
    for k, v in sorted(want.items()):
        print(("ok   " if got.get(k) == v else "FAIL ") + f"{k} = {got.get(k)} (want {v})")
    for k, v in sorted(extra.items()):
        print(f"FAIL unexpected {k} = {v}")
    sys.exit(1 if missing or extra else 0)


def nvml_bounded(page):
    """t_monitor_nvml: 40 processes on a GPU: the 32 largest are series, the rest
    counted as dropped"""
    page = json.load(open(page))
    mem = {int(k.split('pid="')[1].split('"')[0]): int(v) for k, v in page.items()
           if k.startswith("gpuio_gpu_process_memory_bytes{")}
    assert sorted(mem) == [1000000 + i for i in range(9, 41)], sorted(mem)
    assert all(v == (p - 1000000) << 20 for p, v in mem.items()), mem
    assert page["gpuio_gpu_process_series_dropped_total{}"] >= 8, page["gpuio_gpu_process_series_dropped_total{}"]
    print("ok   40 processes on a GPU: the 32 largest are series, the rest counted as dropped")


def recorder_window(dump, pa, pb):
    """t_monitor_recorder: the dump holds exactly burst B's 300 preads (pid PB) and
    none of burst A's (PA, older than the window)"""
    ev = truth.load(dump)
    pa, pb = int(pa), int(pb)
    # (ld.so's own pread64s of libraries are not the burst's: count the data file's)
    data = lambda e: e["name"] == "pread64" and e["args"].get("path", "").endswith("/data")
    a = [e for e in truth.vfs(ev, pid=pa) if data(e)]
    b = [e for e in truth.vfs(ev, pid=pb) if data(e)]
    print(f"pread64 in the dump: burst A (pid {pa}) {len(a)}, burst B (pid {pb}) {len(b)}")
    assert len(a) == 0, "burst A is older than the window: it must not be in the dump"
    assert len(b) == 300, "burst B: exactly its 300 preads"
    assert all(e["args"].get("bytes") == 4096 for e in b), "each read 4096 bytes"


def recorder_trigger(page, dump):
    """t_monitor_recorder: the trigger fired once, its later matches suppressed;
    its dump holds the slow call"""
    m = json.load(open(page))
    k = '{trigger="vfs_latency>200ms"}'
    matches, dumps, supp = (m["gpuio_trigger_%s_total%s" % (n, k)] for n in ("matches", "dumps", "suppressed"))
    print(f"matches {matches}, dumps {dumps}, suppressed {supp}")
    assert dumps == 1 and matches >= 3 and supp >= 1, "fires once, the later matches suppressed"
    ev = truth.load(dump)
    slow = [e for e in truth.vfs(ev) if e.get("dur", 0) >= 200000]
    print("calls >= 200 ms in the trigger's dump:", [(e["name"], e["pid"], e["dur"]) for e in slow][:5])
    assert slow, "the dump holds the slow call"


def soak_sample(page, t, pid):
    """t_monitor_soak: one sample line: T, the daemon's RSS (KiB) and fds, its
    process and exited map entries, processes folded, evictions, map-full count"""
    m = load_json(page)
    rss = [int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0]
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    print(t, rss, fds, int(m['gpuio_monitor_map_entries{map="process"}']),
          int(m['gpuio_monitor_map_entries{map="exited"}']), int(m["gpuio_monitor_processes_folded_total{}"]),
          int(m['gpuio_monitor_map_evictions_total{map="process"}']), int(m['gpuio_monitor_map_full_total{map="process"}']))


def soak_bounds(samplesf, page, cg, dev, n):
    """t_monitor_soak: over the samples fds and RSS stay flat, the process map
    within capacity and drained; every process folded or evicted (counted); the
    cgroup's counters exact"""
    rows = [list(map(int, l.split())) for l in open(samplesf).read().split("\n")[1:] if l.strip()]
    m = load_json(page)
    n = int(n)
    check = Checks()
    rss = [r[1] for r in rows]; fds = [r[2] for r in rows]; pm = [r[3] for r in rows]
    print(f"{len(rows)} samples over {rows[-1][0]} s")
    check(max(fds) - min(fds) <= 2, f"open fds flat: {min(fds)}..{max(fds)}")
    check(max(rss) - rss[0] <= (8 + 24) * 1024, f"RSS flat: {rss[0]} -> max {max(rss)} KiB (<= the 8 MiB window + 24 MiB)")
    half = rss[len(rss) // 2:]
    check(max(half) - min(half) <= 8 * 1024, f"RSS flat over the second half: {min(half)}..{max(half)} KiB")
    check(max(pm) <= 2048, f"process map within its 2048 entries (max {max(pm)})")
    check(pm[-1] < 400, f"process map drained after the churn: {pm[-1]} entries")
    # each process is folded by the daemon, or evicted by the LRU when the churn
    # outruns the map between refreshes (counted, never silent)
    check(rows[-1][5] + rows[-1][6] >= 0.95 * n, f"processes folded {rows[-1][5]} + evictions reported {rows[-1][6]} account for {n}")
    def one(name, **want):
        """the value of the one series of name whose labels include want (mountpoint, fstype: any)"""
        hits = [v for k, v in m.items() if k.startswith(name + "{") and
                all(f'{a}="{b}"' in k[len(name):] for a, b in want.items())]
        assert len(hits) <= 1, (name, want, hits)
        return hits[0] if hits else None
    wb = one("gpuio_cgroup_vfs_bytes_total", cgroup=cg, device=dev, op="write")
    wo = one("gpuio_cgroup_vfs_ops_total", cgroup=cg, device=dev, op="write")
    rb = one("gpuio_cgroup_vfs_bytes_total", cgroup=cg, device=dev, op="read")
    check(wb == n * 8192, f"cgroup write bytes {wb} == {n} x 8192")
    check(wo == 2 * n, f"cgroup write ops {wo} == 2 x {n}")
    check(rb is not None and rb >= n * 8192, f"cgroup read bytes {rb} >= {n} x 8192")
    pw = m.get(f'gpuio_process_vfs_bytes_total{{cgroup="{cg}",comm="monitor_churn",op="write"}}')
    ev = rows[-1][6]
    check(pw is not None and (n - ev) * 8192 <= pw <= n * 8192,
          f"process series comm=monitor_churn: {pw} write bytes, between (n - evicted) x 8192 and n x 8192")
    return check.status()



SC_READS = {"read", "pread64", "readv", "preadv", "preadv2"}
SC_WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
SC_TWO = {"sendfile", "copy_file_range", "splice"}


def sc_all_io(expect_jsonl):
    """(read ops, read bytes, write ops, write bytes) that sc_all's calls moved
    on files (not pipes), as the monitor counts them: each read and write
    family call that succeeded; a two-file call is a read of its source and a
    write of its destination, each where it is a file"""
    ro = rb = wo = wb = 0
    for line in open(expect_jsonl):
        c = json.loads(line)
        if "errno" in c:
            continue
        n, b = c["call"], c.get("bytes", 0)
        if n in SC_READS and not c.get("pipe"):
            ro, rb = ro + 1, rb + b
        elif n in SC_WRITES and not c.get("pipe"):
            wo, wb = wo + 1, wb + b
        elif n in SC_TWO:
            if not c.get("pipe"):
                ro, rb = ro + 1, rb + b
            if not c.get("pipe2"):
                wo, wb = wo + 1, wb + b
    return ro, rb, wo, wb


def metrics_paths(page, cg, dev, mnt, expect_jsonl):
    """t_monitor_paths: the cgroup's read and write ops and bytes on the loop
    device equal what sc_all's calls moved on its files (the read and write
    families, sendfile, copy_file_range, splice: both sides)"""
    m = json.load(open(page))
    L = f'cgroup="{cg}",device="{dev}",fstype="ext4",mountpoint="{mnt}"'
    got = tuple(m.get(f'gpuio_cgroup_vfs_{k}_total{{{L},op="{op}"}}', 0)
                for op in ("read", "write") for k in ("ops", "bytes"))
    want = sc_all_io(expect_jsonl)
    print(f"cgroup {cg} on {dev}: (read ops, bytes, write ops, bytes) {got}, sc_all moved {want}")
    assert got == want


def metrics_async(page, cg, dev, mnt, *outs):
    """t_monitor_paths: the cgroup's read and write ops and bytes on the loop
    device equal the successful requests of aio_rw or uring_rw (OUTS: their
    printed lines: reads, readv, writes and their bytes); the latency
    histograms hold one entry per op"""
    m = json.load(open(page))
    L = f'cgroup="{cg}",device="{dev}",fstype="ext4",mountpoint="{mnt}"'
    want = [0, 0, 0, 0]
    for o in outs:
        kv = {k: int(v) for k, v in (w.split("=") for w in open(o).read().split()[1:])}
        want[0] += kv["reads"] + kv["readv"]
        want[1] += kv["read_bytes"] + kv["readv_bytes"]
        want[2] += kv["writes"]
        want[3] += kv["write_bytes"]
    got = tuple(m.get(f'gpuio_cgroup_vfs_{k}_total{{{L},op="{op}"}}', 0)
                for op in ("read", "write") for k in ("ops", "bytes"))
    hist = tuple(m.get(f'gpuio_cgroup_vfs_latency_seconds_count{{{L},op="{op}"}}', 0)
                 for op in ("read", "write"))
    print(f"cgroup {cg} on {dev}: (read ops, bytes, write ops, bytes) {got}, the program's {tuple(want)}; "
          f"latency counts {hist}")
    assert got == tuple(want) and hist == (want[0], want[2])
