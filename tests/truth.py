#!/usr/bin/env python3
"""truth.py — read a gpuio Chrome-trace JSON the way the ground-truth tests
need it: VFS calls, block requests, names, per-file totals, and the trace
info's clock base. Independent of gpuio's own checker on purpose: totals are
computed here from the raw events and compared with what the workload (fio,
a test program) says it did.

Used as a module by tests/t_*.sh (sys.path insert of tests/) and as a CLI:

    truth.py files TRACE      per-path totals of the VFS events, JSON
    truth.py block TRACE      per-disk totals of the block requests, JSON
    truth.py info TRACE       the "gpuio trace info" args, JSON
"""
import gzip
import json
import sys

READ_CALLS = {"read", "pread64", "readv", "preadv", "preadv2", "io_uring_read", "aio_read"}
WRITE_CALLS = {"write", "pwrite64", "writev", "pwritev", "pwritev2", "io_uring_write", "aio_write"}
OPEN_CALLS = {"open", "openat", "openat2", "creat"}
INFO_NAME = "gpuio trace info"
DISK_PID_BASE = 0x40000000


class TruthError(Exception):
    pass


def load(path):
    """The event list of a .json or .json.gz trace (array form)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        ev = json.loads(data)
    except ValueError as e:
        raise TruthError(f"{path}: not valid JSON: {e}")
    if isinstance(ev, dict):
        ev = ev.get("traceEvents", [])
    if not isinstance(ev, list):
        raise TruthError(f"{path}: not a JSON array of events")
    return ev


def info(ev):
    """args of the trace info event (raises when missing)."""
    for e in ev:
        if e.get("name") == INFO_NAME:
            return e.get("args", {})
    raise TruthError("no 'gpuio trace info' event")


def vfs(ev, path=None, names=None, pid=None):
    """VFS slices (ph X, cat vfs), optionally only those of one path / call
    names / pid, in time order."""
    out = []
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") != "vfs":
            continue
        a = e.get("args", {})
        if path is not None and a.get("path") != path:
            continue
        if names is not None and e.get("name") not in names:
            continue
        if pid is not None and e.get("pid") != pid:
            continue
        out.append(e)
    out.sort(key=lambda e: e["ts"])
    return out


def process_names(ev):
    """{pid: name} from process_name metadata."""
    return {e["pid"]: e.get("args", {}).get("name", "")
            for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}


def thread_names(ev):
    """{(pid, tid): name} from thread_name metadata."""
    return {(e["pid"], e.get("tid")): e.get("args", {}).get("name", "")
            for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}


def disk_names(ev):
    """{pseudo pid: disk name} for the "disk NAME" processes."""
    out = {}
    for pid, name in process_names(ev).items():
        if pid >= DISK_PID_BASE and name.startswith("disk "):
            out[pid] = name[5:]
    return out


def block(ev, disk=None):
    """Block request slices (ph X, cat block), each with e['disk'] = the
    disk's name (from the pseudo-process name, or args.dev)."""
    disks = disk_names(ev)
    out = []
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") != "block":
            continue
        d = disks.get(e.get("pid")) or e.get("args", {}).get("dev")
        if disk is not None and d != disk:
            continue
        e = dict(e)
        e["disk"] = d
        out.append(e)
    out.sort(key=lambda e: e["ts"])
    return out


def file_totals(ev):
    """{path: {read_bytes, write_bytes, reads, writes, opens, calls}} over the
    VFS slices; failed calls count as calls but move no bytes."""
    t = {}
    for e in vfs(ev):
        a = e.get("args", {})
        p = a.get("path")
        if p is None:
            continue
        r = t.setdefault(p, {"read_bytes": 0, "write_bytes": 0, "reads": 0,
                             "writes": 0, "opens": 0, "calls": 0})
        r["calls"] += 1
        n = e.get("name")
        b = a.get("bytes", 0) if "errno" not in a else 0
        if n in READ_CALLS:
            r["reads"] += 1
            r["read_bytes"] += b
        elif n in WRITE_CALLS:
            r["writes"] += 1
            r["write_bytes"] += b
        elif n in OPEN_CALLS:
            r["opens"] += 1
    return t


def block_totals(ev):
    """{disk: {op: {"bytes", "ops"}}}"""
    t = {}
    for e in block(ev):
        op = e.get("args", {}).get("op", e.get("name"))
        r = t.setdefault(e["disk"], {}).setdefault(op, {"bytes": 0, "ops": 0})
        r["bytes"] += e.get("args", {}).get("bytes", 0)
        r["ops"] += 1
    return t


def to_mono_ns(inf, ts_us):
    """A trace ts (µs, 3 decimals, relative) back to CLOCK_MONOTONIC ns."""
    return int(inf.get("timeline_origin_ns", inf["monotonic_base_ns"])) + round(float(ts_us) * 1000)


def flows_ok(ev):
    """[(block slice, vfs slice)] pairs joined by bind_id (flow_in/flow_out)."""
    outs = {}
    for e in ev:
        if e.get("cat") == "vfs" and e.get("flow_out") and "bind_id" in e:
            outs[e["bind_id"]] = e
    return outs


def main(argv):
    if len(argv) != 3 or argv[1] not in ("files", "block", "info"):
        print(__doc__, file=sys.stderr)
        return 2
    ev = load(argv[2])
    if argv[1] == "files":
        out = file_totals(ev)
    elif argv[1] == "block":
        out = block_totals(ev)
    else:
        out = info(ev)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
