import unittest

from checks import wait_truth as wt


class WaitTruth(unittest.TestCase):
    def test_expected_blocked(self):
        ns = {"sleep": 1e6, "futex": 2e6, "poll": 3e6, "pipe": 4e6, "socket": 5e6, "child": 6e6}
        e = wt.expected_blocked(ns)
        self.assertEqual(e[("poll", "poll", "pipe")], 3000.0)
        self.assertEqual(e[("socket", "recvfrom", "socket")], 5000.0)
        self.assertEqual(e[("child", "wait4", None)], 6000.0)
        self.assertEqual(len(e), 6)

    def test_within(self):
        self.assertTrue(wt.within(115000.0, 100000.0))      # 10% + 5 ms
        self.assertFalse(wt.within(116000.0, 100000.0))
        self.assertTrue(wt.within(0.0, 4000.0))


if __name__ == "__main__":
    unittest.main()
