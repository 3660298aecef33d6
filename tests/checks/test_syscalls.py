import os
import unittest

from checks import syscalls as sc


def ev(name, dur=1.0, **args):
    return {"name": name, "dur": dur, "args": args}


class Syscalls(unittest.TestCase):
    def test_flag_names(self):
        self.assertEqual(sc.flag_names(os.O_RDONLY), {"O_RDONLY"})
        self.assertEqual(sc.flag_names(os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                         {"O_WRONLY", "O_CREAT", "O_TRUNC"})
        self.assertEqual(sc.flag_names(os.O_RDWR | os.O_LARGEFILE | os.O_CLOEXEC), {"O_RDWR", "O_CLOEXEC"})

    def test_match(self):
        x = {"call": "pread64", "fd": 3, "bytes": 10, "offset": 4}
        self.assertIsNone(sc.mismatch(ev("pread64", fd=3, bytes=10, offset=4), x))
        self.assertEqual(sc.mismatch(ev("read", fd=3, bytes=10, offset=4), x), "name")
        self.assertEqual(sc.mismatch(ev("pread64", fd=3, bytes=9, offset=4), x), "bytes=9, want 10")

    def test_nothing_invented(self):
        self.assertIn("no file offset", sc.mismatch(ev("read", fd=3, bytes=1, offset=0),
                                                    {"call": "read", "fd": 3, "bytes": 1}))
        self.assertEqual(sc.mismatch(ev("read", fd=3, bytes=0, errno=9), {"call": "read", "fd": 3, "errno": 9}),
                         "bytes present on a failed call")
        self.assertIn("on a call that succeeded", sc.mismatch(ev("read", fd=3, errno=9), {"call": "read", "fd": 3}))
        self.assertEqual(sc.mismatch(ev("read", dur=-1, fd=3), {"call": "read", "fd": 3}), "negative dur")

    def test_flags_and_pipes(self):
        x = {"call": "openat", "flags": os.O_WRONLY | os.O_CREAT}
        self.assertIsNone(sc.mismatch(ev("openat", flags="O_WRONLY|O_CREAT|O_LARGEFILE"), x))
        self.assertIn("flags", sc.mismatch(ev("openat", flags="O_WRONLY"), x))
        self.assertIn("ftype", sc.mismatch(ev("write", fd=5), {"call": "write", "fd": 5, "pipe": True}))
        self.assertIsNone(sc.mismatch(ev("write", fd=5, ftype="pipe"), {"call": "write", "fd": 5, "pipe": True}))


if __name__ == "__main__":
    unittest.main()
