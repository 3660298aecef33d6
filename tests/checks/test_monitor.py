import contextlib
import io
import os
import tempfile
import unittest

from checks import monitor as mon

GOOD = """# HELP gpuio_x_total X.
# TYPE gpuio_x_total counter
gpuio_x_total{b="2",a="1"} 5
gpuio_x_total{a="q\\"\\\\\\n"} 0
# TYPE gpuio_up gauge
gpuio_up 1
# TYPE gpuio_lat_seconds histogram
gpuio_lat_seconds_bucket{op="read",le="0.1"} 1
gpuio_lat_seconds_bucket{op="read",le="+Inf"} 3
gpuio_lat_seconds_sum{op="read"} 0.5
gpuio_lat_seconds_count{op="read"} 3
"""


class Prom(unittest.TestCase):
    def test_good(self):
        out = mon.parse_prom(GOOD)
        self.assertEqual(out['gpuio_x_total{a="1",b="2"}'], 5.0)      # labels sorted
        self.assertEqual(out['gpuio_x_total{a="q"\\\n"}'], 0.0)          # escapes decoded
        self.assertEqual(out["gpuio_up{}"], 1.0)
        self.assertEqual(out['gpuio_lat_seconds_count{op="read"}'], 3.0)

    def bad(self, text, msg):
        with self.assertRaises(mon.PromError) as e:
            mon.parse_prom(text)
        self.assertIn(msg, str(e.exception))

    def test_bad_pages(self):
        self.bad("# TYPE a gauge\na 1", "does not end with a newline")
        self.bad("# TYPE a gauge\n\na 1\n", "line 2: blank line")
        self.bad("a 1\n", "sample of a without a TYPE")
        self.bad("# TYPE a_total counter\na_total -1\n", "counter a_total = -1.0")
        self.bad("# TYPE a counter\na 1\n", "counter a does not end in _total")
        self.bad("# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n", "duplicate series")
        self.bad("# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na 2\n", "family a is not contiguous")
        self.bad("# TYPE a gauge\na 1\n# TYPE a gauge\n", "second TYPE for a")
        self.bad("# TYPE a gauge\na{x=\"\\t\"} 1\n", "illegal escape")
        self.bad("# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n", "duplicate label x")
        self.bad("# TYPE a gauge\na one\n", "bad value 'one'")
        self.bad("# TYPE a wrong\n", "bad type 'wrong'")
        h = "# TYPE h histogram\n"
        self.bad(h + 'h_bucket{le="1"} 2\nh_bucket{le="0.5"} 3\n', "not ascending/cumulative")
        self.bad(h + 'h_bucket{le="1"} 2\nh_sum 1\nh_count 2\n', "no +Inf bucket")
        self.bad(h + 'h_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n', "+Inf 2.0 != _count 3.0")
        self.bad(h + 'h_bucket{le="+Inf"} 2\nh_count 2\n', "no _sum/_count")

    def test_prom_parse_exits(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("a 1\n")
        try:
            with self.assertRaises(SystemExit) as e:
                mon.prom_parse(f.name)
            self.assertEqual(str(e.exception.code), "line 1: sample of a without a TYPE")
        finally:
            os.unlink(f.name)


class CudaKinds(unittest.TestCase):
    def test_table(self):
        src = ('static const struct cuda_fn rt_fns[] = {\n  { .name = "cudaMalloc", .kind = GPUIO_API_MALLOC },\n};\n'
               'static const struct cuda_fn drv_fns[] = {\n'
               + "".join('  { .name = "cuF%d", .kind = GPUIO_API_SYNC },\n' % i for i in range(30))
               + '  DRV_COPY("cuMemcpyHtoD_v2", 1),\n};\n')
        with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
            f.write(src)
        try:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                mon.cuda_kinds(f.name)
        finally:
            os.unlink(f.name)
        import json
        kinds = json.loads(out.getvalue())
        self.assertEqual(kinds["cuF0"], "sync")
        self.assertEqual(kinds["cuMemcpyHtoD_v2"], "memcpy")
        self.assertNotIn("cudaMalloc", kinds)      # the runtime table is not the driver's
        self.assertEqual(len(kinds), 31)


if __name__ == "__main__":
    unittest.main()
