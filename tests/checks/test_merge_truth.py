import unittest

from checks import merge_truth as mt


class MergeTruth(unittest.TestCase):
    def test_tp_blocks(self):
        out = ('"raw_id","name","pid"\n0,"hostA",123\n1,"hostB",456\n\n'
               '"machine_id","count(*)"\n0,2000\n1,2000\n\n"count(*)"\n2\n')
        b = mt.tp_blocks(out)
        self.assertEqual(b[0][1:], [["0", "hostA", "123"], ["1", "hostB", "456"]])
        self.assertEqual(b[1][1:], [["0", "2000"], ["1", "2000"]])
        self.assertEqual(b[2][1:], [["2"]])


if __name__ == "__main__":
    unittest.main()
