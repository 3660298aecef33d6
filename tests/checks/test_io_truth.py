import unittest

from checks import io_truth


class IoTruth(unittest.TestCase):
    def test_parse_kv(self):
        self.assertEqual(io_truth.parse_kv("pages=4096 resident_before_pass1=3\nresident_before_pass2=4096\n"),
                         {"pages": 4096, "resident_before_pass1": 3, "resident_before_pass2": 4096})
        with self.assertRaises(ValueError):
            io_truth.parse_kv("pages=many")


if __name__ == "__main__":
    unittest.main()
