"""The traces of build/tests/batch_reader against what it did (t_batch).

batch_reader, once signalled, preads FILE N times, read i at offset
(i % B) * 4096 (B = FILE's whole 4 KiB blocks), writes one line
"done N t_first t_last" to LOG, then holds (sleeps or spins) and exits.
So its traced file calls are exactly those N preads and one write: the
ground truth every check here compares with.
"""
import json
import os
from collections import Counter

import truth
from checks.common import Checks


def expected_offsets(n, size):
    """Counter of the offsets batch_reader's N preads of a SIZE-byte file use"""
    blocks = size // 4096
    return Counter((i % blocks) * 4096 for i in range(n))


def reads_match(reads, n, size):
    """(ok, why): the traced preads are exactly batch_reader's N, each once"""
    got = Counter(e["args"].get("offset", -1) for e in reads)
    want = expected_offsets(n, size)
    if got == want:
        return True, f"{len(reads)} preads, the offsets of all {n} exactly"
    missing = sum((want - got).values())
    extra = sum((got - want).values())
    return False, f"{len(reads)} preads for {n} done: {missing} missing, {extra} not done"


def _log(logf):
    with open(logf) as f:
        parts = f.read().split()
    if len(parts) != 4 or parts[0] != "done":
        raise SystemExit(f"{logf}: not batch_reader's 'done N t0 t1' line: {parts}")
    return int(parts[1]), int(parts[2]), int(parts[3])


def _preads(ev, pid, data):
    return truth.vfs(ev, path=os.path.realpath(data), names={"pread64"}, pid=pid)


def all_reads(trace, logf, data, pid, what):
    """the trace (maybe of a capture copied mid-trace) holds every one of the
    reads the log says were done, with their offsets, and the log's write;
    each read inside the program's own [t_first, t_last]"""
    n, t0, t1 = _log(logf)
    pid = int(pid)
    ev = truth.load(trace)
    inf = truth.info(ev)
    check = Checks(what + ": ")
    reads = _preads(ev, pid, data)
    ok, why = reads_match(reads, n, os.path.getsize(data))
    check(ok, why)
    writes = truth.vfs(ev, path=os.path.realpath(logf), names={"write"}, pid=pid)
    check(len(writes) == 1 and writes[0]["args"].get("bytes") == os.path.getsize(logf),
          f"the log's one write is there ({len(writes)} writes)")
    outside = sum(1 for e in reads
                  if not (t0 - 1000 <= truth.to_mono_ns(inf, e["ts"]) and
                          truth.to_mono_ns(inf, e["ts"] + e["dur"]) <= t1 + 1000))
    check(reads and outside == 0, f"every read inside the program's own span ({outside} outside)")
    return check.status()


def ring_full(trace, info_json, logf, data, pid):
    """with the ring buffer full part of the time: the reads kept and the VFS
    records counted lost add up to the calls done, exactly; some were lost;
    the kept ones are reads the program did, each at most once"""
    n, _, _ = _log(logf)
    pid = int(pid)
    ev = truth.load(trace)
    with open(info_json) as f:
        inf = json.load(f)
    check = Checks("ring full: ")
    lost = inf["stats"]["drops"]["rb_drop_vfs"]
    check(inf["stats"]["final"], "the capture has its final counters")
    reads = _preads(ev, pid, data)
    writes = truth.vfs(ev, path=os.path.realpath(logf), names={"write"}, pid=pid)
    # (a page fault that waited is a VFS record of its own kind: not a call)
    others = [e for e in truth.vfs(ev, pid=pid)
              if e not in reads and e not in writes and e["name"] != "page_fault"]
    kept = len(reads) + len(writes)
    check(lost > 0, f"the ring buffer overflowed: {lost} VFS records counted lost")
    check(not others, f"no other file calls by the program ({len(others)})")
    check(kept + lost == n + 1,
          f"kept {kept} + lost {lost} = {kept + lost}, the program's {n} preads + 1 write = {n + 1}")
    extra = Counter(e["args"].get("offset", -1) for e in reads) - \
        expected_offsets(n, os.path.getsize(data))
    check(not extra, f"every kept read is one the program did ({sum(extra.values())} not)")
    return check.status()
