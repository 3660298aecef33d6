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
