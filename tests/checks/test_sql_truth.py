import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stdout

from checks import sql_truth


class UnionGaps(unittest.TestCase):
    """the gaps t_sql expects: holes between merged busy periods"""

    def test_touching_and_overlapping_merge(self):
        acts = [(0, 10, "a"), (10, 20, "b"), (15, 30, "c"), (40, 50, "d")]
        self.assertEqual(sql_truth.union_gaps(acts), [(30, 40, {"c"}, {"d"})])

    def test_nested_activity_does_not_end_the_period(self):
        acts = [(0, 100, "long"), (10, 20, "short"), (150, 160, "next")]
        self.assertEqual(sql_truth.union_gaps(acts), [(100, 150, {"long"}, {"next"})])

    def test_none(self):
        self.assertEqual(sql_truth.union_gaps([(0, 5, "x")]), [])


class ParseCsv(unittest.TestCase):
    def test_last_block_nulls_and_log_lines(self):
        out = ('[1.2] trace_processor_shell.cc:1 Loading\n"a","b"\n1,"x"\n\n'
               '"n","s","f"\n3,"[NULL]",2.5\n[3.4]            query.cc:191 Query execution time: 1 ms\n')
        self.assertEqual(sql_truth.parse_csv(out), [{"n": 3, "s": None, "f": 2.5}])

    def test_empty(self):
        self.assertEqual(sql_truth.parse_csv("\n\n"), [])


class Checks(unittest.TestCase):
    """the checks fail on wrong rows"""

    def setUp(self):
        self.d = tempfile.mkdtemp()

    def tearDown(self):
        for f in os.listdir(self.d):
            os.unlink(os.path.join(self.d, f))
        os.rmdir(self.d)

    def write(self, name, text):
        p = os.path.join(self.d, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def gen(self, gap_ts):
        man = self.write("m.json", json.dumps({"monotonic_ns": 1000, "pid": 5, "slices": [
            {"cat": "gpu", "name_hex": b"k1".hex(), "track": "GPU 0 \u00b7 stream 7", "ts_ns": 0, "dur_ns": 10},
            {"cat": "gpu", "name_hex": b"k2".hex(), "track": "GPU 0 \u00b7 stream 7 \u00b7 lane 2",
             "ts_ns": 5, "dur_ns": 10},
            {"cat": "gpu", "name_hex": b"k3".hex(), "track": "GPU 0 \u00b7 stream 9", "ts_ns": 30, "dur_ns": 5},
            {"cat": "nvtx", "name_hex": b"r".hex(), "track": "thread 5", "ts_ns": 0, "dur_ns": 99}]}))
        g = self.write("g.csv", '"ts","dur","end_ts","gpu","device","pid","prev_name","next_name"\n'
                       '%d,%d,1030,"GPU 0",0,5,"k2","k3"\n' % (gap_ts, 1030 - gap_ts))
        s = self.write("s.csv", '"ts","dur","end_ts","gpu","device","stream","pid","prev_name","next_name"\n')
        with redirect_stdout(io.StringIO()):
            return sql_truth.gen_gpu_gaps(man, g, s)

    def test_gen_gpu_gaps(self):
        self.assertEqual(self.gen(1015), 0)
        self.assertEqual(self.gen(1010), 1)   # the gap must start where k2 (lane 2) ends

    def test_doc_queries_need_all_three(self):
        md = self.write("d.md", "<!-- t_sql: files -->\n```sql\nSELECT 1;\n```\n"
                                "<!-- t_sql: block -->\n```sql\nSELECT 2;\n```\n")
        with redirect_stdout(io.StringIO()), self.assertRaises(AssertionError):
            sql_truth.doc_queries(md, self.d)


if __name__ == "__main__":
    unittest.main()
