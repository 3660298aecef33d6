import json
import os
import tempfile
import unittest

from checks import sched_truth as st


class SchedTruth(unittest.TestCase):
    def test_within(self):
        self.assertTrue(st.within(101, 100, 0.01, 0))
        self.assertFalse(st.within(102, 100, 0.01, 0))
        self.assertTrue(st.within(2_000_000, 0, 0.03, 2_000_000))
        self.assertFalse(st.within(2_000_001, 0, 0.03, 2_000_000))

    def test_json_states(self):
        info = {"name": "gpuio trace info", "ph": "i", "ts": 0, "args": {"timeline_origin_ns": 1000}}

        def st_(name, tid, ts_us, dur_us, **a):
            return {"ph": "X", "cat": "sched", "name": name, "ts": ts_us, "dur": dur_us,
                    "args": dict(tid=tid, **a)}
        ev = [info,
              st_("Running", 7, 0.0, 0.999),               # 1000 .. 2000 ns (1 ns short)
              st_("Runnable", 7, 1.0, 0.499, start_assumed=True),  # 2000 .. 2500
              st_("Sleeping", 7, 1.5, 9.999, waker_tid=1),  # 2500 .. 12500: across the read
              st_("Running", 8, 2.0, 20.0)]                 # ends after the read
        js, last_sleep, assumed = st.json_states(ev, 5000)
        self.assertEqual(js, {(7, "Running"): 1000, (7, "Runnable"): 500})
        self.assertEqual(last_sleep, {7: {"tid": 7, "waker_tid": 1}})
        self.assertEqual(assumed, {7})

    def test_kernel_sums(self):
        truth = {"pid": 5, "read_mono_ns": 0,
                 "threads": [{"tid": 6, "run_ns": 400_000_000, "wait_ns": 100_000_000, "slices": 9}]}

        def run(row, *args):
            with tempfile.TemporaryDirectory() as d:
                t, r = os.path.join(d, "t.json"), os.path.join(d, "r.json")
                json.dump(truth, open(t, "w"))
                json.dump({"thread_states": [dict(pid=5, tid=6, exited=True, **row)]}, open(r, "w"))
                return st.kernel_sums(t, r, "20", "10", *args)
        good = dict(on_cpu_us=401_000.0, runnable_us=101_000.0, asleep_us=250_000.0)
        self.assertEqual(run(good), 0)
        # on cpu 2% over: off at 1%, within at 2%; and within 1% with 10 ms of steal
        over = dict(good, on_cpu_us=408_000.0, runnable_us=94_000.0)
        self.assertEqual(run(over), 1)
        self.assertEqual(run(over, "5", "0", "2"), 0)
        self.assertEqual(run(over, "5", "0.01"), 0)
        # runnable past the exit tail, asleep under the program's own sleeps, no sums at all
        self.assertEqual(run(dict(good, runnable_us=110_000.0)), 1)
        self.assertEqual(run(dict(good, asleep_us=150_000.0)), 1)
        self.assertEqual(run({}), 1)

    def test_match_states(self):
        want = [("Running", 5, 100, 101), ("Sleeping", 5, 101, 103), ("Running", 5, 103, 200)]
        # the JSON at another origin (+1000), the first state 1 ns short (the gap);
        # after the last generated state the thread's next one, open to the end
        got = [("Running", 5, 1100, 1100), ("Sleeping", 5, 1101, 1103), ("Running", 5, 1103, 1200),
               ("Sleeping", 5, 1200, 1500)]
        self.assertEqual(st.match_states(want, got), [])
        # a state that ends later than generated: missing, and the one there is extra
        bad = st.match_states(want, got[:2] + [("Running", 5, 1103, 1201), got[3]])
        self.assertEqual(bad, ["missing Running of tid 5 at 103..200 (JSON there: [201])",
                               "state not generated: tid 5 Running at 103",
                               "tid 5: Running 1103..1201 overlaps Sleeping from 1200"])
        # short by 2 ns is missing too
        bad = st.match_states(want, [("Running", 5, 1100, 1099)] + got[1:])
        self.assertEqual(bad[0], "missing Running of tid 5 at 100..101 (JSON there: [99])")
        # a state nobody generated
        bad = st.match_states(want, got + [("Runnable", 5, 1150, 1160)])
        self.assertIn("state not generated: tid 5 Runnable at 150", bad)

if __name__ == "__main__":
    unittest.main()
