import contextlib
import io
import os
import struct
import tempfile
import unittest

from checks import cuda_calls as cc
from checks.common import Checks


def rec(typ, pid, tid, ts, body=b"", size=None):
    size = size if size is not None else 24 + len(body)
    return struct.pack("<HHIIIQ", typ, size, pid, tid, 0, ts) + body


def api_body(name, end, ret=0, nbytes=0, stream=0, func=0, src=3, kind=1, mk=0):
    b = struct.pack("<QqQQQIIBBB", end, ret, nbytes, stream, func, 0, 0, src, kind, mk)
    b += bytes(80 - 24 - len(b))
    return b + name.encode().ljust(48, b"\0")


def capture(recs, hs=2040, detail=b"cuda uprobes: uprobe.multi"):
    h = bytearray(hs)
    h[0:8] = b"GPUIOCAP"
    struct.pack_into("<II", h, 8, 1, hs)
    o = 48 + 64 + 128 + 40 + 80
    if hs >= o + 512:
        h[o:o + len(detail)] = detail
    return bytes(h) + b"".join(recs)


class CudaCalls(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)

    def write(self, name, data):
        p = os.path.join(self.dir, name)
        with open(p, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return p

    def test_records_stop_at_a_cut_record(self):
        d = capture([rec(11, 5, 5, 100, api_body("cudaMalloc", 110)), rec(1, 5, 5, 120, bytes(8)),
                     rec(11, 5, 6, 130, size=500)], hs=64)
        got = list(cc.records(d, 64))
        self.assertEqual([(t, sz) for _, t, sz in got], [(11, 128), (1, 32)])
        self.assertEqual(got[0][0], 64)
        # a size below a record header ends the walk too
        self.assertEqual(list(cc.records(capture([rec(11, 1, 1, 0, size=8)], hs=64), 64)), [])

    def test_load(self):
        sym = struct.pack("<QH", 0xabc, 6) + bytes(6) + b"kern()"
        p = self.write("c.gpuio", capture([rec(11, 7, 8, 100, api_body("cuLaunchKernel", 150, ret=2, func=0xabc)),
                                           rec(15, 7, 8, 0, sym)]))
        api, syms, detail = cc.load(p)
        self.assertEqual(len(api), 1)
        a = api[0]
        self.assertEqual((a["name"], a["pid"], a["tid"], a["ts"], a["end"], a["ret"], a["func"], a["source"]),
                         ("cuLaunchKernel", 7, 8, 100, 150, 2, 0xabc, 3))
        self.assertEqual(syms, {(7, 0xabc): "kern()"})
        self.assertEqual(detail, "cuda uprobes: uprobe.multi")
        with self.assertRaises(AssertionError):
            cc.load(self.write("x.gpuio", b"NOTACAPT" + bytes(100)))

    def test_printed_and_match(self):
        out = self.write("out", "ready 7\nCALL cuMemAlloc_v2 tid=8 rc=0 bytes=4096\n"
                                "CALL cuLaunchKernel tid=9 rc=2\nnoise\n")
        printed = cc.printed_calls(out)
        self.assertEqual(printed, [("cuMemAlloc_v2", {"tid": 8, "rc": 0, "bytes": 4096}),
                                   ("cuLaunchKernel", {"tid": 9, "rc": 2})])
        api = [dict(name="cuLaunchKernel", pid=7, tid=9, ret=2, ts=5, end=6),
               dict(name="cuMemAlloc_v2", pid=7, tid=8, ret=0, ts=1, end=2),
               dict(name="cuMemAlloc_v2", pid=99, tid=99, ret=0, ts=1, end=2)]
        ck = Checks()
        with contextlib.redirect_stdout(io.StringIO()):
            got = cc.match(ck, api, printed, 7)
        self.assertEqual(ck.bad, 0)
        self.assertEqual([g["tid"] for g in got], [8, 9])
        # a wrong return code, and a call with no record
        ck = Checks()
        with contextlib.redirect_stdout(io.StringIO()) as o:
            got = cc.match(ck, api[1:], printed, 7)
        self.assertEqual(ck.bad, 2)      # 1 record for 2 calls; none for tid 9
        self.assertEqual(got[1], {})
        self.assertIn("FAIL cuLaunchKernel tid=9 rc=2: record None", o.getvalue())
        ck = Checks()
        api[0]["ret"] = 0                # the record's return code is not the printed one
        with contextlib.redirect_stdout(io.StringIO()):
            cc.match(ck, api, printed, 7)
        self.assertEqual(ck.bad, 1)      # the count is right; the return code is not


if __name__ == "__main__":
    unittest.main()
