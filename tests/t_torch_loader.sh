#!/usr/bin/env bash
# t_torch_loader: the self-measuring PyTorch DataLoader workloads
# (tests/progs/torch_loader.py, scenarios in tests/torch_lib.sh) run WITHOUT
# any tracer, their own numbers checked against ground truth the test gets
# elsewhere, so that tracer tests can trust them:
#   - every scenario: the loop received every file once, bytes = files x
#     file size, also as counted per worker; steps = ceil(files / batch);
#     t0 <= t1 <= t2 <= next t0 on CLOCK_MONOTONIC inside the schedstat
#     readings; every worker pid reported its end and is gone;
#   - I/O-bound: fincore says the files were cold; the blkio group counted
#     at least those bytes read from the loop device; the loop's total wait
#     is >= 50% of bytes / throttle rate and >= 5x its compute;
#   - CPU-bound: fincore says the files were warm; the workers' CPU loops
#     took >= 50% of files x --cpu-us on the kernel's thread CPU clock; the
#     loop waited > 30% of its time;
#   - CPU shortage: more workers than CPUs; the workers' run_delay (schedstat
#     field 2, read by each worker at its exit) is nonzero and larger than in
#     the CPU-bound run;
#   - the modes: --epochs 2 forks new workers per epoch (one gap between
#     epochs), --steps with --persistent stops mid-epoch and still joins its
#     workers.
# Only those coarse timing checks: machines are noisy.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/torch_lib.sh"
need_torch

torch_io_bound "$TMP/io.json"
# torch_io_bound undid its setup
! losetup -l -n -O BACK-FILE | grep -qF "$TMP/torch-io.img" || fail "the loop device is still attached"
[ ! -e "$TMP/torch-io.img" ] || fail "the image is still there"
! mountpoint -q "$TMP/torch-io.mnt" || fail "$TMP/torch-io.mnt still mounted"
! ls -d /sys/fs/cgroup/blkio/gpuio-torch-$$ 2>/dev/null || fail "the blkio group is still there"
torch_cpu_bound "$TMP/cpu.json"
torch_cpu_shortage "$TMP/short.json"

# the modes, on the CPU scenario's warm files
"$TORCH_PY" "$TORCH_PROG" --data "$TMP/torch-cpu" --files 10 --batch 4 --workers 2 --epochs 2 \
  --out "$TMP/epochs.json" || fail "torch_loader.py --epochs 2 failed"
"$TORCH_PY" "$TORCH_PROG" --data "$TMP/torch-cpu" --files 40 --batch 2 --workers 3 --steps 5 \
  --persistent --cpu-us 1000 --out "$TMP/steps.json" || fail "torch_loader.py --steps 5 --persistent failed"

"$TORCH_PY" - "$TMP" <<'PYEOF' || fail "a workload's own numbers disagree with the ground truth"
import json, math, os, sys
tmp = sys.argv[1]
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond

def common(name, d, n, size, workers, epochs=1, steps=None):
    cfg = d["config"]
    batches = math.ceil(n / cfg["batch"])
    want_steps = steps if steps is not None else batches * epochs
    want_files = sum(min(cfg["batch"], n - (k % batches) * cfg["batch"]) for k in range(want_steps))
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
sys.exit(1 if bad else 0)
PYEOF
echo "PASS: the DataLoader workloads' own numbers agree with fincore, blkio, the throttle and schedstat"
