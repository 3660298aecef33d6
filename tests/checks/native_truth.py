"""Native frames (t_native_frames) against what tests/progs/native_frames.py
and its library (tests/progs/native_lib.c, built with frame pointers) say of
themselves: N reads of 4 KiB of one file, each made by native_leaf_read,
called by native_mid, called by native_outer, called through ctypes from
one line of the program.

  - exports(prog, trace.json, native): every read of the data file by the
    program carries a stack whose frames are, innermost first, exactly
    native_leaf_read, native_mid, native_outer of the library's file, then
    only native frames (ctypes' and libffi's: never a Python frame before
    the program's line, never a frame of the library again), then the
    program's line "FILE:LINE read_all"; its site is that line. With native
    "off" (--no-native-frames) the stack begins at that line.
  - report(prog, report.json): the data file's first call site is the
    program's line with all its reads and bytes, its chain the same frames.
"""
from checks.common import Checks, load_json

NATIVE = ["native_leaf_read", "native_mid", "native_outer"]


def _frames(stack):
    return stack.split("\n") if stack else []


def is_python(frame):
    """a Python frame reads "FILE:LINE FUNC"; a native one "FUNC FILE", its
    file an absolute path (a Python function's name never starts with /)"""
    return not frame.rsplit(" ", 1)[-1].startswith("/")


def check_stack(ck, prog, st, native, label):
    """one read's stack against the program's; True when it matches"""
    fr = _frames(st)
    site = "%s:%d %s" % (prog["file"], prog["line"], prog["func"])
    if not native:
        return ck(fr[:1] == [site], f"{label}: the stack begins at {site} (got {fr[:2]})")
    want = ["%s %s" % (f, prog["lib"]) for f in NATIVE]
    if not ck(fr[:3] == want, f"{label}: innermost frames {fr[:3]}, want {want}"):
        return False
    try:
        at = fr.index(site)
    except ValueError:
        return ck(False, f"{label}: {site} not in the stack {fr}")
    between = fr[3:at]
    bad = [f for f in between if is_python(f) or prog["lib"] in f]
    return ck(not bad, f"{label}: between native_outer and the program's line only native frames "
              f"of other files ({between}; bad {bad})")


def exports(prog_path, trace_path, native="on"):
    ck = Checks()
    prog = load_json(prog_path)
    t = load_json(trace_path)
    ev = t["traceEvents"] if isinstance(t, dict) else t
    reads = [e for e in ev if e.get("ph") == "X" and e.get("pid") == prog["pid"]
             and e.get("name") in ("read", "read64") and (e.get("args") or {}).get("path") == prog["data"]]
    ck(len(reads) == prog["calls"], f"{len(reads)} reads of {prog['data']}, the program made {prog['calls']}")
    ck(sum((e["args"].get("bytes") or e["args"].get("ret") or 0) for e in reads) == prog["bytes"],
       f"their bytes are the program's {prog['bytes']}")
    site = "%s:%d %s" % (prog["file"], prog["line"], prog["func"])
    ok = [e for e in reads if _quiet(prog, e["args"].get("stack", ""), native == "on")]
    ck(reads and len(ok) == len(reads), f"{len(ok)} of {len(reads)} reads have the program's frames "
       f"({'native then ' if native == 'on' else ''}{site})")
    if reads and len(ok) != len(reads):
        bad = next(e for e in reads if e not in ok)
        check_stack(ck, prog, bad["args"].get("stack", ""), native == "on", "first unlike")
    ck(all(e["args"].get("site") == site for e in reads), f"every read's site is {site}")
    return ck.status()


class _Mute(Checks):
    def __call__(self, cond, msg):
        self.bad += not cond
        return cond


def _quiet(prog, st, native):
    """check_stack without its lines: whether it matches"""
    m = _Mute()
    check_stack(m, prog, st, native, "")
    return m.bad == 0


def report(prog_path, report_path):
    ck = Checks()
    prog = load_json(prog_path)
    r = load_json(report_path)
    rows = [f for f in r.get("files", []) if f.get("path") == prog["data"]]
    if not ck(len(rows) == 1, f"the report has {prog['data']}"):
        return ck.status()
    cs = rows[0].get("call_sites") or []
    top = cs[0] if cs else {}
    ck((top.get("file"), top.get("line"), top.get("function"), top.get("library")) ==
       (prog["file"], prog["line"], prog["func"], False),
       f"its first call site {top.get('file')}:{top.get('line')} {top.get('function')}, the program's "
       f"{prog['file']}:{prog['line']} {prog['func']}")
    ck(top.get("count") == prog["calls"] and top.get("bytes") == prog["bytes"],
       f"there {top.get('count')} reads, {top.get('bytes')} bytes: the program's {prog['calls']}, {prog['bytes']}")
    chain = (top.get("chain") or "").split(" <- ")
    want = ["%s %s" % (f, prog["lib"]) for f in NATIVE]
    ck(chain[:3] == want, f"its chain begins {chain[:3]}")
    return ck.status()
