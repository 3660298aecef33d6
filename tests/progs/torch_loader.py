#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch_loader.py — a PyTorch DataLoader training loop that measures itself.

Ground truth for tests of thread states (on-CPU, runnable, sleeping,
blocked): how long the training loop waited for its DataLoader workers, how
long it computed, and what the workers did meanwhile (read files, burn CPU),
each measured by the program on its own clocks. Scenarios built on it:
tests/torch_lib.sh. Needs torch: run it with /usr/bin/python3 (Debian's
python3-torch), not a `python3` from PATH that may lack it.

Create the sample files and exit (no torch needed):

    torch_loader.py --create --data DIR --files N --file-size BYTES
        writes DIR/sample-00000.bin ... sample-{N-1}.bin, BYTES random bytes
        each (os.urandom), each file fsynced, then the directory fsynced.

Run the loop (the files must exist):

    torch_loader.py --data DIR --files N [options] [--out FILE]

    --workers W          DataLoader num_workers (default 2; 0 = no workers,
                         the loop reads in the main thread)
    --batch B            batch size (default 4)
    --epochs E           passes over the N files (default 1)
    --steps S            stop after S steps instead (epochs repeat as needed)
    --prefetch-factor P  DataLoader prefetch_factor (default 2)
    --persistent         persistent_workers=True (default: PyTorch's default,
                         new workers every epoch)
    --shuffle            shuffle the samples (seed --seed, default 1)
    --cpu-us N           per-sample CPU work in the worker, after the read:
                         about N us of pure CPU (default 0)
    --step-cpu-us N      per-step "compute" in the loop thread after each
                         batch arrives: about N us of pure CPU (default 0)
    --return-data        put each sample's bytes in the batch (as a uint8
                         tensor, through shared memory as DataLoader does);
                         default: only a 16-byte head of each sample
    --until-usr1         repeat epochs until SIGUSR1, then end after the step
                         under way (a bench's long steady state; --epochs
                         and --steps are ignored; workers keep no
                         sample_log; "torch_loader: epoch N" on stderr
                         as each epoch starts)
    --ns-per-iter X      skip calibration: one CPU-loop iteration costs X ns
    --out FILE           the JSON result (default: stdout); the one-line
                         summary goes to stderr when FILE is given too

Per sample (Dataset.__getitem__, in a worker): open the file, os.read() it in
1 MiB reads until EOF (plain reads, no mmap, no readahead hints), close; then
the CPU loop. The CPU loop is deterministic: ITERS calls of
hashlib.sha256().update() on one 1 KiB block (the sample's first KiB, zero
padded) — under 2048 bytes, so the GIL stays held, like Python code. ITERS is
round(N us / ns_per_iter), ns_per_iter calibrated once in the main thread
before the loop (the fastest of 7 runs of 2000 iterations, on the thread's
CPU clock): "N us" means N us of CPU on an idle core; on a busy machine the
same work takes longer in wall time (the thread waits to run). Workers also
measure each loop's thread CPU time (CLOCK_THREAD_CPUTIME_ID), so the work
actually done is in the output (busy_cpu_ns).

The loop, in the main thread, for every step:
    t0 = perf_counter(); batch = next(it); t1 = perf_counter()
    CPU loop of --step-cpu-us;                 t2 = perf_counter()
with CLOCK_MONOTONIC (ns) read next to each of t0/t1/t2 (the clock a tracer's
events use) and the thread's CPU time at each. The first step of an epoch
also times iter(loader): t0 is taken before it, so its wait includes forking
the workers. The call to next() that ends an epoch (StopIteration; without
--persistent it also joins the workers) is not a step: between epochs it is
listed in "gaps", after the last step it is part of "shutdown".

Other I/O it does (a tracer sees it too): each worker writes its pid file
(worker_init_fn) and its JSON (at exit) in a private directory under $TMPDIR
(torch_loader.XXXX, removed at the end); the workers and the loop thread read
/proc/thread-self/schedstat and /proc/self/task/*/{comm,schedstat} at start
and end; the loop thread also preads its schedstat (kept open) right before
each t0 and right after each t1, outside the wait it measures; batches travel
as tensors in shared memory (fds passed over a Unix socket), as in any
DataLoader with workers.

Output (JSON; times *_s in seconds from perf_counter, *_mono_ns from
CLOCK_MONOTONIC, *_cpu_ns thread CPU time):
    pid, main_tid            the process and the loop thread
                             (threading.get_native_id())
    worker_pids              every worker process's pid (worker_init_fn
                             writes pid and tid to a file in a private temp
                             dir; a worker's loop runs on its main thread,
                             tid = pid; each worker also has a queue feeder
                             thread, QueueFeederThread, that pickles the
                             batches, and multiprocessing's resource_sharer
                             thread, "Thread-1 (_serve)", that hands the
                             batches' shared-memory fds to the main process
                             over a Unix socket)
    workers                  per worker process, written by the worker when it
                             exits (multiprocessing Finalize): worker_id,
                             epoch, pid, tid, samples, bytes, read_s (time
                             in open+read+close), read_calls, busy_s /
                             busy_cpu_ns (the CPU loops: wall / thread CPU),
                             start_mono_ns (worker_init_fn), end_mono_ns,
                             schedstat_start / schedstat_end: the worker's
                             main thread /proc/thread-self/schedstat [run ns,
                             run_delay ns, timeslices] at init and at exit,
                             run_ns / run_delay_ns (schedstat_end: over the
                             thread's whole life since the fork, its on-CPU
                             time and its time runnable waiting for a CPU),
                             threads: {tid: {comm, schedstat, name}} of all its
                             threads at exit, sample_log: per sample [index,
                             read_start_mono_ns, read_end_mono_ns,
                             cpu_end_mono_ns, bytes]
    workers_run_ns, workers_run_delay_ns   sums over the workers
    steps                    per step: epoch, step, wait_s (t1-t0),
                             compute_s (t2-t1), t0/t1/t2_mono_ns,
                             wait_cpu_ns, compute_cpu_ns (loop thread CPU
                             in the wait and in the compute),
                             wait_run_delay_ns (schedstat: the loop thread
                             waiting for a CPU inside next(), read just
                             outside t0 and t1), samples, bytes,
                             worker (worker_id that made the batch), iter_s
                             (first step of an epoch: time in iter(loader))
    first_wait_s             the first step's wait (includes worker start-up)
    total_wait_s, total_compute_s   sums over the steps
    loop_start_mono_ns       before iter(loader) of the first epoch (= the
                             first t0), loop_end_mono_ns (= the last t2);
                             loop_s on perf_counter
    gaps                     between-epoch next() calls: [start, end] mono ns
    files, bytes             samples and bytes received by the loop
                             (bytes as counted by the workers, with the batch)
    main_schedstat_ns        the loop thread's run time (first field of
                             /proc/thread-self/schedstat) read right after the
                             last step, at main_schedstat_mono_ns;
                             main_schedstat_start_ns / _mono_ns the same just
                             before the loop; main_run_delay_ns (second field,
                             end - start); main_threads: {tid: {comm,
                             schedstat, name}} of the process's threads then
                             (the loop thread, MainThread, and one
                             QueueFeederThread per worker, feeding its
                             index queue)
    main_schedstat_end       the loop thread's schedstat [run ns, run_delay
                             ns, timeslices] since the thread started (its
                             whole life so far: import, loop, shutdown), read
                             as late as it can be, right before the output is
                             written, at main_schedstat_end_mono_ns
    shutdown_s               from the last step to the workers all joined
    calibration              ns_per_iter, iters_per_sample, iters_per_step
    config, run_s (program start to output), import_torch_s

Exit status 0 on success; 1 on error (message on stderr); 2 on bad usage.
"""
import argparse
import hashlib
import json
import os
import signal
import sys
import tempfile
import threading
import time

PROG_START = time.perf_counter()
MONO = time.CLOCK_MONOTONIC
READ_CHUNK = 1 << 20
BLOCK = 1024


def mono_ns():
    return time.clock_gettime_ns(MONO)


def sample_path(data, i):
    return os.path.join(data, "sample-%05d.bin" % i)


def schedstat(path="/proc/thread-self/schedstat"):
    """[run ns, run_delay ns, timeslices] of a thread (or None)."""
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split()[:3]]
    except OSError:
        return None


class RunDelay:
    """The calling thread's schedstat run_delay (ns) now: one pread of the
    file, opened once (0 where it cannot be read)."""

    def __init__(self):
        try:
            self.fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self.fd = None

    def __call__(self):
        if self.fd is None:
            return 0
        return int(os.pread(self.fd, 128, 0).split()[1])


def threads():
    """{tid: {"comm", "schedstat", "name"}} of every thread of this process
    (name: Python's threading name, for the threads Python started)."""
    names = {str(t.native_id): t.name for t in threading.enumerate() if t.native_id}
    out = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/self/task/%s/comm" % tid) as f:
                comm = f.read().strip()
        except OSError:
            continue
        out[tid] = {"comm": comm, "schedstat": schedstat("/proc/self/task/%s/schedstat" % tid),
                    "name": names.get(tid)}
    return out


def spin(iters, block):
    """The CPU loop: deterministic, GIL held (block < 2048 bytes)."""
    h = hashlib.sha256()
    upd = h.update
    for _ in range(iters):
        upd(block)
    return h.digest()


def calibrate():
    """ns per spin() iteration: the fastest of 7 runs, on thread CPU time."""
    block = bytes(BLOCK)
    n = 2000
    spin(n, block)  # warm up
    best = None
    for _ in range(7):
        c0 = time.thread_time_ns()
        spin(n, block)
        dt = time.thread_time_ns() - c0
        best = dt if best is None or dt < best else best
    return max(best / n, 1.0)


def iters_for(us, ns_per_iter):
    return int(round(us * 1000.0 / ns_per_iter)) if us > 0 else 0


def create(args):
    os.makedirs(args.data, exist_ok=True)
    for i in range(args.files):
        p = sample_path(args.data, i)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            left = args.file_size
            while left > 0:
                left -= os.write(fd, os.urandom(min(left, READ_CHUNK)))
            os.fsync(fd)
        finally:
            os.close(fd)
    dfd = os.open(args.data, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    print("torch_loader: created %d files of %d bytes in %s" % (args.files, args.file_size, args.data),
          file=sys.stderr)
    return 0


# ---- worker side (module globals live in each forked worker process)
EPOCH = 0          # set by the main process before iter(loader); workers inherit it
WORKER = None      # this worker's record, set by worker_init_fn


def _worker_exit():
    w = WORKER
    if w is None:
        return
    w["end_mono_ns"] = mono_ns()
    w["schedstat_end"] = schedstat()
    if w["schedstat_end"]:
        w["run_ns"], w["run_delay_ns"] = w["schedstat_end"][:2]
    w["threads"] = threads()
    tmp = os.path.join(w.pop("_dir"), "worker-%d.json.tmp" % w["pid"])
    with open(tmp, "w") as f:
        json.dump(w, f)
    os.rename(tmp, tmp[:-4])


def worker_init_fn(worker_id):
    global WORKER
    import multiprocessing.util as mpu
    import torch.utils.data as tud
    ds = tud.get_worker_info().dataset
    WORKER = {
        "worker_id": worker_id, "epoch": EPOCH, "pid": os.getpid(),
        "tid": threading.get_native_id(), "start_mono_ns": mono_ns(),
        "schedstat_start": schedstat(), "samples": 0, "bytes": 0,
        "read_s": 0.0, "read_calls": 0, "busy_s": 0.0, "busy_cpu_ns": 0,
        "sample_log": [], "_dir": ds.state_dir,
    }
    # who is who, at once (if the worker dies, this is still there)
    with open(os.path.join(ds.state_dir, "pid-%d" % os.getpid()), "w") as f:
        f.write("%d %d %d\n" % (worker_id, threading.get_native_id(), EPOCH))
    # runs in multiprocessing's exit path when the worker loop returns
    mpu.Finalize(None, _worker_exit, exitpriority=100)


class Samples:
    """map-style Dataset over DIR/sample-%05d.bin (torch imported lazily)."""

    def __init__(self, data, n, iters, return_data, state_dir):
        self.paths = [sample_path(data, i) for i in range(n)]
        self.iters = iters
        self.return_data = return_data
        self.state_dir = state_dir

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        import torch
        w = WORKER
        r0 = time.perf_counter()
        m0 = mono_ns()
        fd = os.open(self.paths[i], os.O_RDONLY)
        chunks, calls = [], 0
        try:
            while True:
                b = os.read(fd, READ_CHUNK)
                calls += 1
                if not b:
                    break
                chunks.append(b)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        m1 = mono_ns()
        r1 = time.perf_counter()
        c0 = time.thread_time_ns()
        spin(self.iters, data[:BLOCK].ljust(BLOCK, b"\0"))
        c1 = time.thread_time_ns()
        r2 = time.perf_counter()
        m2 = mono_ns()
        if w is not None:
            w["samples"] += 1
            w["bytes"] += len(data)
            w["read_s"] += r1 - r0
            w["read_calls"] += calls
            w["busy_s"] += r2 - r1
            w["busy_cpu_ns"] += c1 - c0
            if not STOP_ON_USR1:      # a run of minutes would keep millions
                w["sample_log"].append([i, m0, m1, m2, len(data)])
        payload = data if self.return_data else data[:16].ljust(16, b"\0")
        return {
            "size": len(data),
            "index": i,
            "worker": w["worker_id"] if w is not None else -1,
            "data": torch.frombuffer(bytearray(payload), dtype=torch.uint8),
        }


STOP = []      # --until-usr1: SIGUSR1 came
STOP_ON_USR1 = False


def run(args):
    global EPOCH, STOP_ON_USR1
    STOP_ON_USR1 = args.until_usr1
    if args.until_usr1:
        # installed first: a signal during torch's import must not kill the run
        signal.signal(signal.SIGUSR1, lambda *_: STOP.append(1))
    t_imp = time.perf_counter()
    import torch
    from torch.utils.data import DataLoader
    import warnings
    # more workers than CPUs is what the CPU-shortage scenario is about
    warnings.filterwarnings("ignore", message="This DataLoader will create")
    import_torch_s = time.perf_counter() - t_imp

    for i in range(args.files):
        if not os.path.isfile(sample_path(args.data, i)):
            print("torch_loader: %s missing (create it with --create)" % sample_path(args.data, i),
                  file=sys.stderr)
            return 1

    ns_per_iter = args.ns_per_iter or calibrate()
    iters_sample = iters_for(args.cpu_us, ns_per_iter)
    iters_step = iters_for(args.step_cpu_us, ns_per_iter)
    step_block = bytes(BLOCK)

    state_dir = tempfile.mkdtemp(prefix="torch_loader.")
    ds = Samples(args.data, args.files, iters_sample, args.return_data, state_dir)
    kw = {}
    if args.workers > 0:
        kw = dict(worker_init_fn=worker_init_fn, prefetch_factor=args.prefetch_factor,
                  persistent_workers=args.persistent)
    gen = torch.Generator()
    gen.manual_seed(args.seed)
    loader = DataLoader(ds, batch_size=args.batch, shuffle=args.shuffle, num_workers=args.workers,
                        generator=gen, **kw)

    steps, gaps = [], []
    last_t2 = None
    total_steps = (None if args.until_usr1 else
                   args.steps if args.steps is not None else len(loader) * args.epochs)
    sched1 = sched1_mono = None
    main_tid = threading.get_native_id()
    sched0 = schedstat()
    sched0_mono = mono_ns()
    run_delay = RunDelay()
    loop_start = None
    it = None
    epoch = 0
    n_files = n_bytes = 0
    done = False
    while not done:
        if not args.until_usr1 and args.steps is None and epoch >= args.epochs:
            break
        EPOCH = epoch
        if args.until_usr1:   # progress, for whoever waits to signal a run of whole epochs
            print("torch_loader: epoch %d" % epoch, file=sys.stderr, flush=True)
        # first step of the epoch: t0 before iter(), so its wait includes forking the workers
        d0 = run_delay()
        t0 = time.perf_counter()
        m0 = mono_ns()
        c0 = time.thread_time_ns()
        if loop_start is None:
            loop_start, loop_start_mono = t0, m0
        it = iter(loader)
        iter_s = time.perf_counter() - t0
        k = 0
        while True:
            if k > 0:
                d0 = run_delay()
                t0 = time.perf_counter()
                m0 = mono_ns()
                c0 = time.thread_time_ns()
                iter_s = None
            try:
                batch = next(it)
            except StopIteration:
                end = mono_ns()
                # after the last epoch it is part of the shutdown
                if args.until_usr1 or args.steps is not None or epoch + 1 < args.epochs:
                    gaps.append({"epoch": epoch, "start_mono_ns": m0, "end_mono_ns": end})
                break
            t1 = time.perf_counter()
            m1 = mono_ns()
            c1 = time.thread_time_ns()
            d1 = run_delay()
            spin(iters_step, step_block)
            t2 = time.perf_counter()
            m2 = mono_ns()
            c2 = time.thread_time_ns()
            nb = int(batch["size"].sum())
            ns = int(batch["size"].numel())
            n_files += ns
            n_bytes += nb
            st = {"epoch": epoch, "step": len(steps), "wait_s": t1 - t0, "compute_s": t2 - t1,
                  "t0_mono_ns": m0, "t1_mono_ns": m1, "t2_mono_ns": m2,
                  "wait_cpu_ns": c1 - c0, "compute_cpu_ns": c2 - c1, "wait_run_delay_ns": d1 - d0,
                  "samples": ns, "bytes": nb, "worker": int(batch["worker"][0])}
            if iter_s is not None:
                st["iter_s"] = iter_s
            steps.append(st)
            last_t2 = t2
            del batch
            if len(steps) == total_steps:
                # the end of the loop: right after the last step's compute
                sched1 = schedstat()
                sched1_mono = mono_ns()
                main_threads = threads()
            k += 1
            if STOP or (not args.until_usr1 and args.steps is not None and len(steps) >= args.steps):
                done = True
                break
        if not done:
            epoch += 1
    if sched1 is None:  # fewer steps than len(loader) said
        sched1 = schedstat()
        sched1_mono = mono_ns()
        main_threads = threads()
    if not steps:
        print("torch_loader: no step ran", file=sys.stderr)
        return 1
    loop_end = last_t2
    loop_end_mono = steps[-1]["t2_mono_ns"]

    # shut the workers down (joined) and collect what they wrote
    if it is not None and hasattr(it, "_shutdown_workers"):
        it._shutdown_workers()
    it = None
    shutdown_end = time.perf_counter()
    shutdown_s = shutdown_end - loop_end

    workers, worker_pids = [], []
    for name in sorted(os.listdir(state_dir)):
        p = os.path.join(state_dir, name)
        if name.startswith("pid-"):
            worker_pids.append(int(name[4:]))
        elif name.startswith("worker-") and name.endswith(".json"):
            with open(p) as f:
                workers.append(json.load(f))
        os.unlink(p)
    os.rmdir(state_dir)
    workers.sort(key=lambda w: (w["epoch"], w["worker_id"]))
    order = {w["pid"]: (w["epoch"], w["worker_id"]) for w in workers}
    worker_pids.sort(key=lambda p: order.get(p, (1 << 30, p)))
    alive = [p for p in worker_pids if os.path.exists("/proc/%d" % p)]

    out = {
        "program": "torch_loader", "format": 1, "argv": sys.argv[1:],
        "config": {"data": os.path.abspath(args.data), "files": args.files, "workers": args.workers,
                   "batch": args.batch, "epochs": args.epochs, "steps": args.steps,
                   "prefetch_factor": args.prefetch_factor, "persistent": args.persistent,
                   "shuffle": args.shuffle, "cpu_us": args.cpu_us, "step_cpu_us": args.step_cpu_us,
                   "return_data": args.return_data, "torch": torch.__version__,
                   "nproc": os.cpu_count()},
        "calibration": {"unit": "hashlib.sha256().update(1 KiB)", "ns_per_iter": ns_per_iter,
                        "iters_per_sample": iters_sample, "iters_per_step": iters_step},
        "pid": os.getpid(), "main_tid": main_tid,
        "worker_pids": worker_pids,
        "workers_alive_after_shutdown": alive,
        "steps": steps, "gaps": gaps,
        "first_wait_s": steps[0]["wait_s"] if steps else None,
        "total_wait_s": sum(s["wait_s"] for s in steps),
        "total_compute_s": sum(s["compute_s"] for s in steps),
        "loop_start_mono_ns": loop_start_mono, "loop_end_mono_ns": loop_end_mono,
        "loop_s": loop_end - loop_start,
        "files": n_files, "bytes": n_bytes,
        "main_schedstat_ns": sched1[0] if sched1 else None, "main_schedstat_mono_ns": sched1_mono,
        "main_schedstat_start_ns": sched0[0] if sched0 else None,
        "main_schedstat_start_mono_ns": sched0_mono,
        "main_run_delay_ns": sched1[1] - sched0[1] if sched0 and sched1 else None,
        "main_threads": main_threads,
        "workers": workers,
        "workers_run_ns": sum(w.get("run_ns", 0) for w in workers),
        "workers_run_delay_ns": sum(w.get("run_delay_ns", 0) for w in workers),
        "shutdown_s": shutdown_s,
        "import_torch_s": import_torch_s,
    }
    out["run_s"] = time.perf_counter() - PROG_START
    out["main_schedstat_end"] = schedstat()
    out["main_schedstat_end_mono_ns"] = mono_ns()
    summary = ("torch_loader: %d steps, wait %.3f s (first %.3f s), compute %.3f s, loop %.3f s, "
               "%d files, %d bytes, %d workers, run %.2f s"
               % (len(steps), out["total_wait_s"], out["first_wait_s"] or 0.0, out["total_compute_s"],
                  out["loop_s"], n_files, n_bytes, len(worker_pids), out["run_s"]))
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        os.rename(tmp, args.out)
        print(summary, file=sys.stderr)
    else:
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    if alive:
        print("torch_loader: workers still alive after shutdown: %s" % alive, file=sys.stderr)
        return 1
    if args.workers > 0 and len(workers) != len(worker_pids):
        print("torch_loader: %d workers started, %d reported at exit" % (len(worker_pids), len(workers)),
              file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--file-size", type=int, default=256 * 1024)
    ap.add_argument("--create", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--prefetch-factor", type=int, default=2)
    ap.add_argument("--persistent", action="store_true")
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cpu-us", type=float, default=0)
    ap.add_argument("--step-cpu-us", type=float, default=0)
    ap.add_argument("--return-data", action="store_true")
    ap.add_argument("--ns-per-iter", type=float)
    ap.add_argument("--until-usr1", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.files < 1 or args.batch < 1 or args.epochs < 1 or args.workers < 0 or \
            args.prefetch_factor < 1 or (args.steps is not None and args.steps < 1) or \
            args.file_size < 0 or args.cpu_us < 0 or args.step_cpu_us < 0:
        ap.error("counts must be positive (workers, sizes and CPU times >= 0)")
    if args.create:
        return create(args)
    return run(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError as e:
        print("torch_loader: %s" % e, file=sys.stderr)
        sys.exit(1)
