#!/usr/bin/env python3
"""check_trace.py - gpuio's own structural checker for its Chrome-trace JSON
(and, through tests/pftrace.py, for its Perfetto protobuf traces).

usage:
  check_trace.py TRACE.json[.gz]        check the trace: exit 0 ("OK ...") or 1
  check_trace.py TRACE.pftrace[.gz]     the same for a protobuf trace (first
                                        converted to the same event form)
  check_trace.py check TRACE            the same
  check_trace.py files TRACE            per-path totals from cat=vfs slices (JSON)
  check_trace.py block TRACE            per-disk totals from cat=block slices (JSON)
  check_trace.py info TRACE             the args of the "gpuio trace info" event (JSON)

What `check` rejects (each with a message naming the event):
  - a file that is not valid UTF-8, not JSON, or not the array form [ ... ];
    NaN/Infinity; any string (key or value) that is not valid Unicode
  - an event that is not an object, or has no string "name" / "ph"
  - a slice/instant/counter without a numeric ts; an X without dur >= 0
  - X slices on one (pid, tid) that partially overlap (they must nest)
  - block slices (cat "block") that overlap at all on one lane (pid, tid)
  - a bind_id with flow_in but no flow_out slice, flow_out but no flow_in,
    or several flow_out slices (v2 flows, on X slices only)
  - a counter (C) without cat, or with non-numeric args
  GPU (cat gpu, cuda_api, nvtx, cuda_sync, cupti_overhead):
  - gpu slices (kernels, copies, memsets) not on a "GPU N" process's lane,
    or overlapping at all on a lane (pid, tid), like block slices; nor may
    any slice on a lane named "GPU ..." (device-side syncs, overhead)
  - cuda_api / nvtx slices not on a thread of a real process
  - a flow that does not go vfs -> block or cuda_api -> gpu, or that goes
    from an API call to an activity that started before the call
  - a "GPU N busy" counter whose fraction is not within [0, 1]
  - a process with events but no process_name, a thread with slices but no
    thread_name, metadata without args.name / args.sort_index

`files` counts, per path (vfs slices): reads/writes = successful read-type /
write-type calls, read_bytes/write_bytes = their args.bytes; sendfile,
copy_file_range and splice count as a read of path and a write of path2;
opens, closes, syncs (fsync, fdatasync, sync_file_range), errors (calls with
errno), calls (all), cache_miss_pages.

Importable: load(path), check(events) -> [errors], file_totals(events),
block_totals(events), trace_info(events), ns(us_number).
Python 3 standard library only.
"""
import gzip
import json
import sys
from collections import defaultdict

READ_CALLS = {"read", "pread64", "readv", "preadv", "preadv2", "io_uring_read", "aio_read"}
WRITE_CALLS = {"write", "pwrite64", "writev", "pwritev", "pwritev2", "io_uring_write", "aio_write"}
OPEN_CALLS = {"open", "openat", "openat2", "creat"}
TWO_FILE_CALLS = {"sendfile", "copy_file_range", "splice"}
SYNC_CALLS = {"fsync", "fdatasync", "sync_file_range", "aio_fsync", "aio_fdsync"}
SLICE_PHASES = {"X", "B", "E"}
TS_PHASES = {"X", "B", "E", "i", "I", "C", "b", "e", "n", "s", "t", "f", "R"}
MAX_ERRORS = 25


class TraceError(Exception):
    """The file cannot be read as a trace at all."""


def ns(us):
    """µs (a JSON number with 3 decimals) -> integer ns, exactly."""
    return int(round(us * 1000))


def _no_constants(name):
    raise ValueError("%s is not JSON" % name)


def _load_pftrace(path):
    """A Perfetto protobuf trace as Chrome-style events (tests/pftrace.py)."""
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pftrace
    try:
        t = pftrace.load(path)
    except (pftrace.Error, UnicodeDecodeError) as e:
        raise TraceError("%s: not a readable Perfetto trace: %s" % (path, e))
    events = pftrace.to_chrome(t)
    if t.errors:
        raise TraceError("%s: %s" % (path, "; ".join(t.errors[:5])))
    return events


def load(path):
    """Read TRACE.json or TRACE.json.gz (gzip detected by magic), or a Perfetto
    protobuf trace (its first byte is the Trace.packet tag 0x0a); return the
    event list."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise TraceError("cannot read %s: %s" % (path, e.strerror))
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise TraceError("%s: bad gzip data: %s" % (path, e))
    if raw[:1] == b"\x0a":
        return _load_pftrace(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TraceError("%s: not valid UTF-8 at byte %d (%r)" %
                         (path, e.start, raw[e.start:e.start + 4]))
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except ValueError as e:
        raise TraceError("%s: invalid JSON: %s" % (path, e))
    if not isinstance(data, list):
        raise TraceError("%s: not the JSON array form (top level is %s)" %
                         (path, type(data).__name__))
    return data


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bad_strings(obj, where, out):
    """Strings that are not valid Unicode (lone surrogates from \\ud800 escapes)."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            out.append("%s: string is not valid UTF-8/Unicode: %r" % (where, obj[:60]))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _bad_strings(k, where, out)
            _bad_strings(v, where, out)
    elif isinstance(obj, list):
        for v in obj:
            _bad_strings(v, where, out)


def _desc(i, e):
    if isinstance(e, dict):
        return "event %d (%s %r pid=%s tid=%s ts=%s)" % (
            i, e.get("ph"), e.get("name"), e.get("pid"), e.get("tid"), e.get("ts"))
    return "event %d" % i


def check(events):
    """Return a list of problems (empty when the trace is well formed)."""
    errs = []
    slices = defaultdict(list)      # (pid, tid) -> [(start, end, i)]
    lanes = defaultdict(list)       # block slices by (pid, tid)
    flow_out = defaultdict(list)
    flow_in = defaultdict(list)
    pnames, tnames = {}, {}
    gpu_cats = {"gpu", "cuda_api", "nvtx", "cuda_sync", "cupti_overhead"}
    gslices = []                    # (i, pid, tid, cat)
    used_pids, used_threads = {}, {}

    for i, e in enumerate(events):
        if not isinstance(e, dict):
            errs.append("event %d is not an object" % i)
            continue
        _bad_strings(e, _desc(i, e), errs)
        name, ph = e.get("name"), e.get("ph")
        if not isinstance(name, str) or not name:
            errs.append("%s: no \"name\"" % _desc(i, e))
        if not isinstance(ph, str) or not ph:
            errs.append("%s: no \"ph\"" % _desc(i, e))
            continue
        pid, tid = e.get("pid"), e.get("tid", e.get("pid"))
        if ph == "M":
            args = e.get("args")
            if name in ("process_name", "thread_name"):
                if not isinstance(args, dict) or not isinstance(args.get("name"), str):
                    errs.append("%s: metadata without args.name" % _desc(i, e))
                elif name == "process_name":
                    pnames[pid] = args["name"]
                else:
                    tnames[(pid, tid)] = args["name"]
            elif name in ("process_sort_index", "thread_sort_index"):
                if not isinstance(args, dict) or not isinstance(args.get("sort_index"), int):
                    errs.append("%s: metadata without integer args.sort_index" % _desc(i, e))
            continue
        if ph in TS_PHASES and not _is_num(e.get("ts")):
            errs.append("%s: no numeric ts" % _desc(i, e))
            continue
        if ph == "i" and e.get("s", "t") == "g":
            pass
        elif pid is not None:
            used_pids.setdefault(pid, i)
        if ph == "X":
            dur = e.get("dur")
            if not _is_num(dur) or dur < 0:
                errs.append("%s: X without dur >= 0" % _desc(i, e))
                continue
            start = ns(e["ts"])
            end = start + ns(dur)
            slices[(pid, tid)].append((start, end, i))
            used_threads.setdefault((pid, tid), i)
            if e.get("cat") == "block":
                lanes[(pid, tid)].append((start, end, i))
            if e.get("cat") in gpu_cats:
                gslices.append((i, pid, tid, e.get("cat")))
        if ph == "C":
            if not isinstance(e.get("cat"), str) or not e.get("cat"):
                errs.append("%s: counter without cat" % _desc(i, e))
            args = e.get("args")
            if not isinstance(args, dict) or not args or \
                    not all(_is_num(v) for v in args.values()):
                errs.append("%s: counter args must be numbers" % _desc(i, e))
            elif e.get("cat") == "gpu" or str(name).endswith(" busy fraction"):
                if not all(0 <= v <= 1 for v in args.values()):
                    errs.append("%s: busy fraction outside [0, 1]" % _desc(i, e))
        # protobuf flows (pftrace.to_chrome): id lists, one source per id
        for fid in e.get("_flow_out", []):
            flow_out["pb:%d" % fid].append(i)
        for fid in e.get("_flow_in", []):
            flow_in["pb:%d" % fid].append(i)
        if "bind_id" in e or "flow_in" in e or "flow_out" in e:
            if ph not in SLICE_PHASES:
                errs.append("%s: flow fields on a non-slice event" % _desc(i, e))
            bid = e.get("bind_id")
            if bid is None:
                errs.append("%s: flow_in/flow_out without bind_id" % _desc(i, e))
                continue
            key = str(bid)
            if e.get("flow_out") is True:
                flow_out[key].append(i)
            if e.get("flow_in") is True:
                flow_in[key].append(i)
            if e.get("flow_out") is not True and e.get("flow_in") is not True:
                errs.append("%s: bind_id without flow_in/flow_out" % _desc(i, e))

    # X slices on one thread must nest: sorted by start (longest first), each
    # slice ends within every enclosing slice still open.
    for key, lst in slices.items():
        lst.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end, i in lst:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                errs.append("X slices overlap without nesting on pid=%s tid=%s: %s and %s" %
                            (key[0], key[1], _desc(stack[-1][2], events[stack[-1][2]]),
                             _desc(i, events[i])))
                continue
            stack.append((start, end, i))
    for key, lst in lanes.items():
        lst.sort()
        for (s0, e0, i0), (s1, e1, i1) in zip(lst, lst[1:]):
            if s1 < e0:
                errs.append("block slices overlap on lane pid=%s tid=%s: %s and %s" %
                            (key[0], key[1], _desc(i0, events[i0]), _desc(i1, events[i1])))
    # GPU: activities on GPU lanes that never overlap, API calls on threads,
    # arrows from an API call to activities that start no earlier
    def gpu_group(pid):
        n = pnames.get(pid) or ""
        return n.startswith("GPU ") or ": GPU " in n or n.endswith(" GPU ?")
    for i, pid, tid, cat in gslices:
        tname = tnames.get((pid, tid)) or ""
        on_gpu = gpu_group(pid) and tname.startswith("GPU ")
        if cat == "gpu" and not on_gpu:
            errs.append("%s: gpu slice not on a GPU lane (process %r, track %r)" %
                        (_desc(i, events[i]), pnames.get(pid), tname))
        elif cat in ("cuda_api", "nvtx") and gpu_group(pid):
            errs.append("%s: %s slice on a GPU's track, not a host thread" %
                        (_desc(i, events[i]), cat))
        if on_gpu:
            lanes[(pid, tid)].append((ns(events[i]["ts"]), ns(events[i]["ts"]) + ns(events[i]["dur"]), i))
    for key, lst in lanes.items():
        if not gpu_group(key[0]):
            continue
        lst.sort()
        for (s0, e0, i0), (s1, e1, i1) in zip(lst, lst[1:]):
            if s1 < e0:
                errs.append("GPU slices overlap on lane pid=%s tid=%s: %s and %s" %
                            (key[0], key[1], _desc(i0, events[i0]), _desc(i1, events[i1])))
    for bid, outs in flow_out.items():
        for o in outs[:1]:
            for d in flow_in.get(bid, []):
                pair = (events[o].get("cat"), events[d].get("cat"))
                if pair not in (("vfs", "block"), ("cuda_api", "gpu")):
                    errs.append("bind_id %s: a flow from a %s slice to a %s slice" % ((bid,) + pair))
                elif pair[0] == "cuda_api" and ns(events[d]["ts"]) < ns(events[o]["ts"]):
                    errs.append("bind_id %s: %s starts before its API call %s" %
                                (bid, _desc(d, events[d]), _desc(o, events[o])))
    for bid, ins in flow_in.items():
        if bid not in flow_out:
            errs.append("bind_id %s: flow_in on %s but no flow_out slice" %
                        (bid, _desc(ins[0], events[ins[0]])))
    for bid, outs in flow_out.items():
        if bid not in flow_in:
            errs.append("bind_id %s: flow_out on %s but no flow_in slice" %
                        (bid, _desc(outs[0], events[outs[0]])))
        if len(outs) > 1:
            errs.append("bind_id %s: %d flow_out slices (events %s)" %
                        (bid, len(outs), outs[:5]))
    for pid, i in used_pids.items():
        if pid not in pnames:
            errs.append("pid %s has events (first: %s) but no process_name" %
                        (pid, _desc(i, events[i])))
    for (pid, tid), i in used_threads.items():
        if (pid, tid) not in tnames:
            errs.append("pid %s tid %s has slices (first: %s) but no thread_name" %
                        (pid, tid, _desc(i, events[i])))
    return errs


def _vfs_slices(events):
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") == "vfs":
            yield e, e.get("args") or {}


def file_totals(events):
    """{path: {read_bytes, write_bytes, reads, writes, opens, closes, syncs, errors,
    calls, cache_miss_pages}} from the vfs slices."""
    tot = {}

    def ent(path):
        if path not in tot:
            tot[path] = {"read_bytes": 0, "write_bytes": 0, "reads": 0, "writes": 0,
                         "opens": 0, "closes": 0, "syncs": 0, "errors": 0, "calls": 0,
                         "cache_miss_pages": 0}
        return tot[path]

    for e, a in _vfs_slices(events):
        name = e.get("name")
        path = a.get("path")
        failed = "errno" in a
        nbytes = a.get("bytes", 0) if not failed else 0
        if path is not None:
            t = ent(path)
            t["calls"] += 1
            t["cache_miss_pages"] += a.get("cache_miss_pages", 0)
            if failed:
                t["errors"] += 1
            if name in READ_CALLS or name in TWO_FILE_CALLS:
                if not failed:
                    t["reads"] += 1
                    t["read_bytes"] += nbytes
            elif name in WRITE_CALLS:
                if not failed:
                    t["writes"] += 1
                    t["write_bytes"] += nbytes
            elif name in OPEN_CALLS:
                t["opens"] += 1
            elif name == "close":
                t["closes"] += 1
            elif name in SYNC_CALLS:
                t["syncs"] += 1
        if name in TWO_FILE_CALLS and a.get("path2") is not None:
            t2 = ent(a["path2"])
            t2["calls"] += 1
            if failed:
                t2["errors"] += 1
            else:
                t2["writes"] += 1
                t2["write_bytes"] += nbytes
    return tot


def block_totals(events):
    """{disk: {read_bytes, write_bytes, reads, writes, flushes, discards,
    discard_bytes, others, errors}} from the block slices (keyed by args.dev)."""
    tot = {}
    for e in events:
        if not (isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") == "block"):
            continue
        a = e.get("args") or {}
        dev = a.get("dev", "?")
        t = tot.setdefault(dev, {"read_bytes": 0, "write_bytes": 0, "reads": 0, "writes": 0,
                                 "flushes": 0, "discards": 0, "discard_bytes": 0,
                                 "others": 0, "errors": 0})
        op, nbytes = a.get("op", e.get("name")), a.get("bytes", 0)
        if op == "read":
            t["reads"] += 1
            t["read_bytes"] += nbytes
        elif op == "write":
            t["writes"] += 1
            t["write_bytes"] += nbytes
        elif op == "flush":
            t["flushes"] += 1
        elif op == "discard":
            t["discards"] += 1
            t["discard_bytes"] += nbytes
        else:
            t["others"] += 1
        if a.get("error"):
            t["errors"] += 1
    return tot


def trace_info(events):
    """The args of the "gpuio trace info" event, or None."""
    for e in events:
        if isinstance(e, dict) and e.get("name") == "gpuio trace info":
            return e.get("args")
    return None


def _summary(events):
    n = {"X": 0, "C": 0, "M": 0}
    flows = 0
    for e in events:
        if isinstance(e, dict):
            n[e.get("ph")] = n.get(e.get("ph"), 0) + 1
            if e.get("flow_out") is True:
                flows += 1
    return "%d events (%d slices, %d counters, %d metadata, %d flow sources)" % (
        len(events), n["X"], n["C"], n["M"], flows)


def main(argv):
    cmds = ("check", "files", "block", "info")
    if len(argv) == 2 and argv[1] not in ("-h", "--help"):
        cmd, path = "check", argv[1]
    elif len(argv) == 3 and argv[1] in cmds:
        cmd, path = argv[1], argv[2]
    else:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 0 if len(argv) == 2 else 2
    try:
        events = load(path)
    except TraceError as e:
        print("check_trace: %s" % e, file=sys.stderr)
        return 1
    if cmd == "check":
        errs = check(events)
        if errs:
            for msg in errs[:MAX_ERRORS]:
                print("check_trace: %s: %s" % (path, msg), file=sys.stderr)
            if len(errs) > MAX_ERRORS:
                print("check_trace: ... and %d more" % (len(errs) - MAX_ERRORS),
                      file=sys.stderr)
            print("check_trace: %s: %d problem(s)" % (path, len(errs)), file=sys.stderr)
            return 1
        print("OK: %s: %s" % (path, _summary(events)))
        return 0
    if cmd == "files":
        out = file_totals(events)
    elif cmd == "block":
        out = block_totals(events)
    else:
        out = trace_info(events)
        if out is None:
            print("check_trace: %s: no \"gpuio trace info\" event" % path, file=sys.stderr)
            return 1
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BrokenPipeError:     # `check_trace.py files T | head`
        sys.exit(0)
