import io
import unittest
from contextlib import redirect_stdout

from checks import stacks_truth
from checks.common import Checks

T = {"file": "/p/prog.py", "busy_func": "burn", "busy_line": 66, "burn_s": 1.0, "burn_cpu_s": 0.8, "tid": 7,
     "read_func": "read_data", "read_line": 38}


def rows(n, func="burn", line=66, tid=7, file="/p/prog.py"):
    return [{"function": func, "file": file, "line": line, "tid": tid}] * n


class Leaf(unittest.TestCase):
    """the samples' innermost frames against the program's busy function"""

    def bad(self, r, hz=100):
        ck = Checks()
        with redirect_stdout(io.StringIO()):
            stacks_truth._leaf_check(ck, T, r, hz)
        return ck.bad

    def test_right(self):
        self.assertEqual(self.bad(rows(80) + rows(8, line=65) + rows(3, func="main")), 0)

    def test_other_function_first(self):
        self.assertGreater(self.bad(rows(40) + rows(60, func="main")), 0)

    def test_same_name_other_file(self):
        self.assertGreater(self.bad(rows(80, file="/usr/lib/python3.11/x.py")), 0)

    def test_other_line(self):
        self.assertEqual(self.bad(rows(70, line=65) + rows(10)), 1)

    def test_too_few(self):
        self.assertEqual(self.bad(rows(63)), 1)

    def test_too_many(self):
        self.assertEqual(self.bad(rows(94)), 1)

    def test_other_thread(self):
        self.assertEqual(self.bad(rows(70) + rows(10, tid=8)), 1)

    def test_none(self):
        self.assertGreater(self.bad([]), 0)

    def test_site_text(self):
        self.assertEqual(stacks_truth.site_of(T, "read"), "/p/prog.py:38 read_data")


if __name__ == "__main__":
    unittest.main()
