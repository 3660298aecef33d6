#!/usr/bin/env python3
"""compare_exports.py - do a JSON export and a Perfetto protobuf export of the
same capture carry the same trace, event for event?

usage: compare_exports.py [--stream|--machines] TRACE.json[.gz] TRACE.pftrace[.gz]

--stream: the protobuf was written live (gpuio trace --stream): disk lanes
are compared as "a lane of this disk" (the stream assigns them as requests
complete), counters are not compared (100 ms buckets there), its flows must
be a subset of the JSON's, the info's throughput_bucket_us may differ, and
the report's findings (steps and GPU idle-gap tracks) are left out: a live
stream has none, `gpuio convert` of its capture draws them.

--machines: a `gpuio merge` of several hosts: the protobuf has one Perfetto
machine per host with the hosts' own pids and names, the JSON moves host i's
pids by (i + 1) * 10,000,000 and prefixes its names with "HOST: " (or
"HOST#i: " when two hosts share a name). The protobuf is put in the JSON's
form (pids, tids and pid/tid args moved, names prefixed, machine_id info
arg as pid_offset) before the comparison.

Both are reduced to one canonical, name-based form and compared as multisets
(exit 0 and a one-line summary, or 1 and the first differences):

  tracks    processes (pid, name), threads (pid, tid, name), other tracks
            (group, name): disk lanes, io_uring lanes
  slices    (group, track, cat, name, ts, dur, args) - ts/dur in integer ns
            relative to the "gpuio trace info" instant of the first
            capture (host_index 0); JSON
            nulls are dropped (protobuf has none); µs values compare exactly
            (both sides are the nearest double to ns / 1000)
  flows     (source slice, destination slice) pairs: JSON v2 bind_id
            flow_out -> flow_in, protobuf flow_ids -> terminating_flow_ids
            as trace processor binds them
  counters  (group, counter track name, ts, value): a JSON "C" event's arg K
            is Perfetto's track "NAME K"
  instants  (group, name, ts, args)

A group is a process (pid and name) or, for tracks that are not a process's
(disks, the gpuio info track), the top-level name.

Thread states are not alike by design: the JSON draws them as slices (cat
"sched") on a lane per thread ("NAME TID · state"), the protobuf holds the raw
switches and wake-ups as ftrace sched events from which Perfetto derives its
thread_state table. So they are compared through Perfetto's importer
(../shared/tools/trace_processor_shell, or $TRACE_PROCESSOR): every JSON state
slice is a thread_state row of the protobuf with the same tid, state, ts and
dur (the JSON's slice is shorter than the state by 1 ns, or a few ns far
from the origin: json_sink.c state_dur; up to GAP_MAX is accepted; a row
Perfetto leaves open at the end matches on tid, state and ts), and the other
way round for the states the JSON draws (Running, R, R+, S, D, I, P, T, t). A merge
compares the count per state.
"""
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_trace as ct  # noqa: E402
import pftrace as pf      # noqa: E402
import tp_check as tpc    # noqa: E402

REAL_MAX = 0x20000000     # pids/tids at or above this are gpuio's synthetic ones
STATE_TID = 0x10000000    # a thread's state lane in the JSON: this + its tid
# Perfetto's "I" (TASK_IDLE: an idle kernel thread, D without load), "P"
# (parked kthread), "T" and "t" (stopped, traced) are drawn as Sleeping
# (model/sched_tab.c sched_state_after_switch); dead tasks (X, Z) have no state
PERFETTO_STATE = {"Running": "Running", "R": "Runnable", "R+": "Runnable (Preempted)",
                  "S": "Sleeping", "D": "Uninterruptible Sleep", "I": "Sleeping",
                  "P": "Sleeping", "T": "Sleeping", "t": "Sleeping"}


def freeze(v):
    if isinstance(v, dict):
        return tuple(sorted((k, freeze(x)) for k, x in v.items() if x is not None))
    if isinstance(v, list):
        return tuple(freeze(x) for x in v)
    if isinstance(v, bool):
        return ("bool", v)
    # ints stay exact (realtime ns need 61 bits); 8 == 8.0 compares equal
    return v


def streamish(c):
    """Forget what a live stream lays out differently (see --stream)."""
    def lane(track):
        if isinstance(track, tuple) and track and track[0] == "group" and \
                isinstance(track[-1], str) and track[-1].startswith("lane "):
            return track[:-1] + ("lane",)
        return track

    def info(args):
        return tuple(kv for kv in args if kv[0] != "throughput_bucket_us")

    def finding(track):
        return isinstance(track, tuple) and track and isinstance(track[-1], str) and \
            track[-1].startswith(("steps · ", "idle gaps · "))

    out = {"tracks": Counter(), "slices": Counter(), "flows": Counter(),
           "counters": Counter(), "instants": Counter()}
    for k, n in c["tracks"].items():
        out["tracks"][lane(k)] += 0 if lane(k) != k or finding(k) else n
    for k, n in c["slices"].items():
        if k[1] not in ("gpuio_step", "gpuio_gap"):
            out["slices"][(lane(k[0]),) + k[1:]] += n
    for (a, b), n in c["flows"].items():
        out["flows"][((lane(a[0]),) + a[1:], (lane(b[0]),) + b[1:])] += n
    for k, n in c["instants"].items():
        out["instants"][k[:3] + (info(k[3]),)] += n
    out["tracks"] = +out["tracks"]
    return out


def canon_json(events):
    pname, tname = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            pname[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            tname[(e["pid"], e["tid"])] = e["args"]["name"]

    def group(pid):
        if pid < REAL_MAX:
            return ("proc", pid, pname.get(pid))
        return ("group", pname.get(pid))

    def track(pid, tid):
        if pid < REAL_MAX and tid < REAL_MAX:
            return ("thread", pid, tid, tname.get((pid, tid)))
        return group(pid) + (tname.get((pid, tid)),)

    out = {"tracks": Counter(), "slices": Counter(), "flows": Counter(),
           "counters": Counter(), "instants": Counter()}
    for pid, n in pname.items():
        if pid < REAL_MAX:
            out["tracks"][("process", pid, n)] += 1
    for (pid, tid), n in tname.items():
        if STATE_TID <= tid < REAL_MAX:
            continue                    # state lanes: compared through Perfetto below
        out["tracks"][track(pid, tid)] += 1
    # times relative to the (first) "gpuio trace info" instant, the trace start
    infos = [e for e in events if e.get("name") == "gpuio trace info"]
    infos.sort(key=lambda e: e.get("args", {}).get("host_index", 0))
    zero = ct.ns(infos[0]["ts"]) if infos else 0
    fout, fin = {}, {}
    origin = infos[0]["args"].get("timeline_origin_ns", 0) if infos else 0
    out["states"] = []
    for e in events:
        ph = e.get("ph")
        if ph == "X" and e.get("cat") == "sched":
            d = ct.ns(e["dur"])
            out["states"].append((e["args"]["tid"], e["name"], ct.ns(e["ts"]) + origin, d))
            continue
        if ph == "X":
            key = (track(e["pid"], e["tid"]), e.get("cat"), e["name"], ct.ns(e["ts"]) - zero,
                   ct.ns(e["dur"]), freeze(e.get("args", {})))
            out["slices"][key] += 1
            sk = key[:4]
            if e.get("flow_out") is True:
                fout[e["bind_id"]] = sk
            if e.get("flow_in") is True:
                fin.setdefault(e["bind_id"], []).append(sk)
        elif ph == "C":
            for k, v in e["args"].items():
                out["counters"][(group(e["pid"]), "%s %s" % (e["name"], k), ct.ns(e["ts"]) - zero,
                                 freeze(v))] += 1
        elif ph == "i":
            out["instants"][(group(e["pid"]), e["name"], ct.ns(e["ts"]) - zero,
                             freeze(e.get("args", {})))] += 1
    for bid, dests in fin.items():
        for d in dests:
            if bid in fout:
                out["flows"][(fout[bid], d)] += 1
    return out


def canon_pftrace(t):
    info = [i for i in t.instants() if i["name"] == "gpuio trace info"]
    if not info:
        raise SystemExit("compare_exports: no \"gpuio trace info\" instant in the protobuf")
    info.sort(key=lambda i: i["args"].get("host_index", 0))
    zero = info[0]["ts"]

    def group(tr):
        g, pid = t.group_of(tr)
        if pid is not None:
            return ("proc", pid, t._process_of_pid(pid).name if t._process_of_pid(pid) else None)
        return ("group", g)

    def track(uuid):
        tr = t.tracks[uuid]
        if tr.kind == "thread":
            return ("thread", tr.pid, tr.tid, tr.name)
        return group(tr) + (tr.name,)

    out = {"tracks": Counter(), "slices": Counter(), "flows": Counter(),
           "counters": Counter(), "instants": Counter()}
    for tr in t.tracks.values():
        if tr.kind == "process":
            out["tracks"][("process", tr.pid, tr.name)] += 1
        elif tr.kind == "thread" or (tr.kind == "track" and tr.parent is not None):
            out["tracks"][track(tr.uuid)] += 1
    slices = t.slices()
    skey = {}
    for s in slices:
        if s["dur"] is None:
            continue
        key = (track(s["track"]), s["cat"], s["name"], s["ts"] - zero, s["dur"],
               freeze(s["args"]))
        out["slices"][key] += 1
        skey[id(s)] = key[:4]
    for a, b in t.flows(slices):
        out["flows"][(skey[id(a)], skey[id(b)])] += 1
    for c in t.counters():
        tr = t.tracks[c["track"]]
        out["counters"][(group(tr), tr.name, c["ts"] - zero, freeze(c["value"]))] += 1
    for i in t.instants():
        tr = t.tracks[i["track"]]
        out["instants"][(group(tr), i["name"], i["ts"] - zero, freeze(i["args"]))] += 1
    return out


PID_STRIDE = 10000000


def as_json_merge(t):
    """Put a machines merge (--machines) in the JSON merge's form, in place."""
    ms = sorted(t.machines)
    names = {m: t.machines[m].get("name") or "host" for m in ms}
    prefix = {}
    for i, m in enumerate(ms):
        dup = sum(1 for k in ms if names[k] == names[m]) > 1
        prefix[m] = ("%s#%d: " % (names[m], i + 1)) if dup else ("%s: " % names[m])
    host = {m: i for i, m in enumerate(ms)}

    def move(m, v):
        return v + (host[m] + 1) * PID_STRIDE if v is not None and v < REAL_MAX else v
    for tr in t.tracks.values():
        m = tr.machine
        if m not in host:
            raise SystemExit("compare_exports: track %r on machine %r with no SystemInfo" % (tr.name, m))
        if tr.kind in ("process", "thread"):
            tr.pid, tr.tid = move(m, tr.pid), move(m, tr.tid)
        if tr.kind == "process" or (tr.kind != "thread" and tr.parent is None):
            tr.name = prefix[m] + (tr.name or "")
    for e in t.events:
        tr = t.tracks.get(e["track"])
        if tr is None:
            continue
        for k in ("pid", "tid"):
            if isinstance(e["args"].get(k), int):
                e["args"][k] = move(tr.machine, e["args"][k])
        if e["name"] == "gpuio trace info" and "machine_id" in e["args"]:
            e["args"]["pid_offset"] = (host[tr.machine] + 1) * PID_STRIDE
            del e["args"]["machine_id"]
    for tr in t.tracks.values():
        tr.machine = 0


def perfetto_states(ppath):
    """Perfetto's thread_state rows of the traced threads: [(tid, state, ts, dur)]."""
    tp = tpc.tp_path()
    if not tp:
        return None
    rows = tpc.query(tp, ppath, "select t.tid as tid, s.state as state, s.ts as ts, s.dur as dur "
                                "from thread_state s join thread t using (utid) where t.tid != 0")
    return [(int(x["tid"]), x["state"], int(x["ts"]), int(x["dur"])) for x in rows]


GAP_MAX = 16


def compare_states(js, ppath, merged):
    """JSON state slices vs Perfetto's thread_state of the protobuf (see the top)."""
    ps = perfetto_states(ppath)
    if ps is None:
        print("compare_exports: no trace_processor_shell: thread states not compared", file=sys.stderr)
        return []
    drawn = [(tid, PERFETTO_STATE[s], ts, d) for tid, s, ts, d in ps if s in PERFETTO_STATE]
    if merged:      # hosts' tids and clocks differ between the forms: counts per state
        bad = []
        for st in sorted(set(PERFETTO_STATE.values())):
            j = sum(1 for r in js if r[1] == st)
            p = sum(1 for r in drawn if r[1] == st)
            if j != p:
                bad.append("states %s: %d in JSON, %d in Perfetto" % (st, j, p))
        return bad
    pend = {}
    for tid, s, ts, d in drawn:
        pend.setdefault((tid, s, ts), []).append(d)
    only_j = []
    for tid, s, ts, d in js:
        cand = pend.get((tid, s, ts), [])
        hit = next((i for i, pd in enumerate(cand) if pd < 0 or 0 <= pd - d <= GAP_MAX), None)
        if hit is None:
            only_j.append((tid, s, ts, d))
        else:
            cand.pop(hit)
    # a zero-length Running is the exporter closing a sched_gap (no JSON state)
    only_p = [(k[0], k[1], k[2], d) for k, v in pend.items() for d in v if d > 0]
    bad = []
    for k in sorted(only_j)[:5]:
        bad.append("state only in JSON: %r" % (k,))
    for k in sorted(only_p)[:5]:
        bad.append("state only in Perfetto's thread_state: %r" % (k,))
    if only_j or only_p:
        bad.append("states: %d only in JSON, %d only in Perfetto (of %d JSON, %d Perfetto)" %
                   (len(only_j), len(only_p), len(js), len(drawn)))
    return bad


def compare(jpath, ppath, stream=False, machines=False):
    t = pf.load(ppath)
    if machines:
        as_json_merge(t)
    a, b = canon_json(ct.load(jpath)), canon_pftrace(t)
    bad = ["protobuf: " + e for e in t.errors]
    states = a.pop("states")
    if states:
        bad += compare_states(states, ppath, machines)
    if stream:
        a, b = streamish(a), streamish(b)
    for kind in ("tracks", "slices", "flows", "counters", "instants"):
        only_j, only_p = a[kind] - b[kind], b[kind] - a[kind]
        if stream and kind == "flows":
            only_j = Counter()          # a stream may bind fewer, never others
        for k in list(only_j)[:5]:
            bad.append("%s only in JSON: %r" % (kind, k))
        for k in list(only_p)[:5]:
            bad.append("%s only in protobuf: %r" % (kind, k))
        if only_j or only_p:
            bad.append("%s: %d only in JSON, %d only in protobuf" %
                       (kind, sum(only_j.values()), sum(only_p.values())))
    summary = ", ".join("%d %s" % (sum(a[k].values()), k) for k in a)
    if states:
        summary += ", %d thread states" % len(states)
    return bad, summary


def main(argv):
    stream = len(argv) > 1 and argv[1] == "--stream"
    machines = len(argv) > 1 and argv[1] == "--machines"
    if stream or machines:
        argv = argv[:1] + argv[2:]
    if len(argv) != 3:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    bad, summary = compare(argv[1], argv[2], stream, machines)
    for b in bad[:40]:
        print("compare_exports: " + b, file=sys.stderr)
    if bad:
        return 1
    print("same: " + summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
