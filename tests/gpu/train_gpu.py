#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""train_gpu.py — a real PyTorch training loop on the GPU that times itself.

For the GPU bundle (tests/gpu/bundle/run.sh): what `gpuio trace` and
`gpuio report` say about it is checked against what it measured itself.

    train_gpu.py --create DIR --files N --file-size BYTES
        writes DIR/sample-00000.bin ... (random bytes), no torch needed
    train_gpu.py --data DIR --files N [--workers 2] [--batch 16]
                 [--epochs 2] [--cpu-us 0] [--out FILE]

The loop is what users write: a map-style Dataset whose __getitem__ opens a
file, reads it whole with os.read and turns it into a float tensor; a
DataLoader with W worker processes and pin_memory=True (so a pin-memory
thread sits between the workers and the loop); a small CNN, AdamW, one
forward/backward/step per batch; each step inside a
torch.cuda.nvtx.range_push("step")/range_pop(), and loss.item() at its end
(the host waits for the GPU there, as logging loops do).

Ground truth, on the loop's own clocks (perf_counter, and CLOCK_MONOTONIC
read beside it, the clock a tracer's events use):
    pid, main_tid, worker_pids (from worker_init_fn)
    steps: per step wait_s (in next()), step_s (next() to loss.item()
           returned), t0/t1/t2_mono_ns
    total_wait_s, total_step_s, median_step_s and median_compute_s over the
    steps after the first epoch's first 5 (warm-up), steady_mean_step_s (the
    mean step of the epochs after the first: the loop's throughput once
    warm; steps alternate between waiting and not, so a median misleads),
    loop_s, first_step_s
    device (name), torch, cuda (versions)
"""
import argparse
import json
import os
import statistics
import sys
import threading
import time

MONO = time.CLOCK_MONOTONIC


def mono_ns():
    return time.clock_gettime_ns(MONO)


def sample_path(d, i):
    return os.path.join(d, "sample-%05d.bin" % i)


def create(a):
    os.makedirs(a.create, exist_ok=True)
    for i in range(a.files):
        with open(sample_path(a.create, i), "wb") as f:
            f.write(os.urandom(a.file_size))
    return 0


WORKER_DIR = None


def worker_init_fn(worker_id):
    with open(os.path.join(WORKER_DIR, "worker-%d" % os.getpid()), "w") as f:
        f.write("%d\n" % worker_id)


def run(a):
    global WORKER_DIR
    import tempfile
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, Dataset

    if a.device == "cuda" and not torch.cuda.is_available():
        print("train_gpu: no CUDA device", file=sys.stderr)
        return 2
    dev = torch.device(a.device)
    gpu = a.device == "cuda"
    nvtx_push = torch.cuda.nvtx.range_push if gpu else (lambda name: None)
    nvtx_pop = torch.cuda.nvtx.range_pop if gpu else (lambda: None)
    side = 64

    class Files(Dataset):
        def __len__(self):
            return a.files

        def __getitem__(self, i):
            fd = os.open(sample_path(a.data, i), os.O_RDONLY)
            try:
                chunks = []
                while True:
                    b = os.read(fd, 1 << 20)
                    if not b:
                        break
                    chunks.append(b)
            finally:
                os.close(fd)
            raw = b"".join(chunks)
            t_end = time.thread_time() + a.cpu_us / 1e6
            while time.thread_time() < t_end:   # decoding work, if asked
                pass
            x = torch.frombuffer(bytearray(raw[:3 * side * side]), dtype=torch.uint8)
            x = x.view(3, side, side).float().div_(255.0)
            return x, i % 10

    WORKER_DIR = tempfile.mkdtemp(prefix="train_gpu.")
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    loader = DataLoader(Files(), batch_size=a.batch, shuffle=True, num_workers=a.workers,
                        pin_memory=gpu, worker_init_fn=worker_init_fn if a.workers else None)
    steps = []
    prof = None
    if a.profile:
        from torch.profiler import profile, ProfilerActivity
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
        prof = profile(activities=acts)
        prof.__enter__()
    loop0 = time.perf_counter()
    for epoch in range(a.epochs):
        it = iter(loader)
        k = 0
        while True:
            t0, m0 = time.perf_counter(), mono_ns()
            try:
                x, y = next(it)
            except StopIteration:
                break
            t1, m1 = time.perf_counter(), mono_ns()
            nvtx_push("step")
            x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = lossf(model(x), y)
            loss.backward()
            opt.step()
            lv = loss.item()
            nvtx_pop()
            t2, m2 = time.perf_counter(), mono_ns()
            steps.append({"epoch": epoch, "step": k, "wait_s": t1 - t0, "step_s": t2 - t0,
                          "compute_s": t2 - t1, "t0_mono_ns": m0, "t1_mono_ns": m1,
                          "t2_mono_ns": m2, "loss": lv})
            k += 1
    loop_s = time.perf_counter() - loop0
    if gpu:
        torch.cuda.synchronize()
    if prof is not None:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(a.profile)
    warm = steps[5:] if len(steps) > 10 else steps
    workers = sorted(int(n.split("-")[1]) for n in os.listdir(WORKER_DIR))
    out = {
        "pid": os.getpid(), "main_tid": threading.get_native_id(), "worker_pids": workers,
        "device": torch.cuda.get_device_name(0) if gpu else "cpu", "torch": torch.__version__,
        "cuda": torch.version.cuda, "config": vars(a), "steps": steps,
        "total_wait_s": sum(s["wait_s"] for s in steps),
        "total_step_s": sum(s["step_s"] for s in steps),
        "median_step_s": statistics.median(s["step_s"] for s in warm),
        "median_compute_s": statistics.median(s["compute_s"] for s in warm),
        "steady_mean_step_s": statistics.mean(
            s["step_s"] for s in ([x for x in steps if x["epoch"] > 0] or warm)),
        "first_step_s": steps[0]["step_s"] if steps else None, "loop_s": loop_s,
    }
    text = json.dumps(out)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        print(text)
    print("train_gpu: %d steps in %.2f s, waited %.3f s for data, median step %.2f ms"
          % (len(steps), loop_s, out["total_wait_s"], 1e3 * out["median_step_s"]), file=sys.stderr)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--create")
    p.add_argument("--data")
    p.add_argument("--files", type=int, default=256)
    p.add_argument("--file-size", type=int, default=1 << 18)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--cpu-us", type=int, default=0)
    p.add_argument("--device", default="cuda", help="cuda (default), or cpu to try it without a GPU")
    p.add_argument("--out")
    p.add_argument("--profile", help="also profile the loop with torch.profiler (CPU and CUDA) and "
                   "write its Chrome trace here (for gpuio merge --pytorch)")
    a = p.parse_args()
    if a.create:
        return create(a)
    if not a.data:
        p.error("--data DIR (or --create DIR)")
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
