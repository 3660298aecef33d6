"""Traces and reports of fio runs against fio's own JSON report (io_bytes and
total_ios per job) and the files on disk (t_fio_truth, t_block_direct,
t_report_fio).

The truth is computed here from fio's report and filefrag's output:
job_totals sums a report per job name over its clones, parse_filefrag reads
a file's extents, sector_of says which disk sector holds a file offset."""
import collections
import json
import os
import re

import truth
from checks.common import Checks, load_json


def job_totals(fio):
    """{job name: {"read": [io_bytes, total_ios], "write": [...]}} of a fio
    JSON report, summed over a job's clones (numjobs)"""
    rep = collections.defaultdict(lambda: {"read": [0, 0], "write": [0, 0]})
    for j in fio["jobs"]:
        for rw in ("read", "write"):
            rep[j["jobname"]][rw][0] += j[rw]["io_bytes"]
            rep[j["jobname"]][rw][1] += j[rw]["total_ios"]
    return rep


def job_io(fio, job, rw):
    """(io_bytes, total_ios) of the one job named JOB of a fio report (it ran
    without error)"""
    j = [x for x in fio["jobs"] if x["jobname"] == job]
    assert j and not j[0]["error"], f"fio job {job}"
    return j[0][rw]["io_bytes"], j[0][rw]["total_ios"]


FRAG_LINE = re.compile(r"\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*(\d+):\s*(\d+)")


def parse_filefrag(text):
    """[(logical, physical, length)] in 512-byte units from `filefrag -v -b512`"""
    out = []
    for line in text.splitlines():
        m = FRAG_LINE.match(line)
        if m:
            out.append((int(m[1]), int(m[3]), int(m[5])))
    return out


def sector_of(ext, off):
    """the disk sector that holds byte OFF of a file with extents EXT (None: a hole)"""
    s = off // 512
    for lo, phys, n in ext:
        if lo <= s < lo + n:
            return phys + s - lo
    return None


# t_fio_truth's jobs: name: (engine, bs, direct, nrfiles)
FIO_TRUTH_JOBS = {
    "seqread-psync": ("psync", 65536, False, 2),
    "randread-psync-direct": ("psync", 4096, True, 1),
    "seqwrite-pvsync2": ("pvsync2", 32768, False, 1),
    "randwrite-pvsync2-direct": ("pvsync2", 16384, True, 2),
    "randread-pvsync2": ("pvsync2", 16384, False, 2),
    "randwrite-psync": ("psync", 8192, False, 1),
    "seqread-sync-thread": ("sync", 131072, False, 1),
}
ENGINE_CALLS = {"psync": ("pread64", "pwrite64"), "pvsync2": ("preadv2", "pwritev2"),
                "sync": ("read", "write")}


def fio_trace(trace, fiojson, d, checkfiles):
    """t_fio_truth: per job and per file, the trace's calls == fio's I/O"""
    ev = truth.load(trace)
    inf = truth.info(ev)
    if inf.get("dropped"):
        print(f"FAIL trace dropped {inf['dropped']} events")
        return 1
    fio = load_json(fiojson)
    JOBS = FIO_TRUTH_JOBS
    # fio's report: per job name, summed over clones
    for j in fio["jobs"]:
        if j.get("error"):
            print(f"FAIL fio job {j['jobname']} error {j['error']}")
            return 1
    rep = job_totals(fio)
    if set(rep) != set(JOBS):
        print(f"FAIL fio ran jobs {sorted(rep)}")
        return 1

    calls = truth.vfs(ev)
    byfile = collections.defaultdict(list)
    for e in calls:
        p = e["args"].get("path", "")
        if p.startswith(d + "/"):
            byfile[os.path.basename(p)].append(e)

    check = Checks()
    for job, (engine, bs, direct, nrfiles) in JOBS.items():
        rcall, wcall = ENGINE_CALLS[engine]
        files = sorted(f for f in os.listdir(d) if f.startswith(job + "."))
        clones = sum(1 for j in fio["jobs"] if j["jobname"] == job)
        check(len(files) == clones * nrfiles, f"{job}: {len(files)} files on disk")
        tot = {"read": [0, 0], "write": [0, 0]}
        for f in files:
            size = os.path.getsize(os.path.join(d, f))
            evs = byfile.get(f, [])
            rw = "read" if rep[job]["read"][1] else "write"
            want_call = rcall if rw == "read" else wcall
            io = [e for e in evs if e["name"] in truth.READ_CALLS | truth.WRITE_CALLS]
            other = sorted({e["name"] for e in io if e["name"] != want_call})
            check(not other, f"{f}: data calls are all {want_call}" + (f" (also {other})" if other else ""))
            io = [e for e in io if e["name"] == want_call]
            nbytes = sum(e["args"].get("bytes", 0) for e in io)
            tot[rw][0] += nbytes
            tot[rw][1] += len(io)
            check(nbytes == size, f"{f}: {rw} {nbytes} bytes in the trace, file is {size}")
            sizes = sorted({e["args"].get("bytes") for e in io} | {e["args"].get("requested") for e in io})
            check(sizes == [bs], f"{f}: every {want_call} moved bs={bs} ({sizes})")
            offs = sorted(e["args"].get("offset", -1) for e in io)
            check(offs == list(range(0, size, bs)), f"{f}: offsets are each block of the file once")
            if job.startswith("seq"):
                inorder = [e["args"].get("offset") for e in io]
                check(inorder == list(range(0, size, bs)), f"{f}: sequential offsets in time order")
            tids = {(e["pid"], e["tid"]) for e in io}
            check(len(tids) == 1, f"{f}: I/O from one thread {sorted(tids)}")
            if job.endswith("-thread"):
                check(all(p != t for p, t in tids), f"{f}: the thread job's I/O is on a thread, not a main thread")
            opens = [e for e in evs if e["name"] in truth.OPEN_CALLS]
            check(opens and all(("O_DIRECT" in e["args"].get("flags", "")) == direct for e in opens),
                  f"{f}: {len(opens)} open(s), O_DIRECT {'set' if direct else 'not set'}: "
                  f"{sorted({e['args'].get('flags') for e in opens})}")
        for rw in ("read", "write"):
            check(tot[rw] == rep[job][rw],
                  f"{job}: {rw} bytes/ios in trace {tot[rw]} == fio's {rep[job][rw]}")

    # the numjobs=2 clones run in two processes; the thread job runs in fio's
    # main process, not in a process of its own
    clone_pids = {e["pid"] for f, evs in byfile.items() if f.startswith("randread-pvsync2.") for e in evs
                  if e["name"] == "preadv2"}
    check(len(clone_pids) == 2, f"randread-pvsync2 numjobs=2 ran in 2 processes {sorted(clone_pids)}")
    names = truth.process_names(ev)
    job_pids = {e["pid"] for evs in byfile.values() for e in evs}
    check(all(p in names for p in job_pids), f"process_name metadata for every job pid {sorted(job_pids)}")

    if os.path.exists(checkfiles):
        cf = load_json(checkfiles)
        mine = truth.file_totals(ev)
        for p, t in mine.items():
            if p.startswith(d + "/") and "." in os.path.basename(p):
                c = cf.get(p, {})
                for k in ("read_bytes", "write_bytes"):
                    if k in c and c[k] != t[k]:
                        check(False, f"check_trace.py files: {p} {k}={c[k]}, events say {t[k]}")
    return check.status()


def block_direct(trace, fiojson, mnt, disk, tmp):
    """t_block_direct: O_DIRECT block requests on the loop disk == fio's I/O,
    each bound (flow) to the fio call that caused it, inside it, at the
    sector filefrag says holds the call's offset"""
    ev = truth.load(trace)
    fio = {j["jobname"]: j for j in load_json(fiojson)["jobs"]}
    check = Checks()

    def extents(f):
        with open(os.path.join(tmp, f + ".frag")) as fp:
            return parse_filefrag(fp.read())

    blk = truth.block(ev, disk=disk)
    check(len(blk) > 0, f"{len(blk)} block requests on {disk}")
    vfs_by_bind = truth.flows_ok(ev)
    for job, op, call in (("dread", "read", "pread64"), ("dwrite", "write", "pwrite64")):
        want = (fio[job][op]["io_bytes"], fio[job][op]["total_ios"])
        path = os.path.join(mnt, job + ".0.0")
        # data requests (an ext4 metadata read, flagged meta, is not fio's data)
        reqs = [e for e in blk if e["args"].get("op") == op and "meta" not in e["args"].get("flags", "").split("|")]
        got = (sum(e["args"]["bytes"] for e in reqs), len(reqs))
        check(got == want, f"{disk} {op}: {got[0]} bytes in {got[1]} requests == fio {job} {want}")
        calls = truth.vfs(ev, path=path, names={call})
        check(sum(e["args"].get("bytes", 0) for e in calls) == want[0] and len(calls) == want[1],
              f"{job}: {len(calls)} {call} calls on {path} == fio's {want[1]}")
        ext = extents(job + ".0.0")
        per_call = collections.defaultdict(int)
        unbound = misbound = outside = badsector = 0
        for r in reqs:
            b = r.get("bind_id")
            v = vfs_by_bind.get(b) if b is not None and r.get("flow_in") else None
            if v is None:
                unbound += 1
                continue
            a = v["args"]
            if v["name"] != call or a.get("path") != path or v["pid"] != r["args"].get("pid"):
                misbound += 1
                continue
            per_call[id(v)] += r["args"]["bytes"]
            if not (v["ts"] - 0.001 <= r["ts"] and r["ts"] + r["dur"] <= v["ts"] + v["dur"] + 0.001):
                outside += 1
            # which part of the call this request carries: the call's offset
            # plus what earlier requests of the same call carried
            done = per_call[id(v)] - r["args"]["bytes"]
            if sector_of(ext, a["offset"] + done) != r["args"].get("sector"):
                badsector += 1
        check(unbound == 0, f"{op}: every request has flow_in + a bound VFS slice ({unbound} without)")
        check(misbound == 0, f"{op}: every request is bound to {call} on {path} by the same pid ({misbound} not)")
        check(outside == 0, f"{op}: every request lies inside its call's [ts, ts+dur] ({outside} outside)")
        check(badsector == 0, f"{op}: every request's sector is the file's physical block at the call's offset ({badsector} not)")
        whole = sum(1 for v in calls if per_call.get(id(v)) == v["args"].get("bytes"))
        check(whole == len(calls), f"{op}: {whole}/{len(calls)} calls' requests add up to the call's bytes")
    return check.status()


# t_report_fio: the access pattern each job asked for
REPORT_PATTERN = {"seqread": "sequential", "randread-direct": "random", "seqwrite": "sequential",
                  "randwrite": "random", "stridedread": "strided", "randread-pvsync2": "random"}


def report_fio(report, fiojson, d):
    """t_report_fio: `gpuio report --json` per file == fio's report per job"""
    rep, fio = load_json(report), load_json(fiojson)
    check = Checks()
    files = {f["path"]: f for f in rep["files"]}
    check(rep["summary"]["dropped"] == 0, f"no drops ({rep['summary']['dropped']})")
    for j in fio["jobs"]:
        name = j["jobname"]
        paths = [p for p in files if os.path.dirname(p) == d and os.path.basename(p).startswith(name + ".")]
        check(len(paths) == 1, f"{name}: one file in the report {paths}")
        if not paths:
            continue
        f = files[paths[0]]
        for rw in ("read", "write"):
            check(f[f"{rw}_bytes"] == j[rw]["io_bytes"] and f[f"{rw}_ops"] == j[rw]["total_ios"],
                  f"{name}: {rw} {f[rw + '_bytes']} bytes / {f[rw + '_ops']} ops == fio "
                  f"{j[rw]['io_bytes']} / {j[rw]['total_ios']}")
        check(f["pattern"] == REPORT_PATTERN[name], f"{name}: pattern {f['pattern']} ({f['pattern_counts']}) "
              f"== {REPORT_PATTERN[name]}")
        bs = j["job options"].get("bs") or fio["global options"].get("bs")
        sizes = f["request_sizes"]
        n = j["read"]["total_ios"] + j["write"]["total_ios"]
        check(len(sizes) == 1 and sizes[0]["count"] == n, f"{name}: one request size bucket ({sizes})")
        if "direct" in name:
            check(f["direct_read_bytes"] == j["read"]["io_bytes"] and f["page_cache"]["hit_ratio"] is None,
                  f"{name}: O_DIRECT reads are not page-cache hits ({f['direct_read_bytes']})")
    tot = rep["summary"]["vfs"]
    fr = sum(j["read"]["io_bytes"] for j in fio["jobs"])
    check(tot["read_bytes"] >= fr, f"VFS read total {tot['read_bytes']} >= fio's {fr}")
    return check.status()
