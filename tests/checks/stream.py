"""Perfetto protobuf files as written (t_export_memory, t_stream,
t_stream_rotate): framed whole, decodable under Perfetto's rules by
tests/pftrace.py, streamed, killed, rotated."""
import os

import pftrace as pf


def frames(path, n):
    """t_export_memory: the big protobuf frames whole: every packet, no partial
    tail, more than 2 x N packets (begin/end per call)"""
    raw = pf.read_raw(path)
    pkts, tail = pf.split_packets(raw)
    want = 2 * int(n)
    assert not tail, "%d bytes of a partial packet" % len(tail)
    assert len(pkts) > want, "%d packets for %d begin/end events" % (len(pkts), want)
    print("%d packets frame whole (%.1f bytes per call)" % (len(pkts), len(raw) / int(n)))


def killed(path):
    """t_stream: a stream killed mid-run decodes up to its last whole packet; its
    first 300,000 packets decode under Perfetto's rules with > 50,000 1-byte
    preads of the data file"""
    t = pf.load(path, limit=300000)
    sl = t.slices()
    preads = [s for s in sl if s["name"] == "pread64" and s["dur"] is not None and
              s["args"].get("path", "").endswith("/data")]
    assert not t.errors, t.errors[:5]
    assert t.packets > 300000, "only %d packets" % t.packets
    assert len(preads) > 50000, "only %d preads of the data file" % len(preads)
    assert all(s["args"].get("bytes") == 1 for s in preads), preads[0]["args"]
    print("killed stream: %d whole packets, %d bytes of a cut packet at the end; "
          "first 300000 decode (%d preads)" % (t.packets, len(t.tail), len(preads)))


def rotated_size(d, *files):
    """t_stream_rotate: the 3 newest size-rotated files (numbered in a row, not the
    first), each at most the limit plus one pump, each standing alone (clock
    snapshot, cleared state, its info), their preads in order without overlap"""
    nums = [int(f.split(".")[1]) for f in files]
    assert nums == list(range(nums[0], nums[0] + 3)) and nums[0] >= 2, nums
    prev_last = None
    for f in files:
        path = os.path.join(d, f)
        size = os.path.getsize(path)
        # a file is cut at the first pump past the limit: at most one pump more
        assert size < 400 * 1024 + 16 * 1024 * 1024, (f, size)
        t = pf.load(path)
        assert not t.errors, (f, t.errors[:5])
        assert t.first_flags & pf.SEQ_CLEARED and t.clock_snapshots, f
        assert 3 in t.clock_snapshots[0]["clocks"], f
        sl = [s for s in t.slices() if s["name"] == "pread64" and s["args"].get("path", "").endswith("/data")]
        info = [i for i in t.instants() if i["name"] == "gpuio trace info"]
        assert sl and info, (f, len(sl), len(info))
        first, last = min(s["ts"] for s in sl), max(s["ts"] for s in sl)
        if prev_last is not None:
            assert first > prev_last, (f, "overlaps the previous file")
        prev_last = last
        print("%s: %d bytes, %d packets, %d preads, info: %d vfs events so far" %
              (f, size, t.packets, len(sl), info[0]["args"]["vfs_events"]))


def rotated_time(d, period_s="1", anchor_ns=None, of="data"):
    """t_stream_rotate, t_node_load: every time-rotated t.NNNN.pftrace stands
    alone; >= 2 hold reads of the data file (OF "any": calls of any file);
    each holds its own window of the trace's time: file k starts at the
    capture's start (ANCHOR_NS, CLOCK_MONOTONIC) plus a whole number of
    periods, later files later, and no call in it starts at or after its
    window's end (one that began in the window before may end in it)"""
    period = int(float(period_s) * 1e9)
    files = sorted(f for f in os.listdir(d) if f.startswith("t.") and f.endswith(".pftrace"))
    with_reads = 0
    starts = []
    for f in files:
        t = pf.load(os.path.join(d, f))
        assert not t.errors, (f, t.errors[:5])
        assert t.first_flags & pf.SEQ_CLEARED and t.clock_snapshots, f
        start = t.clock_snapshots[0]["clocks"][pf.MONOTONIC]
        calls = [s for s in t.slices() if s["cat"] == "vfs"]
        reads = calls if of == "any" else [
            s for s in calls if s["name"] == "read" and s["args"].get("path", "").endswith("/data")]
        with_reads += bool(reads)
        late = [s for s in calls if s["ts"] >= start + period]
        print("  %s: window +%.3f s, %d calls, the last starting at +%.3f s of it" % (
            f, (start - int(anchor_ns)) / 1e9 if anchor_ns else 0, len(calls),
            (max(s["ts"] for s in calls) - start) / 1e9 if calls else 0))
        assert not late, "%s: %d calls start after its window (%s)" % (f, len(late), late[:2])
        if anchor_ns:
            assert (start - int(anchor_ns)) % period == 0, (f, start, anchor_ns)
        assert not starts or start > starts[-1], (f, start, starts)
        starts.append(start)
    print("time rotation: %d files, %d with reads of %s" % (
        len(files), with_reads, "any file" if of == "any" else "the data file"))
    assert with_reads >= 2, with_reads

