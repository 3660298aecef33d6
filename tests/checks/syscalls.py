"""t_syscalls: every file syscall build/tests/sc_all made, once, in order,
with the arguments it printed (one JSON object per call) and nothing
invented (no offset where the call has none, no bytes on a failure)."""
import json
import os

import truth

FLAG_BITS = {name: getattr(os, name) for name in (
    "O_CREAT", "O_EXCL", "O_NOCTTY", "O_TRUNC", "O_APPEND", "O_NONBLOCK", "O_DSYNC",
    "O_ASYNC", "O_DIRECT", "O_LARGEFILE", "O_DIRECTORY", "O_NOFOLLOW", "O_NOATIME",
    "O_CLOEXEC", "O_PATH")}


def flag_names(v):
    """the names gpuio must print for open flags V (O_LARGEFILE left out)"""
    acc = ["O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"][v & 3]
    return {acc} | {n for n, b in FLAG_BITS.items() if v & b and n != "O_LARGEFILE"}


def mismatch(e, x):
    """why vfs slice e is not expectation x (None when it is)"""
    a = e["args"]
    if e["name"] != x["call"]:
        return "name"
    for k, v in x.items():
        if k in ("call", "pipe", "pipe2"):
            continue
        if k == "flags":
            got = set(str(a.get("flags", "")).split("|")) - {"O_LARGEFILE"}
            if got != flag_names(v):
                return f"flags {a.get('flags')!r} != {sorted(flag_names(v))}"
        elif a.get(k) != v:
            return f"{k}={a.get(k)!r}, want {v!r}"
    if x.get("pipe") and a.get("ftype") != "pipe":
        return f"ftype={a.get('ftype')!r}, want 'pipe'"
    if x.get("pipe2") and a.get("ftype2") != "pipe":
        return f"ftype2={a.get('ftype2')!r}, want 'pipe'"
    # no invented values: no offset where the call has none, no bytes on failure
    if "offset" not in x and "offset" in a:
        return f"offset={a['offset']} present, the call has no file offset"
    if "errno" in x and "bytes" in a:
        return "bytes present on a failed call"
    if "errno" not in x and "errno" in a:
        return f"errno={a['errno']} on a call that succeeded"
    if e.get("dur", -1) < 0:
        return "negative dur"
    return None


def sc_all(trace, expfile, mode):
    """the trace against sc_all's lines (mode default: pipe I/O absent; all-fds: present)"""
    ev = truth.load(trace)
    with open(expfile) as f:
        exp = [json.loads(l) for l in f if l.strip()]
    calls = truth.vfs(ev)
    pids = {e["pid"] for e in calls if e["args"].get("path", "").startswith(os.path.dirname(exp[0]["path"]))}
    if len(pids) != 1:
        print(f"expected sc_all's calls on one pid, got {pids}")
        return 1
    pid = pids.pop()
    calls = [e for e in calls if e["pid"] == pid]

    bad = 0
    i = 0
    for x in exp:
        absent = mode == "default" and x.get("pipe") and x["call"] in ("read", "write")
        if absent:
            hit = [e for e in calls if e["name"] == x["call"] and e["args"].get("fd") == x["fd"]
                   and e["args"].get("ftype") == "pipe"]
            if hit:
                print(f"FAIL pipe {x['call']} traced without --all-fds: {hit[0]['args']}")
                bad += 1
            else:
                print(f"ok   {x['call']} on a pipe absent by default")
            continue
        # the next call of that name after the previous match
        j = i
        while j < len(calls) and calls[j]["name"] != x["call"]:
            j += 1
        # skip same-name calls on other fds (the stdout writes between the calls)
        while j < len(calls) and (calls[j]["name"] != x["call"] or calls[j]["args"].get("fd") != x.get("fd")):
            j += 1
        if j == len(calls):
            print(f"FAIL {x}: no such call in the trace after position {i}")
            bad += 1
            continue
        why = mismatch(calls[j], x)
        if why:
            print(f"FAIL {x['call']}: {why}\n     want {x}\n     got  {calls[j]['args']}")
            bad += 1
        else:
            print(f"ok   {x['call']} {dict((k, v) for k, v in x.items() if k != 'call')}")
        i = j + 1

    # every traced call of each name is there (none missing from the list above)
    names = {x["call"] for x in exp}
    missing = sorted(names - {e["name"] for e in calls})
    if missing:
        print(f"FAIL calls missing from the trace: {missing}")
        bad += 1

    # sc_all's stdout is a regular file inherited from the test: its writes are
    # named by its absolute path like any other file
    out = [e for e in calls if e["name"] == "write" and e["args"].get("fd") == 1]
    if not out:
        print("FAIL no write to stdout (a regular file) traced")
        bad += 1
    elif {e["args"].get("path") for e in out} != {os.path.realpath(expfile)}:
        print(f"FAIL writes to the inherited stdout named {sorted({e['args'].get('path') for e in out})}, "
              f"want {os.path.realpath(expfile)!r}")
        bad += 1
    else:
        print(f"ok   inherited stdout named {os.path.realpath(expfile)}")
    return 1 if bad else 0
