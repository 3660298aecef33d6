import contextlib
import copy
import io
import json
import os
import tempfile
import unittest

from checks import shapes_truth as st

MS = 1000000          # ns


def steps(t, waits_ms, compute_ms=5):
    """steps from T (ns): each waits W ms then computes COMPUTE ms"""
    out = []
    for k, w in enumerate(waits_ms):
        t0, t1 = t, t + w * MS
        t2 = t1 + compute_ms * MS
        out.append({"step": k, "wait_s": w / 1e3, "compute_s": compute_ms / 1e3, "t0_mono_ns": t0,
                    "t1_mono_ns": t1, "t2_mono_ns": t2, "samples": 4, "bytes": 4 * 65536, "source": k % 2})
        t = t2
    return out


def prog(pid, waits_ms, t=10 * 1000 * MS, workers=(), **kw):
    st_ = steps(t, waits_ms)
    p = {"pid": pid, "main_tid": pid, "main_comm": "python3", "steps": st_,
         "total_wait_s": sum(s["wait_s"] for s in st_), "loop_start_mono_ns": st_[0]["t0_mono_ns"],
         "loop_end_mono_ns": st_[-1]["t2_mono_ns"], "worker_pids": list(workers),
         "scenario": {"mode": "launch"}}
    p["loop_s"] = (p["loop_end_mono_ns"] - p["loop_start_mono_ns"]) / 1e9
    p.update(kw)
    return p


def loop_of(p, lo, hi, wakers, meanwhile="reading_files", **kw):
    """the loop object a right report gives for program P"""
    span_us = st.clip([(p["loop_start_mono_ns"], p["loop_end_mono_ns"])], lo, hi) / 1e3
    wait_us = st.own_waits(p, lo, hi) * 1e6
    lu = {k: 0.0 for k in st.LOOP_KEYS}
    lu["waiting_for_data"] = wait_us
    lu["on_cpu"] = span_us - wait_us
    m = {k: 0.0 for k in st.MEANWHILE_KEYS}
    m[meanwhile], m["on_cpu"] = 0.8 * wait_us, 0.2 * wait_us
    lp = {"pid": p["pid"], "tid": p["main_tid"], "thread": p["main_comm"], "process": "python3",
          "headline": "the loop waited", "start_us": 0.0, "span_us": span_us, "loop_us": lu,
          "wakers": wakers, "wakers_meanwhile_us": m, "peers": [], "recommendations": [], "files": [],
          "steps": []}
    lp.update(kw)
    return lp


def proc_wakers(pids):
    return [{"pid": x, "tid": x, "kind": "process", "wakes": 3, "wait_us": 1000.0 * (i + 1)}
            for i, x in enumerate(pids)]


def report_of(*loops, **kw):
    r = {"loops": list(loops), "wait": copy.deepcopy(loops[0]) if loops else None, "files": [],
         "recommendations": []}
    r.update(kw)
    return r


LO, HI = 0, 1 << 62


def run(shape, p, r, lo=LO, hi=HI):
    """(status, output) of shapes_truth._report"""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = st._report(st.Judge(), shape, p, r, lo, hi)
    return rc, out.getvalue()


class Helpers(unittest.TestCase):
    def test_attach_from(self):
        # steps' waits [t0, t1]; window from 100 ms; anchor 0
        p = {"steps": [{"t0_mono_ns": 50 * MS, "t1_mono_ns": 160 * MS},
                       {"t0_mono_ns": 200 * MS, "t1_mono_ns": 300 * MS}]}
        lo, hi = 100 * MS, 400 * MS
        for start_ms, want_ms, bad in ((120, 120, 0), (170, 160, 0), (90, 100, 0), (185, 160, 1)):
            J = st.Judge()
            with contextlib.redirect_stdout(io.StringIO()):
                got = st._attach_from(J, p, {"start_us": start_ms * 1000.0}, lo, hi, 0, "x")
            self.assertEqual((got, J.bad), (want_ms * MS, bad), start_ms)

    def test_clip(self):
        self.assertEqual(st.clip([(0, 10), (20, 30)], 5, 25), 10)
        self.assertEqual(st.clip([(0, 10)], 10, 20), 0)
        self.assertEqual(st.clip([(0, 10)], 20, 30), 0)
        self.assertEqual(st.clip([(5, 8)], 0, 100), 3)

    def test_own_waits_and_span(self):
        p = prog(1, [100, 50, 10], t=0)
        self.assertAlmostEqual(st.own_waits(p, LO, HI), 0.160)
        # window from 120 ms: the second wait is [105, 155] ms, the third [160, 170]
        self.assertAlmostEqual(st.own_waits(p, 120 * MS, HI), 0.045)
        self.assertAlmostEqual(st.own_span(p, 120 * MS, 150 * MS), 0.030)

    def test_own_asleep_waits(self):
        p = prog(1, [100, 50, 10], t=0)
        self.assertAlmostEqual(st.own_asleep_waits(p, LO, HI), 0.160)     # no CPU recorded
        for s in p["steps"]:
            s["wait_cpu_ns"] = 6 * MS
            s["wait_run_delay_ns"] = 4 * MS
        self.assertAlmostEqual(st.own_asleep_waits(p, LO, HI), 0.130)
        # from 120 ms: 35 of the second wait's 50 ms (7 of its 10 ms off), none of the third
        self.assertAlmostEqual(st.own_asleep_waits(p, 120 * MS, HI), 0.028)

    def test_within(self):
        self.assertTrue(st.within(1.0, 1.0))
        self.assertTrue(st.within(1.119, 1.0))         # 10% + 20 ms
        self.assertFalse(st.within(1.13, 1.0))
        self.assertTrue(st.within(0.019, 0.0))
        self.assertFalse(st.within(0.021, 0.0))

    def test_dig(self):
        d = {"loops": [{"loop_us": {"waiting_for_data": 5}}]}
        self.assertEqual(st.dig(d, "loops[0].loop_us.waiting_for_data"), 5)
        for path, missing in (("loops[1].tid", "loops[1]"), ("loops[0].peers", "loops[0].peers"),
                              ("stragglers", "stragglers"), ("loops[0].loop_us.socket", "loops[0].loop_us.socket")):
            with self.assertRaises(st.Missing) as e:
                st.dig(d, path)
            self.assertEqual(str(e.exception), missing)

    def test_requests_in(self):
        log = [{"start_mono_ns": a, "end_mono_ns": b, "bytes": 10} for a, b in ((0, 10), (5, 20), (30, 40))]
        self.assertEqual(st.requests_in(log, 0, 25), (2, 2, 20))
        self.assertEqual(st.requests_in(log, 8, 35), (0, 3, 0))
        self.assertEqual(st.requests_in(log, 0, 100), (3, 3, 30))

    def test_export_counts(self):
        ev = [{"name": "gpuio trace info", "ph": "i", "ts": 0, "args": {"vfs_events": 1, "block_requests": 0,
                                                                          "flows": 0}},
              {"name": "read", "ph": "X", "cat": "vfs", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": {}}]
        with tempfile.TemporaryDirectory() as d:
            tr, log = os.path.join(d, "t.json"), os.path.join(d, "log")
            with open(tr, "w") as f:
                json.dump(ev, f)
            for said, want in (("2 events (1 vfs, 0 block, 0 flows)", 0), ("2 events (2 vfs, 0 block, 0 flows)", 1),
                               ("3 events (1 vfs, 0 block, 0 flows)", 1)):
                with open(log, "w") as f:
                    f.write("gpuio: wrote %s: %s, 0 unresolved paths, 0 dropped\n" % (tr, said))
                with contextlib.redirect_stdout(io.StringIO()):
                    self.assertEqual(st.export_counts(log, tr), want, said)


class Report(unittest.TestCase):
    def test_no_loops_is_a_named_failure(self):
        p = prog(100, [100, 100], workers=[101, 102])
        rc, out = run("attach", p, {"wait": None})
        self.assertEqual(rc, 1)
        self.assertIn("the report has no loops", out)
        r = report_of(loop_of(p, LO, HI, proc_wakers([101, 102])))
        del r["loops"][0]["thread"], r["loops"][0]["loop_us"]["socket"]
        rc, out = run("attach", p, r)
        self.assertEqual(rc, 1)
        self.assertIn("the report has no loops[0].thread", out)
        self.assertIn("missing ['socket']", out)

    def test_attach(self):
        p = prog(100, [100, 200, 50, 300], workers=[101, 102])
        lo, hi = p["steps"][1]["t0_mono_ns"] + 50 * MS, p["steps"][3]["t0_mono_ns"] + 100 * MS
        r = report_of(loop_of(p, lo, hi, proc_wakers([101, 102])))
        self.assertEqual(run("attach", p, r, lo, hi)[0], 0)
        # the whole run's waits, not the window's: outside the tolerance
        bad = copy.deepcopy(r)
        bad["loops"][0]["loop_us"]["waiting_for_data"] = st.own_waits(p, LO, HI) * 1e6
        bad["wait"] = bad["loops"][0]
        rc, out = run("attach", p, bad, lo, hi)
        self.assertEqual(rc, 1)
        self.assertIn("FAIL attach: asleep waiting for data", out)
        # a worker's loop
        bad = report_of(dict(r["loops"][0], pid=101, tid=101))
        rc, out = run("attach", p, bad, lo, hi)
        self.assertEqual(rc, 1)
        self.assertIn("one loop on pid 100 tid 100 (the main thread), found 0", out)
        # another thread of the process
        bad = report_of(dict(r["loops"][0], tid=107))
        self.assertEqual(run("attach", p, bad, lo, hi)[0], 1)
        # "wait" not loops[0]
        bad = copy.deepcopy(r)
        bad["wait"]["span_us"] += 1
        rc, out = run("attach", p, bad, lo, hi)
        self.assertIn("FAIL attach: wait is loops[0]", out)

    def test_tolerance(self):
        p = prog(100, [500, 500], workers=[101])
        r = report_of(loop_of(p, LO, HI, proc_wakers([101])))
        for got_s, want in ((1.0, 0), (1.119, 0), (0.881, 0), (1.121, 1), (0.879, 1)):
            r["loops"][0]["loop_us"]["waiting_for_data"] = got_s * 1e6
            r["loops"][0]["loop_us"]["on_cpu"] = r["loops"][0]["span_us"] - got_s * 1e6
            r["wait"] = r["loops"][0]
            self.assertEqual(run("attach", p, r)[0], want, got_s)

    def test_threads(self):
        p = prog(200, [100, 100, 100, 100], reader_tids=[201, 202])
        p["readers"] = [{"tid": 201}, {"tid": 202}]
        for s in p["steps"]:
            s["woke"], s["put_mono_ns"] = True, s["t1_mono_ns"] - 1000
        wk = [{"pid": 200, "tid": t, "kind": "thread", "wakes": 2, "wait_us": 2e5} for t in (201, 202)]
        r = report_of(loop_of(p, LO, HI, wk))
        self.assertEqual(run("threads", p, r)[0], 0)
        for change, msg in (({"kind": "process"}, "wakers' kind"), ({"tid": 203}, "woken by tids"),
                            ({"pid": 300}, "the program's own")):
            bad = copy.deepcopy(r)
            bad["loops"][0]["wakers"][0].update(change)
            bad["wait"] = bad["loops"][0]
            rc, out = run("threads", p, bad)
            self.assertEqual(rc, 1, change)
            self.assertIn(msg, out)
        bad = copy.deepcopy(r)
        del bad["loops"][0]["wakers"][1]            # reader 202 handed batches too
        bad["wait"] = bad["loops"][0]
        rc, out = run("threads", p, bad)
        self.assertIn("FAIL threads: every reader that handed", out)
        bad = copy.deepcopy(r)
        m = bad["loops"][0]["wakers_meanwhile_us"]
        m["reading_files"], m["other"] = m["other"], m["reading_files"]
        bad["wait"] = bad["loops"][0]
        rc, out = run("threads", p, bad)
        self.assertIn("FAIL threads: the wakers meanwhile mostly reading_files", out)

    def test_noworkers(self):
        p = prog(300, [100, 100])
        p["reads"] = {"log": [{"start_mono_ns": s["t0_mono_ns"] + MS, "end_mono_ns": s["t1_mono_ns"] - MS}
                              for s in p["steps"]]}
        want_us = st.clip([(e["start_mono_ns"], e["end_mono_ns"]) for e in p["reads"]["log"]], LO, HI) / 1e3
        lp = loop_of(p, LO, HI, [], recommendations=[{"kind": "no_workers", "text": "2 workers would hide 196 ms"}])
        lp["loop_us"].update(file_io=want_us, waiting_for_data=0.0, on_cpu=lp["span_us"] - want_us)
        r = report_of(lp)
        self.assertEqual(run("noworkers", p, r)[0], 0)
        bad = copy.deepcopy(r)
        bad["loops"][0]["recommendations"] = [{"kind": "data_storage", "text": "1 s"}]
        bad["wait"] = bad["loops"][0]
        rc, out = run("noworkers", p, bad)
        self.assertIn("a no_workers recommendation", out)
        bad = copy.deepcopy(r)
        bad["loops"][0]["loop_us"]["file_io"] = want_us * 1.2 + 30000
        bad["wait"] = bad["loops"][0]
        rc, out = run("noworkers", p, bad)
        self.assertIn("FAIL noworkers: file_io", out)

    def test_memmap(self):
        p = prog(400, [100, 100], workers=[401, 402])
        size = 1 << 20
        p["workers"] = [{"pid": 401, "log": [{"file": 0, "offset": 0, "bytes": size, "start_mono_ns": 1,
                                              "end_mono_ns": 2}]}]
        p["mmap_files"] = [{"path": "/d/sample-00000.bin", "size": size, "resident_before": 0,
                            "resident_after": size, "touched": size}]
        r = report_of(loop_of(p, LO, HI, proc_wakers([401, 402]), meanwhile="page_faults"),
                      files=[{"path": "/d/sample-00000.bin", "read_bytes": size}])
        self.assertEqual(run("memmap", p, r)[0], 0)
        for rb in (size - 4096, size + 4096):
            bad = copy.deepcopy(r)
            bad["files"][0]["read_bytes"] = rb
            rc, out = run("memmap", p, bad)
            self.assertEqual(rc, 1, rb)
            self.assertIn("read_bytes %d" % rb, out)
        bad = copy.deepcopy(r)
        bad["files"] = []
        self.assertIn("in the report's files", run("memmap", p, bad)[1])
        # attached: a file all of whose samples were copied before the window
        # may be absent; one with a sample copied inside it may not
        p["scenario"]["mode"] = "attach"
        lo = 10
        self.assertEqual(run("memmap", p, bad, lo=lo)[0], 1)  # no file brought in at all
        p["mmap_files"].append(dict(p["mmap_files"][0], path="/d/sample-00001.bin"))
        p["workers"][0]["log"].append({"file": 1, "offset": 0, "bytes": size, "start_mono_ns": 20,
                                       "end_mono_ns": 30})
        ok = copy.deepcopy(r)
        ok["files"] = [{"path": "/d/sample-00001.bin", "read_bytes": size}]
        rc, out = run("memmap", p, ok, lo=lo)
        self.assertEqual(rc, 0, out)
        self.assertIn("sample-00000.bin not in the report's files, first touched before the window", out)
        p["workers"][0]["log"].append(dict(p["workers"][0]["log"][0], start_mono_ns=11, end_mono_ns=12))
        rc, out = run("memmap", p, ok, lo=lo)
        self.assertEqual(rc, 0, out)
        p["workers"][0]["log"][0].update(start_mono_ns=11, end_mono_ns=12)
        rc, out = run("memmap", p, ok, lo=lo)
        self.assertEqual(rc, 1)
        self.assertIn("sample-00000.bin in the report's files (2 samples copied inside the window)", out)

    def test_remote(self):
        p = prog(500, [100, 100], workers=[501, 502], port=4321)
        p["workers"] = [{"pid": 501, "log": [{"start_mono_ns": 1, "end_mono_ns": 2, "bytes": 10}] * 4}]
        p["scenario"]["server"] = {"requests": 4, "bytes_sent": 40}
        peer = {"peer": "127.0.0.1:4321", "bytes": 45, "requests": 4, "us": 1000.0}
        lp = loop_of(p, LO, HI, proc_wakers([501, 502]), meanwhile="network", peers=[peer],
                     recommendations=[{"kind": "remote_data", "text": "waited 200 ms on 127.0.0.1:4321"}])
        r = report_of(lp)
        self.assertEqual(run("remote", p, r)[0], 0)
        for change, msg in (({"requests": 5}, "5 requests to"), ({"bytes": 39}, "39 bytes with"),
                            ({"peer": "127.0.0.1:80"}, "peer 127.0.0.1:4321 in")):
            bad = copy.deepcopy(r)
            bad["loops"][0]["peers"][0].update(change)
            bad["wait"] = bad["loops"][0]
            rc, out = run("remote", p, bad)
            self.assertEqual(rc, 1, change)
            self.assertIn(msg, out)
        bad = copy.deepcopy(r)
        del bad["loops"][0]["peers"]
        bad["wait"] = bad["loops"][0]
        self.assertIn("the report has no loops[0].peers", run("remote", p, bad)[1])

    def test_pin_memory(self):
        p = prog(600, [100, 100], workers=[601, 602], pin_thread_tid=605)
        wk = [{"pid": 600, "tid": 605, "kind": "thread", "wakes": 4, "wait_us": 9e4},
              {"pid": 600, "tid": 606, "kind": "thread", "wakes": 1, "wait_us": 1e4}]
        r = report_of(loop_of(p, LO, HI, wk))
        self.assertEqual(run("pin_memory", p, r)[0], 0)
        bad = report_of(loop_of(p, LO, HI, proc_wakers([601, 602])))
        self.assertIn("woken mostly by the pin-memory thread", run("pin_memory", p, bad)[1])

    def ranks(self):
        a = prog(700, [20, 20, 20], workers=[701, 702], rank=0)
        b = prog(800, [200, 200, 200], workers=[801, 802], rank=1)
        pr = {"ranks": [a, b], "scenario": {"mode": "launch"}}
        la, lb = loop_of(a, LO, HI, proc_wakers([701, 702])), loop_of(b, LO, HI, proc_wakers([801, 802]))
        lb["loop_us"]["futex"] = 1.0              # the largest non-CPU part after the wait
        lb["loop_us"]["on_cpu"] -= 1.0

        def strag(lp):
            return {"pid": lp["pid"], "tid": lp["tid"], "waiting_for_data_us": lp["loop_us"]["waiting_for_data"],
                    "span_us": lp["span_us"], "cause": "waiting_for_data",
                    "waited_pct": 100.0 * lp["loop_us"]["waiting_for_data"] / lp["span_us"]}
        return pr, report_of(lb, la, stragglers=[strag(lb), strag(la)])

    def test_ranks(self):
        pr, r = self.ranks()
        rc, out = run("ranks", pr, r)
        self.assertEqual(rc, 0, out)
        # the slow rank's loop woken by the other rank's worker
        bad = copy.deepcopy(r)
        bad["loops"][0]["wakers"][0]["pid"] = 701
        bad["wait"] = bad["loops"][0]
        rc, out = run("ranks", pr, bad)
        self.assertEqual(rc, 1)
        self.assertIn("rank 1: no waker of another rank ([701])", out)
        # stragglers in the wrong order / the wrong first
        bad = copy.deepcopy(r)
        bad["stragglers"].reverse()
        rc, out = run("ranks", pr, bad)
        self.assertIn("FAIL ranks: stragglers by waited_pct descending", out)
        self.assertIn("FAIL ranks: stragglers[0] is pid 700", out)
        # a cause that is not the loop's largest non-CPU part
        bad = copy.deepcopy(r)
        bad["stragglers"][0]["cause"] = "futex"
        self.assertIn("FAIL ranks: stragglers[0] cause 'futex'", run("ranks", pr, bad)[1])
        # a missing rank's loop, an extra loop on a worker
        bad = report_of(r["loops"][0], stragglers=r["stragglers"][:1])
        rc, out = run("ranks", pr, bad)
        self.assertIn("ranks: 1 loops found, 2 ranks", out)
        self.assertIn("rank 0: one loop on pid 700 tid 700 (the main thread), found 0", out)
        bad = copy.deepcopy(r)
        bad["loops"].append(dict(r["loops"][1], pid=701, tid=701))
        self.assertIn("FAIL ranks: no loop on a worker process", run("ranks", pr, bad)[1])
        # no stragglers at all
        bad = copy.deepcopy(r)
        del bad["stragglers"]
        self.assertIn("ranks: the report has no stragglers", run("ranks", pr, bad)[1])


if __name__ == "__main__":
    unittest.main()
