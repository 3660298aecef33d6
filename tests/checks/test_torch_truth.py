import unittest

from checks.torch_truth import expected_steps


class TorchTruth(unittest.TestCase):
    def test_expected_steps(self):
        self.assertEqual(expected_steps(10, 4), (3, 10))               # 4 + 4 + 2
        self.assertEqual(expected_steps(10, 4, epochs=2), (6, 20))
        self.assertEqual(expected_steps(8, 4), (2, 8))
        self.assertEqual(expected_steps(40, 2, steps=5), (5, 10))      # stopped mid-epoch
        self.assertEqual(expected_steps(10, 4, steps=4), (4, 14))      # into the second epoch


if __name__ == "__main__":
    unittest.main()
