import unittest

from checks import hosts_truth as ht

MS = 1_000_000


def step(wait_ms, cpu_ms, rd_ms):
    return {"wait_s": wait_ms / 1e3, "wait_cpu_ns": cpu_ms * MS, "wait_run_delay_ns": rd_ms * MS}


def prog(steps, run_ms, rd_ms, end_mono):
    return {"steps": steps, "main_schedstat_end": [run_ms * MS, rd_ms * MS, 0],
            "main_schedstat_end_mono_ns": end_mono}


class HostsTruth(unittest.TestCase):
    def test_own_sleep(self):
        p = prog([step(100, 10, 30), step(10, 8, 5)], 0, 0, 0)
        self.assertEqual(ht.own_sleep(p), 60 * MS)      # the second: more CPU and delay than wait
        self.assertEqual(ht.own_run_delay(p), 35 * MS)

    def test_candidates(self):
        # rank 1 surely waited more than rank 0; rank 2's bounds reach rank 1's
        self.assertEqual(ht.straggler_candidates([(0.01, 0.05), (0.20, 0.30), (0.10, 0.21)]), [1, 2])
        self.assertEqual(ht.straggler_candidates([(0.01, 0.05), (0.20, 0.30)]), [1])

    def test_cause(self):
        # 1 s asleep in next(), 50 ms run delay there; 200 ms run delay over a
        # 3 s life with 1.5 s on a CPU: data clearly first
        p = prog([step(1100, 50, 50)], 1500, 200, 10 * MS)
        self.assertEqual(ht.cause_expected(p, 3000 * MS, 10 * MS)[0], "waiting_for_data")
        # 1.8 s run delay over a 4 s life (ranks importing torch on too few
        # CPUs), 1 s on a CPU: runnable first, ahead of the 0.2 s left
        p = prog([step(1100, 50, 50)], 1000, 1800, 10 * MS)
        self.assertEqual(ht.cause_expected(p, 4000 * MS, 10 * MS)[0], "runnable")
        # the same with 3 s more of life, asleep who knows where: not data, the rest unknown
        self.assertEqual(ht.cause_expected(p, 7000 * MS, 10 * MS)[0], "not waiting_for_data")
        # run delay near the data wait: not ordered
        p = prog([step(1100, 50, 50)], 1000, 1000, 10 * MS)
        self.assertIsNone(ht.cause_expected(p, 3200 * MS, 10 * MS)[0])
        # a long tail after the last reading widens the runnable bound: not ordered either
        p = prog([step(1100, 50, 50)], 1500, 200, 10 * MS)
        self.assertIsNone(ht.cause_expected(p, 3000 * MS, 1000 * MS)[0])


if __name__ == "__main__":
    unittest.main()
