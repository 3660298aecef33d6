import copy
import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stdout

from checks import sites_truth as st

PROG = "/p/py_sites.py"


def site(kind, line, func, n, nbytes, **kw):
    d = {"file": PROG, "line": line, "function": func, "count": n, "bytes": nbytes, "time_us": 1.0}
    d.update(kw)
    return d


def program():
    return {"program": PROG, "data": "/d", "pid": 10, "loop_tid": 10, "busy_function": "decode",
            "sites": {"plain": {"line": 58, "function": "read_plain"},
                      "mmap": {"line": 66, "function": "read_mapped"},
                      "sock": {"line": 77, "function": "fetch_socket"},
                      "label": {"line": 199, "function": "main"},
                      "next": {"line": 204, "function": "main"}},
            "bytes": {"plain": 1000, "mmap": 400, "sock": 300, "label": 50},
            "next_ns": 200_000_000}


def report():
    nx = {"site": PROG + ":204 main", "calls": 40, "asleep_for_data_us": 150000.0,
          "asleep_other_us": 0.0, "runnable_us": 30000.0, "on_cpu_us": 25000.0}
    lp = {"pid": 10, "tid": 10, "waiting_for_data_us": 205000.0, "waiting_for_data_from": "next",
          "next": nx,
          "cpu_by_function": [site("", None, "decode", 30, 0), site("", None, "read_plain", 2, 0)],
          "fetch_sites": [site("", 66, "read_mapped", 4, 800), site("", 77, "fetch_socket", 4, 300)]}
    files = [{"path": "/d/plain-0.bin", "read_bytes": 1000,
              "call_sites": [site("", 58, "read_plain", 2, 1000)]},
             {"path": "/d/mapped-0.bin", "read_bytes": 800,
              "call_sites": [site("", 66, "read_mapped", 2, 800)]},
             {"path": "/d/labels.csv", "read_bytes": 50, "call_sites": [site("", 199, "main", 1, 50)]}]
    return {"loops": [lp], "files": files}


class SitesTruth(unittest.TestCase):
    def run_check(self, prog, rep, stacks="all"):
        with tempfile.TemporaryDirectory() as d:
            p, r = os.path.join(d, "p.json"), os.path.join(d, "r.json")
            json.dump(prog, open(p, "w"))
            json.dump(rep, open(r, "w"))
            out = io.StringIO()
            with redirect_stdout(out):
                rc = st.py_sites("workers", stacks, p, r)
            return rc, out.getvalue()

    def test_good(self):
        rc, out = self.run_check(program(), report())
        self.assertEqual(rc, 0, out)
        rc, out = self.run_check(program(), report(), "sleeps")
        self.assertEqual(rc, 0, out)

    def test_each_fault_fails(self):
        def wrong_loop(r): r["loops"][0]["tid"] = 11
        def next_far(r): r["loops"][0]["waiting_for_data_us"] = 250000.0      # 50 ms over 200
        def sleeps_only(r): r["loops"][0]["waiting_for_data_from"] = "sleeps"
        def parts_off(r): r["loops"][0]["next"]["on_cpu_us"] = 0.0
        def next_line(r): r["loops"][0]["next"]["site"] = PROG + ":203 main"
        def busy(r): r["loops"][0]["cpu_by_function"].reverse()
        def sock(r): r["loops"][0]["fetch_sites"][1]["bytes"] = 290
        def plain_line(r): r["files"][0]["call_sites"][0]["line"] = 57
        def plain_share(r): r["files"][0]["call_sites"] = [site("", 58, "read_plain", 1, 980),
                                                           site("", 12, "other", 1, 20)]
        def label_bytes(r): r["files"][2]["read_bytes"] = 40; r["files"][2]["call_sites"][0]["bytes"] = 40
        def mmap_func(r): r["files"][1]["call_sites"][0]["function"] = "main"
        for f in (wrong_loop, next_far, sleeps_only, parts_off, next_line, busy, sock, plain_line,
                  plain_share, label_bytes, mmap_func):
            rep = report()
            f(rep)
            rc, out = self.run_check(program(), rep)
            self.assertEqual(rc, 1, "%s passed:\n%s" % (f.__name__, out))

    def test_sleeps_mode_site_accuracy(self):
        rep = report()
        rep["files"][1]["call_sites"] = [site("", 66, "read_mapped", 1, 500), site("", 12, "x", 1, 300)]
        rc, out = self.run_check(program(), rep, "sleeps")
        self.assertEqual(rc, 1, out)
        rep["files"][1]["call_sites"] = []
        rc, out = self.run_check(program(), rep, "sleeps")
        self.assertEqual(rc, 1, out)

    def test_slack(self):
        rep = report()
        rep["loops"][0]["waiting_for_data_us"] = 229000.0     # 200 ms + 5% + 20 ms = 230
        rep["loops"][0]["next"]["on_cpu_us"] += 24000.0
        rc, out = self.run_check(program(), rep)
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
