import unittest

from checks import export_gen as eg


class ExportGen(unittest.TestCase):
    def test_timeline_base(self):
        m = {"monotonic_ns": 1000, "vfs": [{"ts_ns": 1200}, {"ts_ns": 990, "x": {"ts_ns": 995}}],
             "block": [{"issue_ns": 10}]}
        self.assertEqual(eg.timeline_base(m), 990)
        self.assertEqual(eg.timeline_base({"monotonic_ns": 5, "vfs": [{"ts_ns": 7}]}), 5)
        self.assertEqual(eg.timeline_base({"monotonic_ns": 5, "a": [[{"b": {"ts_ns": 3}}]]}), 3)

    def test_counter_bytes(self):
        # 1 MiB/s for 1 s, then 2 MiB/s for 0.5 s, then 0
        cs = [(0, {"read_MiBps": 1}), (10**9, {"read_MiBps": 2}), (15 * 10**8, {"read_MiBps": 0})]
        self.assertAlmostEqual(eg.counter_bytes(cs, "read_MiBps"), 2 * 1048576)
        self.assertEqual(eg.counter_bytes(cs[:1], "read_MiBps"), 0)

    def test_decoded(self):
        # one U+FFFD per maximal ill-formed subpart
        self.assertEqual(eg.decoded("c378"), "\ufffdx")
        self.assertEqual(eg.decoded("e282"), "\ufffd")
        self.assertEqual(eg.decoded("eda080"), "\ufffd\ufffd\ufffd")
        self.assertEqual(eg.decoded("c3a9"), "\u00e9")

    def test_parse_textproto(self):
        text = '''packet {
  timestamp: 1000
  clock_snapshot {
    clocks { clock_id: 3 timestamp: 5 }
    clocks { clock_id: 1 timestamp: -2 }
    primary_trace_clock: BUILTIN_CLOCK_MONOTONIC
  }
  name: "a\\"b\\303\\251"
  ok: true
  x: 1.5
}
packet { sequence_flags: 2 }
'''
        t = eg.parse_textproto(text)
        p0, p1 = t["packet"]
        self.assertEqual(p0["timestamp"], [1000])
        cs = p0["clock_snapshot"][0]
        self.assertEqual([(c["clock_id"][0], c["timestamp"][0]) for c in cs["clocks"]], [(3, 5), (1, -2)])
        self.assertEqual(cs["primary_trace_clock"], ["BUILTIN_CLOCK_MONOTONIC"])
        self.assertEqual(p0["name"], ['a"b\u00e9'])
        self.assertEqual(p0["ok"], [True])
        self.assertEqual(p0["x"], [1.5])
        self.assertEqual(p1, {"sequence_flags": [2]})
        with self.assertRaises(SystemExit):
            eg.parse_textproto("packet { a: 1 } @@@")


if __name__ == "__main__":
    unittest.main()
