import os
import tempfile
import unittest

from checks import reader_log as rl


class ReaderLog(unittest.TestCase):
    def test_parse_log(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("0 100 200 0 512\n1 300 450 512 512\n")
        try:
            self.assertEqual(rl.parse_log(f.name), [(0, 100, 200, 0, 512), (1, 300, 450, 512, 512)])
        finally:
            os.unlink(f.name)

    def test_logged_within(self):
        log = [(0, 90, 120, 0, 512), (1, 100, 150, 512, 512), (2, 160, 205, 1024, 512),
               (3, 180, 200, 1536, 512), (4, 210, 220, 2048, 512)]
        # begun at or after 100, returned by 100 + 100
        self.assertEqual(rl.logged_within(log, 100, 100), [1, 3])
        self.assertEqual(rl.logged_within(log, 100, 105), [1, 2, 3])
        self.assertEqual(rl.logged_within(log, 300, 10), [])

    def test_is_run(self):
        self.assertTrue(rl.is_run([5, 6, 7]))
        self.assertTrue(rl.is_run([0]))
        self.assertFalse(rl.is_run([]))
        self.assertFalse(rl.is_run([5, 7]))
        self.assertFalse(rl.is_run([6, 5]))
        self.assertFalse(rl.is_run([5, 5]))


if __name__ == "__main__":
    unittest.main()
