import struct
import unittest
import zlib

from checks import report_truth as rt


def png(w, h, rows, ctype=2, filt=0):
    """a PNG of RGB (ctype 2) or RGBA (6) rows, every row with filter FILT
    (0 none, 1 sub, 2 up, 3 average, 4 Paeth)"""
    bpp = 3 if ctype == 2 else 4
    raw, prev = b"", bytes(w * bpp)

    def paeth(a, b, c):
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else b if pb <= pc else c
    for r in rows:
        left = lambda x: r[x - bpp] if x >= bpp else 0
        upleft = lambda x: prev[x - bpp] if x >= bpp else 0
        pred = {0: lambda x: 0, 1: left, 2: lambda x: prev[x], 3: lambda x: (left(x) + prev[x]) // 2,
                4: lambda x: paeth(left(x), prev[x], upleft(x))}[filt]
        enc = bytes((r[x] - pred(x)) & 255 for x in range(len(r)))
        raw += bytes([filt]) + enc
        prev = r

    def chunk(t, body):
        return struct.pack(">I", len(body)) + t + body + struct.pack(">I", zlib.crc32(t + body))
    ihdr = struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


class ReportTruth(unittest.TestCase):
    def test_shares(self):
        self.assertEqual(rt.shares({"a": 300, "b": 100}), {"a": 0.75, "b": 0.25})
        self.assertEqual(rt.shares({"a": 0, "b": 0}), {"a": 0, "b": 0})

    def test_steps_vs_windows(self):
        ms = 1_000_000
        steps = [{"t0_mono_ns": 100 * ms, "t1_mono_ns": 200 * ms, "wait_s": 0.010},
                 {"t0_mono_ns": 300 * ms, "t1_mono_ns": 310 * ms, "wait_s": 0.001},
                 {"t0_mono_ns": 400 * ms, "t1_mono_ns": 500 * ms, "wait_s": 0.006}]
        # 150 and 305 ms inside windows, 250 not; of the two long waits only the first has a start
        self.assertEqual(rt.steps_vs_windows([150 * ms, 250 * ms, 305 * ms], steps), (2, 1, 2))
        self.assertEqual(rt.steps_vs_windows([], steps), (0, 0, 2))
        # a start 0.5 ms before the program's clock read at next() is its step
        # (the on-CPU stretch that holds the call); 2 ms before is not
        self.assertEqual(rt.steps_vs_windows([400 * ms - ms // 2], steps), (1, 1, 2))
        self.assertEqual(rt.steps_vs_windows([400 * ms - 2 * ms], steps), (0, 0, 2))

    def test_asleep_in_next(self):
        steps = [{"wait_s": 0.100, "wait_cpu_ns": 10_000_000, "wait_run_delay_ns": 30_000_000},
                 {"wait_s": 0.010, "wait_cpu_ns": 8_000_000, "wait_run_delay_ns": 5_000_000},
                 {"wait_s": 0.050, "wait_cpu_ns": 0}]          # an older program: no run delay
        # 60 ms, none (its CPU and run delay exceed its wait), 50 ms
        self.assertAlmostEqual(rt.asleep_in_next(steps), 0.110)

    def test_data_wait_agrees(self):
        # the idle-machine cpu_bound run that failed a next()-wall comparison:
        # 1.167 s reported; the program slept 1.373 - 0.050 CPU - 0.200 run delay
        self.assertTrue(rt.data_wait_agrees(1.167, 0.050, 1.123))
        # the program's sleep between the report's sleep and that plus dtr
        self.assertTrue(rt.data_wait_agrees(2.0, 0.5, 1.9))
        self.assertTrue(rt.data_wait_agrees(2.0, 0.5, 2.1))
        # well outside both: a report that missed a third of the sleep, or invented some
        self.assertFalse(rt.data_wait_agrees(1.0, 0.05, 1.5))
        self.assertFalse(rt.data_wait_agrees(1.5, 0.05, 1.0))
        # the margin is 10% + 20 ms of the program's sleep, not more
        self.assertTrue(rt.data_wait_agrees(1.119, 0.0, 1.0))
        self.assertFalse(rt.data_wait_agrees(1.121, 0.0, 1.0))

    def test_png_rows(self):
        blue, red = (0x4e, 0x79, 0xa7), (0xe1, 0x57, 0x59)
        rows = [bytearray(blue * 2 + red), bytearray(red * 3)]
        for filt in (0, 1, 2, 3, 4):
            w, h, bpp, got = rt.png_rows(png(3, 2, rows, filt=filt))
            self.assertEqual((w, h, bpp), (3, 2, 3))
            self.assertEqual(got, rows, filt)
            self.assertEqual(rt.count_color(got, bpp, blue), 2)
            self.assertEqual(rt.count_color(got, bpp, red), 4)
        rgba = [bytearray((1, 2, 3, 255) * 2)]
        w, h, bpp, got = rt.png_rows(png(2, 1, rgba, ctype=6, filt=1))
        self.assertEqual((bpp, got), (4, rgba))
        self.assertEqual(rt.count_color(got, bpp, (5, 6, 7)), 2)      # within 4 per channel
        self.assertEqual(rt.count_color(got, bpp, (6, 6, 7)), 0)
        with self.assertRaises(AssertionError):
            rt.png_rows(b"GIF89a" + bytes(20))


class GapSites(unittest.TestCase):
    def run_check(self, sites):
        import io, json, os, tempfile
        from contextlib import redirect_stdout
        m = {"t0_ns": 50_000_000, "gap_sites": {"10": "/a.py:5 f", "40": None}}
        r = {"gpu": {"largest_gaps": [{"start_ts_us": 60000.0, "launcher_site": sites[0]},
                                      {"start_ts_us": 90000.0, "launcher_site": sites[1]}]}}
        with tempfile.TemporaryDirectory() as d:
            mp, rp = os.path.join(d, "m"), os.path.join(d, "r")
            json.dump(m, open(mp, "w"))
            json.dump(r, open(rp, "w"))
            with redirect_stdout(io.StringIO()):
                return rt.gpu_gap_sites(mp, rp)

    def test_sites(self):
        self.assertEqual(self.run_check(["/a.py:5 f", None]), 0)
        self.assertEqual(self.run_check(["/a.py:6 f", None]), 1)
        self.assertEqual(self.run_check(["/a.py:5 f", "/a.py:5 f"]), 1)


if __name__ == "__main__":
    unittest.main()
