import unittest

from checks import batch_truth as bt


def read(off):
    return {"args": {"offset": off}}


class BatchTruth(unittest.TestCase):
    def test_expected_offsets(self):
        # 3 blocks: reads 0..4 at blocks 0 1 2 0 1
        self.assertEqual(bt.expected_offsets(5, 3 * 4096 + 100),
                         {0: 2, 4096: 2, 8192: 1})

    def test_reads_match(self):
        size = 3 * 4096
        ok, _ = bt.reads_match([read(0), read(4096), read(8192), read(0)], 4, size)
        self.assertTrue(ok)
        # one missing, one read twice, one at an offset never read
        self.assertFalse(bt.reads_match([read(0), read(4096), read(8192)], 4, size)[0])
        self.assertFalse(bt.reads_match([read(0), read(0), read(4096), read(8192), read(0)],
                                        4, size)[0])
        self.assertFalse(bt.reads_match([read(0), read(4096), read(8192), read(100)], 4, size)[0])


if __name__ == "__main__":
    unittest.main()
