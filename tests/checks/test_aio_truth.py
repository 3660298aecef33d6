import os
import tempfile
import unittest

from checks import aio_truth


class AioTruth(unittest.TestCase):
    def test_parse_out(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("aio_rw writes=10 write_bytes=40960 efault=1 submits=25\n")
        try:
            self.assertEqual(aio_truth.parse_out(f.name),
                             {"writes": 10, "write_bytes": 40960, "efault": 1, "submits": 25})
        finally:
            os.unlink(f.name)

    def test_max_overlap(self):
        ev = lambda ts, dur: {"ts": ts, "dur": dur}
        self.assertEqual(aio_truth.max_overlap([]), 0)
        # back to back: one at a time (an end and a start at the same instant)
        self.assertEqual(aio_truth.max_overlap([ev(0, 1), ev(1, 1), ev(2, 1)]), 1)
        self.assertEqual(aio_truth.max_overlap([ev(0, 10), ev(1, 2), ev(2, 5), ev(20, 1)]), 3)

    def test_on_lane(self):
        self.assertTrue(aio_truth.on_lane({"pid": 7, "tid": 0x20000001}))
        self.assertFalse(aio_truth.on_lane({"pid": 7, "tid": 7}))


if __name__ == "__main__":
    unittest.main()
