"""Traces of Linux native AIO (io_submit / io_getevents) against the programs'
own counts (t_aio): tests/progs/aio_rw's printed totals and fio's libaio
engine's JSON report."""
import collections
import os

import truth
from checks.common import Checks, load_json

LANE_BASE = 0x20000000          # async lanes' JSON tids (docs/export-schema.md)


def parse_out(path):
    """{key: int} of aio_rw's one line: "aio_rw writes=N write_bytes=N ..." """
    with open(path) as f:
        words = f.read().split()
    assert words and words[0] == "aio_rw", f"{path}: not aio_rw's output"
    return {k: int(v) for k, v in (w.split("=") for w in words[1:])}


def on_lane(e):
    return e["tid"] >= LANE_BASE and e["tid"] != e["pid"]


def one_file(check, ev, path, out, bs, direct, vfs_by_bind, blk, report):
    """aio_rw's file PATH: its AIO requests, io_submit/io_getevents calls,
    block requests and report row against what the program printed (OUT)"""
    name = os.path.basename(path)
    calls = truth.vfs(ev, path=path)
    by = collections.defaultdict(list)
    for e in calls:
        by[e["name"]].append(e)
    wr, rd = by["aio_write"], by["aio_read"]
    check(len(wr) == out["writes"] and sum(e["args"].get("bytes", 0) for e in wr) == out["write_bytes"],
          f"{name}: {len(wr)} aio_write, {sum(e['args'].get('bytes', 0) for e in wr)} B == "
          f"the program's {out['writes']}, {out['write_bytes']} B")
    check(sorted(e["args"].get("offset") for e in wr) == [i * bs for i in range(out["writes"])],
          f"{name}: each write at its block's offset, once")
    ok_rd = [e for e in rd if "errno" not in e["args"]]
    bad_rd = [e for e in rd if "errno" in e["args"]]
    want_rd = out["reads"] + out["readv"]
    got = sum(e["args"].get("bytes", 0) for e in ok_rd)
    check(len(ok_rd) == want_rd and got == out["read_bytes"] + out["readv_bytes"],
          f"{name}: {len(ok_rd)} aio_read, {got} B == the program's {want_rd}, "
          f"{out['read_bytes'] + out['readv_bytes']} B (preads and preadvs)")
    check(all(e["args"].get("requested") == bs for e in rd),
          f"{name}: every aio_read asked bs={bs} (a preadv's two iovecs summed)")
    check(len(bad_rd) == out["efault"] and all(e["args"].get("error") == "EFAULT" for e in bad_rd),
          f"{name}: {len(bad_rd)} aio_read failed EFAULT == the program's {out['efault']}")
    check(len(by["aio_fdsync"]) == out["fdsyncs"], f"{name}: {len(by['aio_fdsync'])} aio_fdsync")
    reqs = wr + rd + by["aio_fdsync"]
    check(reqs and all(on_lane(e) for e in reqs),
          f"{name}: the {len(reqs)} requests are on the process's async lanes")
    pid = reqs[0]["pid"] if reqs else None
    names = truth.thread_names(ev)
    lanes = sorted({names.get((e["pid"], e["tid"]), "") for e in reqs})
    check(lanes and all(n.startswith("async I/O lane ") for n in lanes), f"{name}: lanes named {lanes}")
    check(all(e["args"].get("tid") == pid for e in reqs), f"{name}: each names its submitter")
    # io_submit: one per batch, each a request's start; the requests it took
    subs = truth.vfs(ev, names={"io_submit"}, pid=pid)
    check(len(subs) == out["submits"], f"{name}: {len(subs)} io_submit == the program's {out['submits']}")
    taken = sum(e["args"].get("submitted", 0) for e in subs)
    check(taken == len(reqs), f"{name}: io_submit took {taken} iocbs == {len(reqs)} requests")
    starts = {e["ts"] for e in subs}
    check(all(e["ts"] in starts for e in reqs), f"{name}: each request starts at its io_submit")
    gets = truth.vfs(ev, names={"io_getevents"}, pid=pid)
    check(len(gets) == out["reaps"] and sum(e["args"].get("events", 0) for e in gets) == len(reqs),
          f"{name}: {len(gets)} io_getevents reaped {sum(e['args'].get('events', 0) for e in gets)} "
          f"== the program's {out['reaps']} calls, {len(reqs)} requests")
    ends = collections.Counter(round(e["ts"] + e["dur"], 3) for e in gets)
    check(all(any(abs(e["ts"] + e["dur"] - t) < 0.002 for t in ends) for e in reqs),
          f"{name}: each request ends when an io_getevents returned")
    if direct:
        # O_DIRECT: the disk moved exactly the program's bytes, each request
        # bound to the io_submit that issued it
        bound = collections.Counter()
        for r in blk:
            v = vfs_by_bind.get(r.get("bind_id")) if r.get("flow_in") else None
            if v is not None and v["name"] == "io_submit" and v["args"].get("path") == path:
                bound[r["args"].get("op")] += r["args"]["bytes"]
        check(bound["write"] == out["write_bytes"] and
              bound["read"] == out["read_bytes"] + out["readv_bytes"],
              f"{name}: block requests bound to its io_submits: {dict(bound)} == the program's bytes")
    row = next((f for f in report.get("files", []) if f.get("path") == path), None)
    check(row is not None, f"{name}: a row in the report")
    if row:
        check((row["read_bytes"], row["read_ops"], row["write_bytes"], row["write_ops"], row["syncs"],
               row["failed_ops"]) ==
              (out["read_bytes"] + out["readv_bytes"], want_rd + out["efault"], out["write_bytes"],
               out["writes"], out["fdsyncs"], out["efault"]),
              f"{name}: report read {row['read_bytes']} B / {row['read_ops']} ops, write "
              f"{row['write_bytes']} B / {row['write_ops']}, syncs {row['syncs']}, failed "
              f"{row['failed_ops']} == the program's")


def aio_prog(trace, report_json, d, bs, *files):
    """t_aio: aio_rw's FILES ("NAME:direct" or "NAME") in D, each with its
    output in D/NAME.out"""
    ev = truth.load(trace)
    inf = truth.info(ev)
    check = Checks()
    check(not inf.get("dropped"), f"trace dropped {inf.get('dropped')} events")
    report = load_json(report_json)
    vfs_by_bind = truth.flows_ok(ev)
    blk = truth.block(ev)
    for spec in files:
        name, _, mode = spec.partition(":")
        path = os.path.join(d, name)
        one_file(check, ev, path, parse_out(path + ".out"), int(bs), mode == "direct",
                 vfs_by_bind, blk, report)
    return check.status()


def fio_libaio(trace, fiojson, d):
    """t_aio: fio's libaio jobs, per job and file: the trace's aio_read /
    aio_write requests == fio's io_bytes and total_ios, every block once"""
    ev = truth.load(trace)
    fio = load_json(fiojson)
    check = Checks()
    byfile = collections.defaultdict(list)
    for e in truth.vfs(ev, names={"aio_read", "aio_write"}):
        p = e["args"].get("path", "")
        if p.startswith(d + "/"):
            byfile[os.path.basename(p)].append(e)
    for j in fio["jobs"]:
        job = j["jobname"]
        check(not j["error"], f"fio job {job} ran without error")
        rw = "read" if j["read"]["total_ios"] else "write"
        want = (j[rw]["io_bytes"], j[rw]["total_ios"])
        files = sorted(f for f in byfile if f.startswith(job + "."))
        io = [e for f in files for e in byfile[f]]
        call = "aio_" + rw
        check(io and all(e["name"] == call for e in io), f"{job}: its requests are all {call}")
        got = (sum(e["args"].get("bytes", 0) for e in io), len(io))
        check(got == want, f"{job}: {got[1]} requests, {got[0]} B in the trace == fio's {want[1]}, {want[0]} B")
        bs = j["job options"].get("bs")
        for f in files:
            size = os.path.getsize(os.path.join(d, f))
            blk_bs = int(bs[:-1]) * 1024 if bs and bs.endswith("k") else int(bs)
            offs = sorted(e["args"].get("offset", -1) for e in byfile[f])
            check(offs == list(range(0, size, blk_bs)), f"{f}: every {bs} block once")
        check(all(on_lane(e) for e in io), f"{job}: on async lanes")
        depth = max_overlap(io)
        check(depth > 1, f"{job}: requests in flight together (up to {depth}, iodepth "
              f"{j['job options'].get('iodepth')})")
    return check.status()


def max_overlap(evs):
    """the most requests of EVS in flight at one moment"""
    pts = sorted([(e["ts"], 1) for e in evs] + [(e["ts"] + e["dur"], -1) for e in evs],
                 key=lambda p: (p[0], p[1]))
    cur = best = 0
    for _, d in pts:
        cur += d
        best = max(best, cur)
    return best
