import unittest

from checks import fio_truth as ft

# `filefrag -v -b512` of a file in two extents (the second one not where the
# first one's end would put it)
FRAG = """Filesystem type is: ef53
File size of /mnt/dread.0.0 is 4194304 (8192 blocks of 512 bytes)
 ext:     logical_offset:        physical_offset: length:   expected: flags:
   0:        0..    4095:     264192..    268287:   4096:
   1:     4096..    8191:     532480..    536575:   4096:     268288: last,eof
/mnt/dread.0.0: 2 extents found
"""


def job(name, rb=0, rn=0, wb=0, wn=0, error=0):
    return {"jobname": name, "error": error, "read": {"io_bytes": rb, "total_ios": rn},
            "write": {"io_bytes": wb, "total_ios": wn}}


class FioTruth(unittest.TestCase):
    def test_job_totals_sum_clones(self):
        rep = ft.job_totals({"jobs": [job("a", rb=4096, rn=1), job("a", rb=8192, rn=2), job("b", wb=512, wn=1)]})
        self.assertEqual(rep["a"], {"read": [12288, 3], "write": [0, 0]})
        self.assertEqual(rep["b"], {"read": [0, 0], "write": [512, 1]})
        self.assertEqual(sorted(rep), ["a", "b"])

    def test_job_io(self):
        fio = {"jobs": [job("a", rb=4096, rn=1), job("bad", error=5)]}
        self.assertEqual(ft.job_io(fio, "a", "read"), (4096, 1))
        with self.assertRaises(AssertionError):
            ft.job_io(fio, "bad", "read")
        with self.assertRaises(AssertionError):
            ft.job_io(fio, "missing", "read")

    def test_parse_filefrag(self):
        self.assertEqual(ft.parse_filefrag(FRAG), [(0, 264192, 4096), (4096, 532480, 4096)])
        self.assertEqual(ft.parse_filefrag("ff.bin: 0 extents found\n"), [])

    def test_sector_of(self):
        ext = ft.parse_filefrag(FRAG)
        self.assertEqual(ft.sector_of(ext, 0), 264192)
        self.assertEqual(ft.sector_of(ext, 511), 264192)
        self.assertEqual(ft.sector_of(ext, 4096), 264200)
        self.assertEqual(ft.sector_of(ext, 4095 * 512), 268287)
        self.assertEqual(ft.sector_of(ext, 4096 * 512), 532480)      # the second extent
        self.assertEqual(ft.sector_of(ext, 8191 * 512 + 100), 536575)
        self.assertIsNone(ft.sector_of(ext, 8192 * 512))             # past the end


if __name__ == "__main__":
    unittest.main()
