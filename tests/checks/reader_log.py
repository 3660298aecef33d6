"""The traces of build/tests/attach_reader against its own log (t_attach,
t_signals, t_timestamps).

attach_reader preads 512 bytes at offset seq*512 and logs, per read,
"seq t_before t_after offset bytes" (CLOCK_MONOTONIC ns around the call).
That log is the ground truth: parse_log reads it, logged_within picks the
reads a window of time must hold, is_run says whether traced sequence
numbers are one contiguous run.
"""
import os
import sys
import time

import truth
from checks.common import Checks


def parse_log(path):
    """[(seq, t_before, t_after, offset, bytes)] in the log's order"""
    with open(path) as f:
        return [tuple(map(int, line.split())) for line in f]


def logged_within(log, start_ns, span_ns):
    """seqs of the logged reads that began at or after start_ns and returned
    by start_ns + span_ns, in log order"""
    return [s for s, t0, t1, _, _ in log if t0 >= start_ns and t1 <= start_ns + span_ns]


def is_run(seqs):
    """seqs are consecutive integers (an empty list is not a run)"""
    return bool(seqs) and seqs == list(range(seqs[0], seqs[0] + len(seqs)))


def wait_mono(path, text, tries="2000", step="0.005"):
    """Print CLOCK_MONOTONIC (ns, Python's time.monotonic_ns) at the moment PATH
    first holds TEXT, polled every STEP s at most TRIES times; print 0 if it
    never does."""
    for _ in range(int(tries)):
        try:
            with open(path) as f:
                if text in f.read():
                    print(time.monotonic_ns())
                    return 0
        except FileNotFoundError:
            pass
        time.sleep(float(step))
    print(0)
    return 0


def attach_mid_run(trace, logf, data, pid, n_before, t_tracing):
    """t_attach A: gpuio -p attached to a reader mid-run"""
    pid, n_before, t_tracing = int(pid), int(n_before), int(t_tracing)
    ev = truth.load(trace)
    inf = truth.info(ev)
    log = {s: (t0, t1, off, r) for s, t0, t1, off, r in parse_log(logf)}
    check = Checks()
    path = os.path.realpath(data)
    reads = truth.vfs(ev, names={"pread64"}, pid=pid)
    named = [e for e in reads if e["args"].get("path") == path]
    check(reads and len(named) == len(reads),
          f"{len(reads)} preads by pid {pid}, {len(named)} named {path} "
          f"(others: {sorted({e['args'].get('path') for e in reads} - {path})})")
    seqs = [e["args"].get("offset", -1) // 512 for e in named]
    check(is_run(seqs),
          f"reads are a contiguous run of the sequence: {seqs[:1]}..{seqs[-1:]} ({len(seqs)})")
    check(seqs and seqs[0] >= n_before, f"first traced read #{seqs[0] if seqs else None} is after the "
          f"{n_before} reads done before gpuio started")
    want = logged_within([(s,) + v for s, v in log.items()], t_tracing, 1_500_000_000)
    missing = sorted(set(want) - set(seqs))
    check(len(want) > 500 and not missing,
          f"all {len(want)} reads logged in the first 1.5 s after 'tracing' are traced (missing {missing[:5]})")
    check(all(e["args"].get("bytes") == 512 and e["args"].get("requested") == 512 for e in named),
          "every read is 512 bytes")
    outside = 0
    for e, s in zip(named, seqs):
        t0, t1, off, r = log[s]
        a, b = truth.to_mono_ns(inf, e["ts"]), truth.to_mono_ns(inf, e["ts"] + e["dur"])
        outside += not (t0 - 1000 <= a and b <= t1 + 1000)
    check(outside == 0, f"each read's slice lies inside its logged window ({outside} outside)")
    logpath = os.path.realpath(logf)
    w = truth.vfs(ev, names={"write"}, pid=pid)
    check(w and all(e["args"].get("path") == logpath for e in w),
          f"the log (opened before the attach) is named {logpath}: {sorted({e['args'].get('path') for e in w})}")
    return check.status()


def attach_target_exit(trace, data, pid):
    """t_attach B: the target exits while traced: its reads up to its last (#299)"""
    ev = truth.load(trace)
    inf = truth.info(ev)
    seqs = [e["args"].get("offset") // 512
            for e in truth.vfs(ev, path=os.path.realpath(data), names={"pread64"}, pid=int(pid))]
    ok = seqs and seqs == list(range(seqs[0], 300)) and inf.get("capture_complete") is True
    print(f"{'ok  ' if ok else 'FAIL'} traced reads #{seqs[:1]}..#{seqs[-1:]} end at the last read (#299); "
          f"capture_complete={inf.get('capture_complete')}")
    return 0 if ok else 1


def attach_child(trace, data, pid):
    """t_attach C: a child that existed before the attach is traced (>= 100 reads in 1 s)"""
    ev = truth.load(trace)
    n = len(truth.vfs(ev, path=os.path.realpath(data), names={"pread64"}, pid=int(pid)))
    print(f"{'ok  ' if n >= 100 else 'FAIL'} {n} reads by the target's child {pid} (>= 100 in 1 s)")
    return 0 if n >= 100 else 1


def has_reads(trace, n, data):
    """t_signals: >= N preads of the data file, capture_complete"""
    ev = truth.load(trace)
    inf = truth.info(ev)
    r = truth.vfs(ev, path=os.path.realpath(data), names={"pread64"})
    ok = len(r) >= int(n) and inf.get("capture_complete") is True
    print(f"{'ok  ' if ok else 'FAIL'} {trace}: {len(r)} reads (want >= {n}), capture_complete={inf.get('capture_complete')}")
    return 0 if ok else 1


def killed_capture(trace, logf, data, t0):
    """t_signals SIGKILL: the capture holds every read logged in the first
    second after T0 (gpuio said it was tracing), and is not complete"""
    t0 = int(t0)
    ev = truth.load(trace)
    inf = truth.info(ev)
    got = {e["args"].get("offset") // 512 for e in truth.vfs(ev, path=os.path.realpath(data), names={"pread64"})}
    want = set(logged_within(parse_log(logf), t0, 1_000_000_000))
    missing = sorted(want - got)
    print(f"     capture_complete={inf.get('capture_complete')} (a killed capture is not complete)")
    ok = len(want) >= 100 and not missing and inf.get("capture_complete") is not True
    print(f"{'ok  ' if ok else 'FAIL'} {len(got)} reads in the killed capture; {len(want)} logged in the first "
          f"second of tracing, {len(missing)} of them missing {missing[:5]}")
    return 0 if ok else 1


def timestamps(trace, logf, data, other):
    """t_timestamps: each read's slice inside its logged CLOCK_MONOTONIC window,
    in log order; block requests on the reader are reads of its own files,
    submitted during the read they are joined to"""
    other_ino = os.stat(other).st_ino
    ev = truth.load(trace)
    inf = truth.info(ev)
    log = parse_log(logf)
    reads = truth.vfs(ev, path=os.path.realpath(data), names={"pread64"})
    check = Checks()
    check(len(reads) == len(log) == 200, f"{len(reads)} reads traced, {len(log)} logged")
    check([e["args"].get("offset") for e in reads] == [l[3] for l in log], "same reads, same order (offsets)")
    outside = []
    for e, (seq, t0, t1, off, r) in zip(reads, log):
        a = truth.to_mono_ns(inf, e["ts"])
        b = truth.to_mono_ns(inf, e["ts"] + e["dur"])
        if not (t0 <= a <= b <= t1):
            outside.append((seq, a - t0, t1 - b))
    check(not outside, f"every slice inside its CLOCK_MONOTONIC window "
          f"(outside: {outside[:5]} as (seq, start-t0 ns, t1-end ns))")
    print(f"     {sum(1 for e in reads if e['dur'] > 20)} reads took > 20 µs (cold)")

    rpid = reads[0]["pid"] if reads else None
    by_bind = {e.get("bind_id"): (e, l) for e, l in zip(reads, log) if e.get("flow_out")}
    mine = [b for b in truth.block(ev) if b["args"].get("pid") == rpid]
    check(any(b.get("bind_id") in by_bind for b in mine), f"{len(mine)} block requests on the reader's pid, "
          f"some joined to its reads (cold file)")
    wrong = []
    for b in mine:
        a = b["args"]
        p = str(a.get("path"))
        if b["name"] != "read" or p == os.path.realpath(other) or p.endswith(f",ino={other_ino}"):
            wrong.append(f"{b['name']} {a.get('flags')} {a.get('bytes')} B path={p}: attributed to the "
                         "reader, which only reads its own file (the test's untraced write?)")
            continue
        if b.get("bind_id") not in by_bind or not b.get("flow_in"):
            continue    # a page-fault read (its binary, libraries): no call to join
        e, (seq, t0, t1, off, r) = by_bind[b["bind_id"]]
        s = truth.to_mono_ns(inf, b["ts"])
        if b["name"] != "read" or not t0 <= s <= t1:
            wrong.append(f"{b['name']} {a.get('flags')} {a.get('bytes')} B path={a.get('path')} joined to read "
                         f"#{seq} but submitted {(s - t1) / 1e6:.3f} ms after it returned")
    check(not wrong, "every block request on the reader is a read of its own files, submitted during the "
          f"read it is joined to ({len(wrong)} not):" + "".join("\n       " + w for w in wrong[:6]))
    return check.status()
