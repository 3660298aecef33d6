"""native_truth's checks fail where they must (python3 -m unittest, t_unit)."""
import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stdout

from checks import native_truth as nt

LIB = "/b/libnative_frames.so"
PROG = {"pid": 7, "lib": LIB, "data": "/d/x.dat", "file": "/p/nf.py", "line": 34, "func": "read_all",
        "calls": 2, "bytes": 8192}
SITE = "/p/nf.py:34 read_all"
GOOD = "\n".join(["native_leaf_read " + LIB, "native_mid " + LIB, "native_outer " + LIB,
                  "+0x6f7a /usr/lib/libffi.so.8", SITE, "/p/nf.py:51 main"])


def read(stack, site=SITE, n=4096):
    return {"ph": "X", "pid": 7, "name": "read", "args": {"path": "/d/x.dat", "bytes": n, "stack": stack,
                                                          "site": site}}


def run_exports(evs, native="on"):
    with tempfile.TemporaryDirectory() as d:
        p, t = os.path.join(d, "p.json"), os.path.join(d, "t.json")
        json.dump(PROG, open(p, "w"))
        json.dump({"traceEvents": evs}, open(t, "w"))
        out = io.StringIO()
        with redirect_stdout(out):
            rc = nt.exports(p, t, native)
        return rc, out.getvalue()


class Exports(unittest.TestCase):
    def test_good(self):
        self.assertEqual(run_exports([read(GOOD), read(GOOD)])[0], 0)

    def test_bad(self):
        cases = {
            "a frame missing": GOOD.replace("native_mid " + LIB + "\n", ""),
            "a Python frame first": "/p/nf.py:30 helper\n" + GOOD,
            "a Python frame between": GOOD.replace("+0x6f7a /usr/lib/libffi.so.8", "/x.py:3 f"),
            "the library again between": GOOD.replace("+0x6f7a /usr/lib/libffi.so.8", "f " + LIB),
            "not the program's line": GOOD.replace(SITE, "/p/nf.py:35 read_all"),
        }
        for what, st in cases.items():
            rc, out = run_exports([read(GOOD), read(st)])
            self.assertEqual(rc, 1, what)
            self.assertIn("1 of 2 reads", out, what)
        self.assertEqual(run_exports([read(GOOD)])[0], 1)                  # a read missing
        self.assertEqual(run_exports([read(GOOD), read(GOOD, n=1)])[0], 1)  # its bytes
        self.assertEqual(run_exports([read(GOOD), read(GOOD, site="/x.py:1 f")])[0], 1)

    def test_off(self):
        py = "\n".join([SITE, "/p/nf.py:51 main"])
        self.assertEqual(run_exports([read(py), read(py)], "off")[0], 0)
        self.assertEqual(run_exports([read(GOOD), read(py)], "off")[0], 1)


class Report(unittest.TestCase):
    def run_report(self, cs):
        with tempfile.TemporaryDirectory() as d:
            p, r = os.path.join(d, "p.json"), os.path.join(d, "r.json")
            json.dump(PROG, open(p, "w"))
            json.dump({"files": [{"path": "/d/x.dat", "call_sites": cs}]}, open(r, "w"))
            with redirect_stdout(io.StringIO()):
                return nt.report(p, r)

    def test_report(self):
        site = {"file": "/p/nf.py", "line": 34, "function": "read_all", "library": False, "count": 2,
                "bytes": 8192, "chain": GOOD.replace("\n", " <- ")}
        self.assertEqual(self.run_report([site]), 0)
        for k, v in (("line", 35), ("count", 1), ("bytes", 1), ("library", True),
                     ("chain", SITE)):
            self.assertEqual(self.run_report([dict(site, **{k: v})]), 1, k)


if __name__ == "__main__":
    unittest.main()
