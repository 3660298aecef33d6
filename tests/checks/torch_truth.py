"""The self-measuring PyTorch DataLoader workloads (tests/progs/torch_loader.py,
tests/torch_lib.sh): their scenario facts, and their own numbers against
ground truth found elsewhere (t_torch_loader). expected_steps is
unit-tested."""
import json
import math
import os
import sys

from checks.common import Checks


def expected_steps(n, batch, epochs=1, steps=None):
    """(steps, files received) of a loop over N files in batches of BATCH for
    EPOCHS epochs, or stopped after STEPS steps (the last batch of an epoch
    holds the rest)"""
    batches = math.ceil(n / batch)
    want_steps = steps if steps is not None else batches * epochs
    want_files = sum(min(batch, n - (k % batches) * batch) for k in range(want_steps))
    return want_steps, want_files


def loader_truth(tmp):
    """t_torch_loader: the DataLoader workloads' own numbers (io.json, cpu.json,
    short.json, epochs.json, steps.json in TMP) against the truth the test got
    elsewhere: fincore, blkio, the throttle, schedstat"""
    check = Checks()

    def common(name, d, n, size, workers, epochs=1, steps=None):
        cfg = d["config"]
        want_steps, want_files = expected_steps(n, cfg["batch"], epochs, steps)
        check(len(d["steps"]) == want_steps, f"{name}: {len(d['steps'])} steps, want {want_steps}")
        check(d["files"] == want_files, f"{name}: {d['files']} files received, want {want_files}")
        check(d["bytes"] == want_files * size, f"{name}: {d['bytes']} bytes, want {want_files} x {size}")
        wb = sum(w["bytes"] for w in d["workers"])
        # workers may have read ahead (prefetch) when --steps stops mid-epoch
        check(wb == d["bytes"] if steps is None else wb >= d["bytes"],
              f"{name}: the workers counted {wb} bytes")
        idx = sorted(s[0] for w in d["workers"] for s in w["sample_log"])
        if steps is None:
            check(idx == sorted(list(range(n)) * epochs), f"{name}: every file read once per epoch")
            check(all(s[4] == size for w in d["workers"] for s in w["sample_log"]), f"{name}: every read whole")
        check(d["first_wait_s"] == d["steps"][0]["wait_s"] and "iter_s" in d["steps"][0],
              f"{name}: first wait {d['first_wait_s']:.3f} s includes iter() {d['steps'][0].get('iter_s', 0):.3f} s")
        t = [d["main_schedstat_start_mono_ns"]]
        for s in d["steps"]:
            t += [s["t0_mono_ns"], s["t1_mono_ns"], s["t2_mono_ns"]]
        t.append(d["main_schedstat_mono_ns"])
        check(all(a <= b for a, b in zip(t, t[1:])), f"{name}: t0 <= t1 <= t2 <= next t0, inside the schedstat reads")
        check(d["loop_start_mono_ns"] == d["steps"][0]["t0_mono_ns"] and
              d["loop_end_mono_ns"] == d["steps"][-1]["t2_mono_ns"], f"{name}: loop = first t0 .. last t2")
        pids = d["worker_pids"]
        check(len(pids) == workers * (epochs if not cfg["persistent"] else 1) and len(set(pids)) == len(pids)
              and d["pid"] not in pids, f"{name}: {len(pids)} worker pids {pids[:8]}")
        check(sorted(w["pid"] for w in d["workers"]) == sorted(pids) and all(w["tid"] == w["pid"] for w in d["workers"]),
              f"{name}: every worker reported at its exit, its loop on its main thread")
        check(not any(os.path.exists(f"/proc/{p}") for p in pids), f"{name}: the workers are gone")
        check(str(d["main_tid"]) in d["main_threads"] and d["main_tid"] == d["pid"],
              f"{name}: the loop thread {d['main_tid']} is the main thread")
        check(all(w["run_ns"] > 0 and w["run_delay_ns"] >= 0 for w in d["workers"]),
              f"{name}: worker schedstat read at exit")
        print(f"     {name}: wait {d['total_wait_s']:.3f} s, compute {d['total_compute_s']:.3f} s "
              f"(CPU {sum(s['compute_cpu_ns'] for s in d['steps']) / 1e9:.3f} s), loop {d['loop_s']:.3f} s, "
              f"run {d['run_s']:.2f} s; run_delay: workers {d['workers_run_delay_ns'] / 1e9:.3f} s, "
              f"loop thread {d['main_run_delay_ns'] / 1e9:.3f} s")

    load = lambda n: json.load(open(os.path.join(tmp, n)))
    io, cpu, short = load("io.json"), load("cpu.json"), load("short.json")

    sc = io["scenario"]
    n, size = io["config"]["files"], sc["file_size"]
    common("io_bound", io, n, size, io["config"]["workers"])
    check(sc["resident_bytes"] == 0, f"io_bound: cold, {sc['resident_bytes']} bytes resident before the run")
    check(sc["cgroup_read_bytes"] >= io["bytes"],
          f"io_bound: blkio counted {sc['cgroup_read_bytes']} bytes read from {sc['device']} (>= {io['bytes']})")
    floor = io["bytes"] / sc["throttle_bps"]
    check(io["total_wait_s"] >= 0.5 * floor,
          f"io_bound: waited {io['total_wait_s']:.3f} s, >= 50% of {io['bytes']} B / {sc['throttle_bps']} B/s = {floor:.3f} s")
    check(io["total_wait_s"] >= 5 * io["total_compute_s"],
          f"io_bound: wait {io['total_wait_s']:.3f} s >= 5 x compute {io['total_compute_s']:.3f} s")
    rs = sum(w["read_s"] for w in io["workers"])
    check(rs >= 0.5 * floor, f"io_bound: the workers spent {rs:.3f} s in open+read+close")

    sc = cpu["scenario"]
    n, size = cpu["config"]["files"], sc["file_size"]
    common("cpu_bound", cpu, n, size, cpu["config"]["workers"])
    check(sc["resident_bytes"] == n * size, f"cpu_bound: warm, {sc['resident_bytes']} of {n * size} bytes resident")
    busy = sum(w["busy_cpu_ns"] for w in cpu["workers"]) / 1e9
    want = n * cpu["config"]["cpu_us"] / 1e6
    check(busy >= 0.5 * want, f"cpu_bound: the workers' CPU loops took {busy:.3f} s of thread CPU (asked {want:.3f} s)")
    check(cpu["total_wait_s"] > 0.3 * cpu["loop_s"],
          f"cpu_bound: waited {cpu['total_wait_s']:.3f} s, > 30% of the loop's {cpu['loop_s']:.3f} s")

    sc = short["scenario"]
    n, size = short["config"]["files"], sc["file_size"]
    common("cpu_shortage", short, n, size, short["config"]["workers"])
    check(short["config"]["workers"] > sc["nproc"], f"cpu_shortage: {short['config']['workers']} workers on {sc['nproc']} CPUs")
    rd, rd_cpu = short["workers_run_delay_ns"], cpu["workers_run_delay_ns"]
    check(rd > 0 and rd > rd_cpu, f"cpu_shortage: workers' run_delay {rd / 1e9:.3f} s > cpu_bound's {rd_cpu / 1e9:.3f} s")

    ep = load("epochs.json")
    common("epochs2", ep, 10, cpu["scenario"]["file_size"], 2, epochs=2)
    check(len(ep["gaps"]) == 1 and ep["steps"][3]["epoch"] == 1 and "iter_s" in ep["steps"][3],
          "epochs2: one gap between the epochs; epoch 2 starts with iter()")
    st = load("steps.json")
    common("steps5", st, 40, cpu["scenario"]["file_size"], 3, steps=5)
    # --until-usr1: whole epochs of ceil(10 / 4) = 3 steps past --epochs' 1,
    # each ended by a gap; the last one cut where the signal came
    u = load("usr1.json")
    size = cpu["scenario"]["file_size"]
    per_epoch = [sum(1 for s in u["steps"] if s["epoch"] == e) for e in range(u["steps"][-1]["epoch"] + 1)]
    check(len(per_epoch) >= 2 and all(k == 3 for k in per_epoch[:-1]) and 1 <= per_epoch[-1] <= 3,
          f"usr1: steps per epoch {per_epoch[:8]}: whole epochs of 3 before the signal's, at least 2")
    check(len(u["gaps"]) == len(per_epoch) - 1,
          f"usr1: {len(u['gaps'])} gaps for {len(per_epoch)} epochs")
    got = sum(s["samples"] for s in u["steps"])
    want = sum(4 if k < 2 else 2 for e in per_epoch for k in range(e))
    check(u["files"] == got == want and u["bytes"] == got * size,
          f"usr1: {u['files']} files, {got} in the steps, {want} from the epochs' steps, {u['bytes']} bytes")
    check(sum(w["bytes"] for w in u["workers"]) >= u["bytes"] and
          all(not w["sample_log"] for w in u["workers"]),
          "usr1: the workers read at least what the loop got, and kept no sample log")
    check(not any(os.path.exists(f"/proc/{p}") for p in u["worker_pids"]), "usr1: the workers are gone")
    return check.status()


def add_scenario(path, *kv):
    """torch_lib.sh torch_scenario: add "scenario" (the KEY=VALUE facts the test
    set up) to the program's JSON at PATH and print its one-line summary"""
    with open(path) as f:
        d = json.load(f)
    sc = {}
    for a in kv:
        k, v = a.split("=", 1)
        try:
            v = int(v)
        except ValueError:
            pass
        sc[k] = v
    d["scenario"] = sc
    with open(path + ".tmp", "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")
    os.rename(path + ".tmp", path)
    print("%s: %d steps, wait %.3f s (first %.3f s), compute %.3f s, loop %.3f s, run %.2f s, "
          "%d files, %d bytes, workers %d, run_delay: workers %.3f s, loop thread %.3f s"
          % (sc["name"], len(d["steps"]), d["total_wait_s"], d["first_wait_s"], d["total_compute_s"],
             d["loop_s"], d["run_s"], d["files"], d["bytes"], len(d["worker_pids"]),
             d["workers_run_delay_ns"] / 1e9, (d["main_run_delay_ns"] or 0) / 1e9))
