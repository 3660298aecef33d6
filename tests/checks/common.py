"""What many checks share: the ok/FAIL line printer and failure count."""
import json


class Checks:
    """ck(cond, msg) prints "ok   " + prefix + msg, or "FAIL " + prefix + msg,
    and counts the failures; ck.status() is the exit status (1 if any)."""

    def __init__(self, prefix=""):
        self.bad = 0
        self.prefix = prefix

    def __call__(self, cond, msg):
        print(("ok   " if cond else "FAIL ") + self.prefix + msg)
        self.bad += not cond
        return cond

    def status(self):
        return 1 if self.bad else 0


def load_json(path, **kw):
    with open(path) as f:
        return json.load(f, **kw)


def events(path, **kw):
    """a trace's event list, array or {"traceEvents": [...]} form"""
    ev = load_json(path, **kw)
    return ev["traceEvents"] if isinstance(ev, dict) else ev


def checks_exist(listf):
    """t_checks_unit: every MODULE.FUNCTION listed in LISTF (one a line: what
    the tests call with pycheck) is a function of tests/checks/"""
    import importlib
    with open(listf) as f:
        names = [l.strip() for l in f if l.strip()]
    missing = []
    for name in names:
        mod, fn = name.rsplit(".", 1)
        if not callable(getattr(importlib.import_module("checks." + mod), fn, None)):
            missing.append(name)
    print("%d checks called by the tests, %d missing %s" % (len(names), len(missing), missing))
    return 1 if missing else 0
