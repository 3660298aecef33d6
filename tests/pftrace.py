#!/usr/bin/env python3
"""pftrace.py - read gpuio's Perfetto protobuf traces with the standard library.

A small protobuf wire-format reader plus the parts of Perfetto's semantics
gpuio relies on, written from Perfetto's public protos (the field numbers are
those of user/proto/gpuio_trace.proto), independent of the C writer:

  - the file is a Trace: field 1 repeated, one TracePacket each; gzip is
    detected by magic; a partial packet at the end (a killed writer) is
    reported in Trace.tail, never parsed;
  - sequences: interned data (event names, categories, debug-annotation
    names, string values) is per trusted_packet_sequence_id, reset by
    SEQ_INCREMENTAL_STATE_CLEARED; a packet with SEQ_NEEDS_INCREMENTAL_STATE
    on a sequence never cleared, an unknown iid, or one iid bound to two
    strings is an error;
  - clocks: an event's clock is its timestamp_clock_id, else the sequence's
    trace_packet_defaults; it must be MONOTONIC (3) and a ClockSnapshot
    declaring MONOTONIC must come first (Perfetto drops events otherwise);
  - tracks come from TrackDescriptors; TrackEvents are sorted by timestamp
    (stable, like trace processor) and BEGIN/END pair per track as a stack;
  - flows: flow_ids start (or continue) a flow, terminating_flow_ids end it;
  - CPU samples: a sequence's ThreadDescriptor (pid, tid, reference time in
    µs) and StreamingProfilePackets (callstack iids, µs deltas on the
    sequence's time), their callstacks, frames, function names and mappings
    interned on that sequence; an unknown iid is an error.

usage: pftrace.py TRACE.pftrace[.gz]   print a summary, exit 1 on errors
       pftrace.py events TRACE         Chrome-style events (JSON) on stdout

Importable: load(path) -> Trace; Trace.slices(), .counters(), .instants(),
.flows(), .tracks, .samples; to_chrome(trace) -> Chrome-JSON-like event list.
"""
import gzip
import json
import struct
import sys
import zlib
from collections import defaultdict

MONOTONIC = 3
SEQ_CLEARED, SEQ_NEEDS = 1, 2
TYPE_BEGIN, TYPE_END, TYPE_INSTANT, TYPE_COUNTER = 1, 2, 3, 4


class Error(Exception):
    pass


def _varint(b, i):
    v = s = 0
    while True:
        if i >= len(b):
            raise Error("varint runs past the end")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        if c < 0x80:
            return v, i
        s += 7
        if s > 63:
            raise Error("varint longer than 10 bytes")


def fields(b):
    """(field, wire, value) of one message: ints for varint/fixed, bytes for LEN."""
    i, n = 0, len(b)
    while i < n:
        key, i = _varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = _varint(b, i)
        elif w == 1:
            if i + 8 > n:
                raise Error("fixed64 runs past the end")
            v = struct.unpack_from("<Q", b, i)[0]
            i += 8
        elif w == 2:
            ln, i = _varint(b, i)
            if i + ln > n:
                raise Error("field %d: length %d runs past the end" % (f, ln))
            v = bytes(b[i:i + ln])
            i += ln
        elif w == 5:
            if i + 4 > n:
                raise Error("fixed32 runs past the end")
            v = struct.unpack_from("<I", b, i)[0]
            i += 4
        else:
            raise Error("wire type %d" % w)
        yield f, w, v


def _int64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _double(v):
    return struct.unpack("<d", struct.pack("<Q", v))[0]


def read_raw(path):
    """The file's bytes, gunzipped when gzip (a cut gzip stream gives what it can)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(16 + 15)
        try:
            raw = d.decompress(raw)
        except zlib.error as e:
            raise Error("%s: bad gzip data: %s" % (path, e))
    return raw


def split_packets(raw):
    """([packet bytes], tail bytes): the whole Trace.packet fields and what is left."""
    out, i, n = [], 0, len(raw)
    while i < n:
        start = i
        try:
            key, i = _varint(raw, i)
            if key != (1 << 3 | 2):
                raise Error("byte %d: field %d wire %d, not Trace.packet" % (start, key >> 3, key & 7))
            ln, i = _varint(raw, i)
        except Error as e:
            if "past the end" in str(e):
                return out, raw[start:]
            raise
        if i + ln > n:
            return out, raw[start:]
        out.append(raw[i:i + ln])
        i += ln
    return out, b""


class Track:
    def __init__(self, uuid):
        self.uuid = uuid
        self.name = None
        self.parent = None
        self.pid = self.tid = None
        self.kind = "track"      # process, thread, track, counter
        self.unit = None
        self.child_ordering = None
        self.rank = None
        self.machine = 0         # TracePacket.machine_id of its descriptor


class Trace:
    def __init__(self):
        self.packets = 0
        self.tail = b""
        self.errors = []
        self.tracks = {}
        self.events = []         # dicts in file order
        self.clock_snapshots = []
        self.first_flags = None
        self.machines = {}       # machine id -> SystemInfo {"name", "release", ...}
        self.limited = False     # only the first packets were parsed
        self.samples = []        # CPU samples: {ts, pid, tid, frames}, frames
                                 # [(func, file, line)] innermost first

    # ---- derived views ----
    def group_of(self, t):
        """(group name, pid or None) of track t: its process, or its top-level track."""
        while t is not None:
            if t.kind == "process":
                return t.name, t.pid
            if t.kind == "thread":
                p = self._process_of_pid(t.pid, t.machine)
                return (p.name if p else None), t.pid
            if t.parent is None:
                return t.name, None
            t = self.tracks.get(t.parent)
        return None, None

    def _process_of_pid(self, pid, machine=0):
        for t in self.tracks.values():
            if t.kind == "process" and t.pid == pid and t.machine == machine:
                return t
        return None

    def track_key(self, uuid):
        """A name-based key of a track: ('thread', pid, tid) or (group, track name)."""
        t = self.tracks.get(uuid)
        if t is None:
            return ("?", uuid)
        if t.kind == "thread":
            return ("thread", t.pid, t.tid)
        g, pid = self.group_of(t)
        if t.kind == "process":
            return ("process", pid)
        return (g, pid, t.name)

    def _sorted(self):
        return sorted(self.events, key=lambda e: e["ts"])   # stable, like trace processor

    def slices(self):
        """Slices from BEGIN/END pairs: dicts with track, ts, dur, cat, name, args,
        flow_ids, terminating_flow_ids. Unmatched ENDs / open BEGINs go to errors."""
        stacks = defaultdict(list)
        out = []
        for e in self._sorted():
            if e["type"] == TYPE_BEGIN:
                s = dict(e)
                stacks[e["track"]].append(s)
                out.append(s)
            elif e["type"] == TYPE_END:
                st = stacks[e["track"]]
                if not st:
                    self.errors.append("END at %d on track %d with no open slice" % (e["ts"], e["track"]))
                    continue
                s = st.pop()
                s["dur"] = e["ts"] - s["ts"]
        for tr, st in stacks.items():
            for s in st:
                if not self.limited:
                    self.errors.append("slice %r at %d on track %d never ends" %
                                       (s["name"], s["ts"], tr))
                s["dur"] = None
        return out

    def instants(self):
        return [e for e in self._sorted() if e["type"] == TYPE_INSTANT]

    def counters(self):
        return [e for e in self._sorted() if e["type"] == TYPE_COUNTER]

    def flows(self, slices=None):
        """[(source slice, destination slice)] the way trace processor binds them."""
        active, out = {}, []
        for s in sorted(slices if slices is not None else self.slices(), key=lambda s: s["ts"]):
            for fid in s.get("flow_ids", []):
                if fid in active:
                    out.append((active[fid], s))
                active[fid] = s
            for fid in s.get("terminating_flow_ids", []):
                if fid in active:
                    out.append((active.pop(fid), s))
        return out


def _annotation(b, names, strings, where):
    name, value, dict_entries = None, None, None
    for f, w, v in fields(b):
        if f == 1:
            if v not in names:
                raise Error("%s: debug annotation name iid %d not interned" % (where, v))
            name = names[v]
        elif f == 10:
            name = v.decode("utf-8")
        elif f == 2:
            value = bool(v)
        elif f == 3:
            value = v
        elif f == 4:
            value = _int64(v)
        elif f == 5:
            value = _double(v)
        elif f == 6:
            value = v.decode("utf-8")
        elif f == 17:
            if v not in strings:
                raise Error("%s: string value iid %d not interned" % (where, v))
            value = strings[v]
        elif f == 11:
            dict_entries = dict_entries or {}
            k, val = _annotation(v, names, strings, where)
            dict_entries[k] = val
    if dict_entries is not None:
        value = dict_entries
    return name, value


def load(path, limit=None):
    """Parse the trace; with limit, only its first limit packets (all are
    still framed and counted: Trace.packets, Trace.tail)."""
    t = Trace()
    raw = read_raw(path)
    pkts, t.tail = split_packets(raw)
    t.packets = len(pkts)
    if limit is not None and limit < len(pkts):
        pkts = pkts[:limit]
        t.limited = True
    seqs = {}            # seq id -> {"cleared": bool, "clock": id, tables...}
    have_mono_snapshot = False
    for n, p in enumerate(pkts):
        where = "packet %d" % n
        ts = clock = seq_id = None
        flags = machine = 0
        te = td = cs = interned = defaults = sysinfo = thread = spp = None
        for f, w, v in fields(p):
            if f == 8:
                ts = v
            elif f == 58:
                clock = v
            elif f == 10:
                seq_id = v
            elif f == 13:
                flags = v
            elif f == 11:
                te = v
            elif f == 60:
                td = v
            elif f == 6:
                cs = v
            elif f == 12:
                interned = v
            elif f == 59:
                defaults = v
            elif f == 98:
                machine = v
            elif f == 45:
                sysinfo = v
            elif f == 44:
                thread = v
            elif f == 54:
                spp = v
        if n == 0:
            t.first_flags = flags
        if sysinfo is not None:
            si = t.machines.setdefault(machine, {})
            for f, w, v in fields(sysinfo):
                if f == 17:
                    si["name"] = v.decode("utf-8")
                elif f == 8:
                    si["num_cpus"] = v
                elif f == 1:
                    for f2, w2, v2 in fields(v):
                        key = {1: "sysname", 2: "version", 3: "release", 4: "arch"}.get(f2)
                        if key:
                            si[key] = v2.decode("utf-8")
        seq = seqs.setdefault(seq_id, {"cleared": False, "machine": machine})
        if seq.get("machine", machine) != machine:
            t.errors.append("%s: sequence %r on two machines" % (where, seq_id))
        if flags & SEQ_CLEARED:
            seq.clear()
            seq.update(cleared=True, names={}, cats={}, anames={}, strings={}, clock=None,
                       machine=machine)
        elif flags & SEQ_NEEDS and not seq["cleared"]:
            t.errors.append("%s: SEQ_NEEDS_INCREMENTAL_STATE before the sequence was cleared" % where)
            continue
        if defaults is not None:
            for f, w, v in fields(defaults):
                if f == 58:
                    seq["clock"] = v
        if interned is not None:
            if not seq["cleared"]:
                t.errors.append("%s: interned data on a sequence never cleared" % where)
            for f, w, v in fields(interned):
                table = {1: "cats", 2: "names", 3: "anames", 29: "strings"}.get(f)
                if not table:
                    continue
                iid, s = None, None
                for f2, w2, v2 in fields(v):
                    if f2 == 1:
                        iid = v2
                    elif f2 == 2:
                        s = v2.decode("utf-8")
                old = seq[table].get(iid)
                if old is not None and old != s:
                    t.errors.append("%s: iid %d of %s rebound from %r to %r" % (where, iid, table, old, s))
                seq[table][iid] = s
        if interned is not None or thread is not None or spp is not None:
            try:
                _profile(t, seq, interned, thread, spp)
            except Error as e:
                t.errors.append("%s: %s" % (where, e))
        if cs is not None:
            snap = {"clocks": {}, "primary": None, "ts": ts}
            for f, w, v in fields(cs):
                if f == 1:
                    cid = cts = None
                    for f2, w2, v2 in fields(v):
                        if f2 == 1:
                            cid = v2
                        elif f2 == 2:
                            cts = v2
                    snap["clocks"][cid] = cts
                elif f == 2:
                    snap["primary"] = v
            t.clock_snapshots.append(snap)
            if MONOTONIC in snap["clocks"]:
                have_mono_snapshot = True
        if td is not None:
            tr = None
            for f, w, v in fields(td):
                if f == 1:
                    tr = t.tracks.setdefault(v, Track(v))
            if tr is None:
                t.errors.append("%s: track descriptor without uuid" % where)
                continue
            tr.machine = machine
            for f, w, v in fields(td):
                if f == 2:
                    tr.name = v.decode("utf-8")
                elif f == 5:
                    tr.parent = v
                elif f == 11:
                    tr.child_ordering = v
                elif f == 12:
                    tr.rank = _int64(v)
                elif f == 3:
                    tr.kind = "process"
                    for f2, w2, v2 in fields(v):
                        if f2 == 1:
                            tr.pid = v2
                        elif f2 == 6:
                            tr.name = v2.decode("utf-8")
                elif f == 4:
                    tr.kind = "thread"
                    for f2, w2, v2 in fields(v):
                        if f2 == 1:
                            tr.pid = v2
                        elif f2 == 2:
                            tr.tid = v2
                        elif f2 == 5:
                            tr.name = v2.decode("utf-8")
                elif f == 8:
                    tr.kind = "counter"
                    for f2, w2, v2 in fields(v):
                        if f2 == 6:
                            tr.unit = v2.decode("utf-8")
        if te is not None:
            eclock = clock if clock is not None else seq.get("clock")
            if eclock != MONOTONIC:
                t.errors.append("%s: event clock %r is not MONOTONIC" % (where, eclock))
            if not have_mono_snapshot:
                t.errors.append("%s: event before any ClockSnapshot declaring MONOTONIC" % where)
            if ts is None:
                t.errors.append("%s: event without timestamp" % where)
                continue
            if not flags & SEQ_NEEDS:
                t.errors.append("%s: event without SEQ_NEEDS_INCREMENTAL_STATE" % where)
            ev = {"ts": ts, "type": None, "track": None, "cat": None, "name": None,
                  "args": {}, "flow_ids": [], "terminating_flow_ids": [], "value": None,
                  "packet": n}
            try:
                for f, w, v in fields(te):
                    if f == 9:
                        ev["type"] = v
                    elif f == 11:
                        ev["track"] = v
                    elif f == 3:
                        if v not in seq["cats"]:
                            raise Error("%s: category iid %d not interned" % (where, v))
                        ev["cat"] = seq["cats"][v]
                    elif f == 22:
                        ev["cat"] = v.decode("utf-8")
                    elif f == 10:
                        if v not in seq["names"]:
                            raise Error("%s: name iid %d not interned" % (where, v))
                        ev["name"] = seq["names"][v]
                    elif f == 23:
                        ev["name"] = v.decode("utf-8")
                    elif f == 44:
                        ev["value"] = _double(v)
                    elif f == 30:
                        ev["value"] = _int64(v)
                    elif f == 47:
                        ev["flow_ids"].append(v)
                    elif f == 48:
                        ev["terminating_flow_ids"].append(v)
                    elif f == 4:
                        k, val = _annotation(v, seq["anames"], seq["strings"], where)
                        ev["args"][k] = val
            except Error as e:
                t.errors.append(str(e))
                continue
            if ev["track"] not in t.tracks:
                t.errors.append("%s: track %r has no descriptor (yet)" % (where, ev["track"]))
            t.events.append(ev)
    if t.packets and not t.clock_snapshots:
        t.errors.append("no ClockSnapshot packet")
    if t.first_flags is not None and not t.first_flags & SEQ_CLEARED:
        t.errors.append("the first packet does not clear the incremental state")
    return t


def _ints(w, v):
    """A repeated integer field's values: one (varint) or packed (LEN)."""
    if w != 2:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def _profile_tables(seq, interned):
    """The CPU samples' interned tables of a sequence (InternedData 5, 6, 7, 17, 19)."""
    for f, w, v in fields(interned):
        if f not in (5, 6, 7, 17, 19):
            continue
        e = defaultdict(list)
        for f2, w2, v2 in fields(v):
            is_str = f in (5, 17) and f2 == 2       # InternedString.str
            e[f2].extend([v2] if is_str else _ints(w2, v2))
        iid = e[1][0] if e[1] else None
        table = seq.setdefault({5: "functions", 6: "frames", 7: "callstacks", 17: "paths",
                                19: "mappings"}[f], {})
        if f in (5, 17):
            table[iid] = e[2][0].decode("utf-8") if e[2] else ""
        elif f == 6:    # Frame {iid, function_name_id, mapping_id, rel_pc}
            table[iid] = (e[2][0] if e[2] else 0, e[3][0] if e[3] else 0, e[4][0] if e[4] else 0)
        elif f == 7:    # Callstack {iid, frame_ids outermost first}
            table[iid] = list(e[2])
        else:           # Mapping {iid, path_string_ids}
            table[iid] = list(e[7])


def _frames(seq, cs):
    """[(func, file, line)] innermost first of callstack iid cs on seq."""
    frames = seq.get("frames", {})
    if cs not in seq.get("callstacks", {}):
        raise Error("callstack iid %d not interned" % cs)
    out = []
    for fid in seq["callstacks"][cs]:
        if fid not in frames:
            raise Error("frame iid %d not interned" % fid)
        fn, mp, pc = frames[fid]
        if fn not in seq.get("functions", {}) or mp not in seq.get("mappings", {}):
            raise Error("frame %d: function %d or mapping %d not interned" % (fid, fn, mp))
        paths = [seq.get("paths", {}).get(i) for i in seq["mappings"][mp]]
        if None in paths:
            raise Error("mapping %d: a path iid not interned" % mp)
        out.append((seq["functions"][fn], "/".join(paths), pc))
    return out[::-1]


def _profile(t, seq, interned, thread, spp):
    """CPU samples: the sequence's tables, its ThreadDescriptor, its samples."""
    if interned is not None:
        _profile_tables(seq, interned)
    if thread is not None:
        d = {f: v for f, w, v in fields(thread)}
        seq["thread"] = (d.get(1), d.get(2))
        seq["time_us"] = _int64(d.get(6, 0))
    if spp is None:
        return
    if "thread" not in seq:
        raise Error("StreamingProfilePacket on a sequence without a ThreadDescriptor")
    stacks, deltas = [], []
    for f, w, v in fields(spp):
        if f == 1:
            stacks.extend(_ints(w, v))
        elif f == 2:
            deltas.extend(_int64(x) for x in _ints(w, v))
    if len(stacks) != len(deltas):
        raise Error("%d callstacks, %d timestamps" % (len(stacks), len(deltas)))
    for cs, d in zip(stacks, deltas):
        seq["time_us"] += d
        t.samples.append({"ts": seq["time_us"] * 1000, "pid": seq["thread"][0],
                          "tid": seq["thread"][1], "frames": _frames(seq, cs)})


def to_chrome(t):
    """Chrome-JSON-like events (X, C, i, M) with synthetic pid/tid for tracks
    that are not threads; flows as "_flow_out"/"_flow_in" id lists."""
    pids, tids, ev = {}, {}, []

    def ids(uuid):
        tr = t.tracks[uuid]
        if tr.kind == "thread":
            return tr.pid, tr.tid
        g, pid = t.group_of(tr)
        if pid is None:
            pid = pids.setdefault(g, 0x7f000000 + len(pids))
        return pid, tids.setdefault(uuid, 0x7e000000 + len(tids))

    for tr in t.tracks.values():
        g, pid = t.group_of(tr)
        if tr.kind == "process":
            ev.append({"name": "process_name", "ph": "M", "pid": tr.pid, "args": {"name": tr.name}})
        elif tr.kind in ("thread", "track") and (tr.parent is not None or tr.kind == "thread"):
            p, td = ids(tr.uuid)
            ev.append({"name": "thread_name", "ph": "M", "pid": p, "tid": td, "args": {"name": tr.name}})
            if tr.kind == "track" and pid is None:
                ev.append({"name": "process_name", "ph": "M", "pid": p, "args": {"name": g}})
        elif tr.kind == "track" and tr.parent is None:
            p = pids.setdefault(tr.name, 0x7f000000 + len(pids))
            ev.append({"name": "process_name", "ph": "M", "pid": p, "args": {"name": tr.name}})
    slices = t.slices()
    for s in slices:
        if s.get("dur") is None or s["track"] not in t.tracks:
            continue
        p, td = ids(s["track"])
        e = {"name": s["name"], "cat": s["cat"], "ph": "X", "ts": s["ts"] / 1000.0,
             "dur": s["dur"] / 1000.0, "pid": p, "tid": td, "args": s["args"]}
        if s["flow_ids"]:
            e["_flow_out"] = list(s["flow_ids"])
        if s["terminating_flow_ids"]:
            e["_flow_in"] = list(s["terminating_flow_ids"])
        ev.append(e)
    for c in t.counters():
        tr = t.tracks.get(c["track"])
        if tr is None:
            continue
        g, pid = t.group_of(tr)
        p = pids.setdefault(g, 0x7f000000 + len(pids)) if pid is None else pid
        ev.append({"name": tr.name, "cat": "counter", "ph": "C", "ts": c["ts"] / 1000.0, "pid": p,
                   "args": {"value": c["value"]}})
    for i in t.instants():
        p, td = ids(i["track"])
        ev.append({"name": i["name"], "cat": i["cat"], "ph": "i", "s": "g", "ts": i["ts"] / 1000.0,
                   "pid": p, "tid": td, "args": i["args"]})
    return ev


def main(argv):
    if len(argv) == 2:
        cmd, path = "summary", argv[1]
    elif len(argv) == 3 and argv[1] == "events":
        cmd, path = argv[1], argv[2]
    else:
        sys.stderr.write(__doc__.split("\n\n")[2] + "\n")
        return 2
    try:
        t = load(path)
    except (Error, OSError, UnicodeDecodeError) as e:
        print("pftrace: %s: %s" % (path, e), file=sys.stderr)
        return 1
    if cmd == "events":
        json.dump(to_chrome(t), sys.stdout)
        sys.stdout.write("\n")
    else:
        sl = t.slices()
        print("%s: %d packets, %d tracks, %d slices, %d counters, %d instants, %d flows, "
              "%d CPU samples, %d tail bytes" % (path, t.packets, len(t.tracks), len(sl),
                                                 len(t.counters()), len(t.instants()),
                                                 len(t.flows(sl)), len(t.samples), len(t.tail)))
    for e in t.errors[:25]:
        print("pftrace: %s: %s" % (path, e), file=sys.stderr)
    return 1 if t.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
