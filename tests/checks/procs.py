"""Which process, thread and file each traced call is on, against what the
test programs say they are (t_children, t_unrelated, t_names_agree,
t_anon_names, t_hostile_live)."""
import json
import os

import truth
from checks.common import Checks, events, load_json


def children(trace, outf, d):
    """t_children: fork_workers' readers (one line each: kind pid tid file
    bytes name) against the trace: bytes, pid/tid, thread and process names"""
    ev = truth.load(trace)
    pn, tn = truth.process_names(ev), truth.thread_names(ev)
    check = Checks()
    with open(outf) as f:
        lines = [l.split() for l in f if l.strip()]
    kinds = sorted(l[0] for l in lines)
    check(kinds == ["exec"] + ["thread"] * 3 + ["worker"] * 3, f"fork_workers reported {kinds}")
    for kind, pid, tid, path, nbytes, name in lines:
        pid, tid = int(pid), int(tid)
        reads = truth.vfs(ev, path=path, names=truth.READ_CALLS)
        got = sum(e["args"].get("bytes", 0) for e in reads)
        size = os.path.getsize(path)
        if kind == "exec":
            pids = {e["pid"] for e in reads}
            catpid = pids.pop() if len(pids) == 1 else None
            check(catpid is not None and got == size,
                  f"cat: {got} bytes of {path} (size {size}) read by one process {sorted(pids | {catpid})}")
            check(catpid is not None and "cat" in pn.get(catpid, ""),
                  f"cat: process_name of pid {catpid} is {pn.get(catpid)!r}")
            check(pid in pn and pn[pid].startswith("sh"), f"sh (pid {pid}): process_name {pn.get(pid)!r}")
            continue
        check(got == int(nbytes) == size, f"{kind} {pid}/{tid}: {got} bytes of {os.path.basename(path)} "
              f"in the trace, it read {nbytes}, size {size}")
        where = {(e["pid"], e["tid"]) for e in reads}
        check(where == {(pid, tid)}, f"{kind} {pid}/{tid}: reads attributed to {sorted(where)}")
        check(tn.get((pid, tid)) == name, f"{kind} {pid}/{tid}: thread_name {tn.get((pid, tid))!r} == {name!r}")
        check(pid in pn, f"{kind} {pid}: process_name {pn.get(pid)!r}")
    return check.status()


def unrelated(trace, mode, tpid, upid, tmp, gpid):
    """t_unrelated: the target's reads of A are there; with -p and launch, B and
    the unrelated pid appear nowhere; with -a (mode "all") B's reads are on the
    unrelated pid and gpuio's own files and pid appear nowhere"""
    tpid, upid, gpid = int(tpid), int(upid), int(gpid)
    ev = truth.load(trace)
    A, B = os.path.realpath(tmp + "/a/fileA"), os.path.realpath(tmp + "/b/fileB")
    check = Checks(f"{mode}: ")
    a = truth.vfs(ev, path=A, names={"pread64"})
    b = truth.vfs(ev, path=B, names={"pread64"})
    check(len(a) >= 100 and {e["pid"] for e in a} == {tpid},
          f"{len(a)} reads of A, on pids {sorted({e['pid'] for e in a})} (target {tpid})")
    pids = {e.get("pid") for e in ev if e.get("ph") in ("X", "M", "i", "B", "E")}
    blockpids = {e["args"].get("pid") for e in truth.block(ev)}
    if mode == "all":
        check(len(b) >= 100 and {e["pid"] for e in b} == {upid},
              f"{len(b)} reads of B, on pids {sorted({e['pid'] for e in b})} (unrelated {upid})")
        mine = [e for e in ev if e.get("args", {}).get("path", "").startswith(os.path.realpath(tmp + "/out"))
                or e.get("args", {}).get("path2", "").startswith(os.path.realpath(tmp + "/out"))]
        check(not mine, f"gpuio's own capture/output files appear in {len(mine)} events "
              f"{[(e['name'], e.get('pid')) for e in mine[:3]]}")
        check(gpid not in pids and gpid not in blockpids, f"gpuio's pid {gpid} appears nowhere")
    else:
        check(not b, f"no reads of B ({len(b)})")
        strays = [e for e in ev if B in (e.get("args", {}).get("path"), e.get("args", {}).get("path2"))]
        check(not strays, f"B appears in no event ({len(strays)})")
        check(upid not in pids and upid not in blockpids, f"the unrelated pid {upid} appears nowhere")
    return check.status()


def names_agree(trace, report):
    """t_names_agree: the export's process_name and the report's processes
    (comm, args) agree for every pid; the renamed main thread (rename.py)
    did not rename its process"""
    ev = load_json(trace)
    rep = load_json(report)
    exp = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name" and e["pid"] < 0x20000000}
    rp = {p["pid"]: (p["comm"], p["args"]) for p in rep["processes"]}
    bad = 0
    for pid, (comm, args) in rp.items():
        want = comm + (": " + args if args else "")
        got = exp.get(pid)
        # the export cuts "comm: argv" at 200 bytes; the report's args at 199
        if got is None or not (got == want or (len(got) >= 190 and want.startswith(got[:190]))):
            print(f"FAIL pid {pid}: timeline {got!r}, report {want!r}")
            bad += 1
    renamed = [c for c, a in rp.values() if "rename.py" in a]
    if not renamed or any(c == "renamed-main" for c in renamed):
        print(f"FAIL the renamed main thread renamed its process: {renamed}")
        bad += 1
    print(f"{len(rp)} processes, {bad} disagreements; python named {renamed}")
    return 1 if bad else 0


def anon_names(trace, truthf, mode):
    """t_anon_names: every file without an ordinary name (memfd, O_TMPFILE,
    unlinked, pipe, eventfd) carries the name /proc/PID/fd gave it (the
    program's lines in TRUTHF) and its bytes; by default the pipe and the
    eventfd are absent; no call on "/" or an unnamed file"""
    ev = load_json(trace)
    calls = {}
    for e in ev:
        a = e.get("args", {})
        if e.get("cat") == "vfs" and e["name"] in ("read", "write", "pread64", "pwrite64"):
            op = "read" if "read" in e["name"] else "write"
            calls.setdefault(a.get("path"), {"read": 0, "write": 0})[op] += a.get("bytes") or 0
    bad = 0
    with open(truthf) as f:
        want = [json.loads(l) for l in f]
    # the pipe's two ends are one pipe: add their bytes
    byname = {}
    for w in want:
        name = w["name"]
        if w["what"] == "unlinked":
            assert name.endswith(" (deleted)"), name
            name = name[:-len(" (deleted)")]
        t = byname.setdefault(name, {"what": w["what"], "read": 0, "write": 0})
        t["read"] += w["read"]
        t["write"] += w["wrote"]
    for name, w in byname.items():
        absent = mode == "default" and w["what"] in ("pipe", "pipe_w", "eventfd")
        got = calls.get(name)
        if absent:
            if got:
                print(f"FAIL {w['what']} {name!r} traced without --all-fds")
                bad += 1
            else:
                print(f"ok   {w['what']} absent by default")
            continue
        if got != {"read": w["read"], "write": w["write"]}:
            print(f"FAIL {w['what']}: want {name!r} read {w['read']} write {w['write']}, got {got}")
            bad += 1
        else:
            print(f"ok   {w['what']}: {name!r} read {w['read']} write {w['write']}")
    for p in calls:
        if p in ("/", None) or (p or "").startswith("?"):
            print(f"FAIL a call on an unnamed file: {p!r} {calls[p]}")
            bad += 1
    return 1 if bad else 0


HOSTILE_DIR = b"/dir \"q\" \\b \xff"
HOSTILE_FILE = b"/f\"q\\b\nnl\ttab\x01ctl\xff \xc3\x28 \xc3\xa9t\xc3\xa9 \xe2\x82.bin"


def make_hostile(base):
    """t_hostile_live: make BASE/<hostile dir>/<hostile file> (123450 bytes)
    and print the file's path as hex (bash cannot hold the bytes reliably)"""
    d = os.fsencode(base) + HOSTILE_DIR
    f = d + HOSTILE_FILE
    os.mkdir(d)
    with open(f, "wb") as fp:
        fp.write(b"0123456789" * 12345)
    print(f.hex())


def hostile_live(trace, hexpath):
    """t_hostile_live: the JSON is valid UTF-8; the reads of the hostile file
    are named by bytes.decode("utf-8", "replace") of its path and move its
    size; its open is named by it; a process name holds the hostile argv"""
    with open(trace, "rb") as f:
        raw = f.read()
    try:
        raw.decode("utf-8", "strict")
        print("ok   the JSON file is valid UTF-8")
    except UnicodeDecodeError as e:
        print(f"FAIL the JSON file is not valid UTF-8: {e}")
        return 1
    p = bytes.fromhex(hexpath)
    want = os.path.realpath(p).decode("utf-8", "replace")
    size = os.path.getsize(p)
    ev = truth.load(trace)
    reads = truth.vfs(ev, path=want, names=truth.READ_CALLS)
    got = sum(e["args"].get("bytes", 0) for e in reads)
    bad = 0
    if not reads or got != size:
        near = sorted({e["args"].get("path") for e in truth.vfs(ev) if "tab" in str(e["args"].get("path"))})
        print(f"FAIL no read of {want!r} moving {size} bytes (got {got}); paths seen: {near}")
        bad = 1
    else:
        print(f"ok   {len(reads)} reads of {want!r}, {got} bytes")
    opens = truth.vfs(ev, path=want, names=truth.OPEN_CALLS)
    if not opens:
        print("FAIL the open of the hostile file is not named by it")
        bad = 1
    leaf = os.path.basename(p).decode("utf-8", "replace")
    names = truth.process_names(ev)
    if not any(leaf in n for n in names.values()):
        print(f"FAIL no process_name holds the hostile argv: {sorted(names.values())}")
        bad = 1
    else:
        print("ok   the process name holds the hostile argv")
    return bad


def process_labels(trace, labels):
    """t_trace_jobs: the traced preadloop's process_labels metadata in the JSON
    is LABELS ("k=v, k=v", from its cgroup path)"""
    ev = events(trace)
    pids = {e["pid"] for e in ev if e.get("name") == "process_name" and e["args"]["name"].startswith("preadloop")}
    lab = [e["args"]["labels"] for e in ev if e.get("name") == "process_labels" and e["pid"] in pids]
    assert lab == [labels], (lab, labels)
    print("JSON process_labels:", lab[0])


def report_jobs(report, labels):
    """t_trace_jobs: `gpuio report --json` lists the job LABELS names"""
    r = load_json(report)
    want = dict(kv.split("=", 1) for kv in labels.split(", "))
    jobs = [{k: v for k, v in j.items() if k != "processes"} for j in r["jobs"]]
    assert want in jobs, (jobs, want)
