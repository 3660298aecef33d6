import io
import unittest
from contextlib import redirect_stdout

from checks import mmap_truth
from checks.common import Checks


def fault(ra, nbytes):
    return {"args": {"readahead_offset": ra, "bytes": nbytes}}


class Covers(unittest.TestCase):
    """the pages brought in must cover a file once: gaps and overlaps fail"""

    def run_covers(self, slices, size=4 * 4096):
        check = Checks()
        loop = {"pass": 0, "mode": "seq", "file": "/f", "size": size}
        with redirect_stdout(io.StringIO()):
            mmap_truth._covers(check, loop, slices)
        return check.bad

    def test_whole(self):
        self.assertEqual(self.run_covers([fault(8192, 8192), fault(0, 8192), fault(-1, 0)]), 0)

    def test_gap(self):
        self.assertEqual(self.run_covers([fault(0, 4096), fault(8192, 8192)]), 1)

    def test_overlap(self):
        self.assertEqual(self.run_covers([fault(0, 8192), fault(4096, 12288)]), 1)

    def test_short(self):
        self.assertEqual(self.run_covers([fault(0, 8192)]), 1)


if __name__ == "__main__":
    unittest.main()
