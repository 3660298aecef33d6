#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch_shapes.py — PyTorch training loops of the common job shapes, each
measuring itself.

Ground truth for `gpuio report` on the job shapes other than the one of
torch_loader.py (one loop fed by DataLoader worker processes that read()
files): several ranks started by one launcher, a loop fed by reader threads
of its own process, a loop with no workers, memory-mapped data read through
page faults, samples fetched over HTTP, a pin-memory thread between the loop
and its workers, and a long loop to attach to. Each program times its own
waits for data and its own compute, on its own clocks, and says which
threads and processes fed it. Scenarios built on it: tests/shapes_lib.sh.
Needs torch (numpy for memmap): run it with /usr/bin/python3 (Debian's
python3-torch), not a `python3` from PATH that may lack it. It reuses the
clocks, the CPU loop and the file layout of torch_loader.py (beside it).

    torch_shapes.py SHAPE [options] --out FILE

Shapes (sample files are DIR/sample-%05d.bin, made by
`torch_loader.py --create`):

  rank      one rank of a multi-rank job, as torchrun (torch.distributed.run)
            starts one loop per GPU: RANK, LOCAL_RANK, WORLD_SIZE from the
            environment (no process group is made: the ranks share nothing,
            unless --allreduce: a gloo process group, and an all_reduce of
            one tensor after each step, in which faster ranks wait).
            A DataLoader with --workers worker processes (2) over the rank's
            own files DIR/rank-RANK/sample-*.bin (--files of them, repeated
            as needed); each sample: open, os.read() in 1 MiB reads, close,
            then --cpu-us of CPU in the worker. --cpu-us takes a list,
            one value per rank ("2000,20000": rank 1 computes 10x more per
            sample): ranks of different speeds, the slowest waits most.
            --out and --ready may hold "{rank}" (one file per rank).
  launch    the fallback launcher where torch.distributed.run does not work:
            `launch --nproc N -- SHAPE ARGS...` starts N processes of this
            program (`/usr/bin/python3 torch_shapes.py SHAPE ARGS...`) with
            RANK = LOCAL_RANK = 0..N-1, WORLD_SIZE = N, MASTER_ADDR/PORT set
            as torchrun sets them, waits for all, exits with the first
            nonzero status.
  threads   a loop fed by --readers reader THREADS of its own process (2;
            tf.data / DALI / webdataset style) through a queue.Queue of
            --queue batches (2): reader k reads batches k, k+R, ... (each
            --batch files: open, os.read() in 1 MiB reads, close), builds a
            uint8 tensor of the batch and put()s it. The loop times its
            queue.get(). Readers name themselves reader-K (comm, through
            /proc/thread-self/comm).
  noworkers a DataLoader with num_workers=0: the loop thread reads its own
            files (the Dataset's open + read + close, timed) inside next().
  memmap    a Dataset over --files numpy.memmap files (mode "r", opened in
            the main process before the workers fork, as np.load(mmap_mode=
            "r") datasets do); each sample is --sample-size bytes of one file
            (every byte of every file once, file after file), copied out of
            the mapping with np.array() in a worker: data comes only through
            page faults, never read(). The main process asks mincore(2) how
            many bytes of each file were in the page cache before the loop
            and after it (its own mappings: mincore faults nothing in).
  remote    a DataLoader whose workers fetch sample i as GET /obj/I from an
            object store on 127.0.0.1 (the port from --port-file; one
            http.client.HTTPConnection per worker, reconnecting when the
            server closes it); --objects samples.
  loader    a DataLoader with --workers persistent workers (2) over --files
            files (repeated as needed), --cpu-us of CPU per sample; with
            --pin-memory the batches pass through DataLoader's own
            pin-memory thread (loop <- pin-memory thread <- worker
            processes). Without CUDA that thread still runs, DataLoader's
            own _pin_memory_loop, with a stand-in for the copy into pinned
            memory: Tensor.pin_memory = clone (pin_memory_device="cpu";
            torch.cuda.current_device / set_device made no-ops); "pin" in
            the output says which.

Options (all shapes but launch):
    --data DIR           sample files (rank: DIR/rank-RANK)
    --files N            sample files (memmap: files to map)
    --batch B            batch size (default 4)
    --workers W          DataLoader num_workers (default 2)
    --prefetch-factor P  DataLoader prefetch_factor (default 2)
    --cpu-us N[,N...]    per-sample CPU in the worker after the read (rank:
                         one value per rank, the last one repeated)
    --allreduce          rank: a gloo all_reduce after each step (MASTER_ADDR/
                         PORT from the environment); each step's "ar0/ar1_mono_ns",
                         "ar_cpu_ns" and "ar_run_delay_ns" (schedstat) around it
    --steps N            stop after N steps (ranks in a collective: all the same)
    --sleep-us N[,N...]  then a sleep of N us (rank: one value per rank): a
                         slow source without CPU (ranks of different speeds
                         on a machine with fewer cores than processes)
    --step-cpu-us N      per-step "compute" in the loop thread (default 2000)
    --seconds T          rank, loader: run steps until one ends T s or more
                         after the loop started (its first t0), the files
                         repeated as needed (a run as long on any machine;
                         default: one pass over the files)
    --sample-size BYTES  memmap: bytes per sample (default 256 KiB)
    --readers R, --queue Q   threads: reader threads, queue size
    --port-file FILE, --objects N   remote: the store's port, objects
    --ready FILE         write "PID\\n" to FILE (atomically) just before the
                         first step: a test attaches after it
    --ns-per-iter X      skip calibration (torch_loader.py's CPU loop)
    --out FILE           the JSON result (default: stdout)

The loop, in the main thread, for every step (as in torch_loader.py):
    t0 = perf_counter(); batch = GET(); t1 = perf_counter()
    CPU loop of --step-cpu-us;         t2 = perf_counter()
with CLOCK_MONOTONIC (ns) read next to each (the clock a tracer's events
use) and the thread's CPU time; GET is next(iterator) (its first call also
runs iter(loader): the first wait includes forking the workers) or, for
threads, queue.get(). The call to next() that ends the pass
(StopIteration) is not a step. After the loop: workers shut down and
joined (DataLoader shapes), readers joined (threads).

Output (JSON; *_s seconds on perf_counter, *_mono_ns CLOCK_MONOTONIC):
    program "torch_shapes", shape, format, argv, config, calibration
    pid, main_tid            the process and the loop thread
    main_comm                the loop thread's comm (/proc/self/task/T/comm)
    steps                    per step: step, wait_s (t1-t0), compute_s,
                             t0/t1/t2_mono_ns, wait_cpu_ns, compute_cpu_ns,
                             wait_run_delay_ns (schedstat: waiting for a CPU
                             inside get(), read just outside t0 and t1),
                             samples, bytes, source (the worker_id or
                             reader index that made the batch), iter_s (the
                             first step); threads: put_mono_ns (the reader's
                             clock right before its put()), woke (put after
                             t0: the reader handed it to a waiting loop)
    first_wait_s, total_wait_s, total_compute_s   over the steps
    loop_start_mono_ns, loop_end_mono_ns, loop_s   first t0 .. last t2
    samples, bytes           received by the loop
    main_threads             {tid: {comm, schedstat, name}} at the loop's end
    main_run_delay_ns        the loop thread's schedstat run_delay over the loop
    main_schedstat_end       the loop thread's schedstat [run ns, run_delay ns,
                             timeslices] since it started, read right before
                             the output is written, at
                             main_schedstat_end_mono_ns
    worker_pids, workers     DataLoader worker processes (not noworkers):
                             per worker, written at its exit: worker_id,
                             pid, tid, samples, bytes, read_s (open+read+close,
                             or the memmap copy, or the HTTP request),
                             read_calls, busy_s / busy_cpu_ns (its CPU loop),
                             start_mono_ns, end_mono_ns, run_ns,
                             run_delay_ns, log: per sample {index,
                             start_mono_ns, end_mono_ns (the read / copy /
                             request), cpu_end_mono_ns, bytes, + file and
                             offset (memmap), status (remote)}
    rank: rank, local_rank, world_size, cpu_us (this rank's); a rank exits
          (os._exit) right after its output, without the interpreter's teardown
    threads: readers: per reader {reader, tid, comm, samples, bytes, read_s,
             read_calls, log}; reader_tids
    noworkers: reads: the loop thread's own {samples, bytes, read_s,
               read_calls, log} (read_s = its time in open+read+close)
    memmap: mmap_files: per file {path, size, resident_before,
            resident_after (bytes, mincore, null if it failed), touched}
            (touched: bytes of the file the samples copied out), touched
    remote: port, requests, request_bytes, fetch_s (over the workers)
    loader: pin ("cuda", "stand-in" or null), pin_thread_tid, pin_thread_name
    shutdown_s, import_torch_s, run_s

Exit status 0 on success; 1 on error (message on stderr); 2 on bad usage.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

PROG_START = time.perf_counter()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_loader as tl  # noqa: E402  (clocks, CPU loop, sample files)

mono_ns, schedstat, threads, spin = tl.mono_ns, tl.schedstat, tl.threads, tl.spin
READ_CHUNK, BLOCK = tl.READ_CHUNK, tl.BLOCK
SHAPES = ("rank", "threads", "noworkers", "memmap", "remote", "loader")


def read_file(path):
    """open, os.read() in 1 MiB reads to EOF, close: (data, reads)"""
    fd = os.open(path, os.O_RDONLY)
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
    return b"".join(chunks), calls


def new_record(worker_id, state_dir=None):
    return {"worker_id": worker_id, "pid": os.getpid(), "tid": threading.get_native_id(),
            "start_mono_ns": mono_ns(), "schedstat_start": schedstat(), "samples": 0, "bytes": 0,
            "read_s": 0.0, "read_calls": 0, "busy_s": 0.0, "busy_cpu_ns": 0, "log": [],
            "_dir": state_dir}


def account(rec, r0, m0, m1, r1, nbytes, calls, iters, head, **extra):
    """after a sample's read (r0/m0 .. m1/r1): its CPU loop, then the record"""
    c0 = time.thread_time_ns()
    spin(iters, head[:BLOCK].ljust(BLOCK, b"\0"))
    c1 = time.thread_time_ns()
    m2 = mono_ns()
    r2 = time.perf_counter()
    if rec is not None:
        rec["samples"] += 1
        rec["bytes"] += nbytes
        rec["read_s"] += r1 - r0
        rec["read_calls"] += calls
        rec["busy_s"] += r2 - r1
        rec["busy_cpu_ns"] += c1 - c0
        ent = {"start_mono_ns": m0, "end_mono_ns": m1, "cpu_end_mono_ns": m2, "bytes": nbytes}
        ent.update(extra)
        rec["log"].append(ent)


# ---- DataLoader worker side (module globals live in each forked worker)
WORKER = None      # this worker's record (noworkers: the loop thread's)
CONN = None        # remote: this worker's HTTP connection


def _worker_exit():
    w = WORKER
    if w is None or not w.get("_dir"):
        return
    w["end_mono_ns"] = mono_ns()
    w["schedstat_end"] = schedstat()
    if w["schedstat_end"]:
        w["run_ns"], w["run_delay_ns"] = w["schedstat_end"][:2]
    d = w.pop("_dir")
    tmp = os.path.join(d, "worker-%d.json.tmp" % w["pid"])
    with open(tmp, "w") as f:
        json.dump(w, f)
    os.rename(tmp, tmp[:-4])


def worker_init_fn(worker_id):
    global WORKER
    import multiprocessing.util as mpu
    import torch.utils.data as tud
    ds = tud.get_worker_info().dataset
    WORKER = new_record(worker_id, ds.state_dir)
    with open(os.path.join(ds.state_dir, "pid-%d" % os.getpid()), "w") as f:
        f.write("%d %d\n" % (worker_id, threading.get_native_id()))
    mpu.Finalize(None, _worker_exit, exitpriority=100)


def _item(torch, i, nbytes, head):
    w = WORKER
    return {"size": nbytes, "index": i, "worker": w["worker_id"] if w is not None else -1,
            "data": torch.frombuffer(bytearray(head[:16].ljust(16, b"\0")), dtype=torch.uint8)}


class FileSamples:
    """map-style Dataset over sample files (index i reads file i mod N)"""

    def __init__(self, paths, iters, state_dir, length=None, sleep_s=0.0):
        self.paths, self.iters, self.state_dir = paths, iters, state_dir
        self.length = length or len(paths)
        self.sleep_s = sleep_s

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        import torch
        r0, m0 = time.perf_counter(), mono_ns()
        data, calls = read_file(self.paths[i % len(self.paths)])
        m1, r1 = mono_ns(), time.perf_counter()
        account(WORKER, r0, m0, m1, r1, len(data), calls, self.iters, data, index=i)
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return _item(torch, i, len(data), data)


class MemmapSamples:
    """samples of SIZE bytes out of numpy.memmap files, copied (page faults)"""

    def __init__(self, paths, size, iters, state_dir):
        import numpy as np
        self.paths, self.size, self.iters, self.state_dir = paths, size, iters, state_dir
        self.maps = [np.memmap(p, dtype=np.uint8, mode="r") for p in paths]
        self.index = [(f, off) for f, m in enumerate(self.maps) for off in range(0, len(m), size)]

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        import numpy as np
        import torch
        f, off = self.index[i]
        r0, m0 = time.perf_counter(), mono_ns()
        a = np.array(self.maps[f][off:off + self.size])      # the copy: page faults
        m1, r1 = mono_ns(), time.perf_counter()
        head = a[:BLOCK].tobytes()
        account(WORKER, r0, m0, m1, r1, int(a.nbytes), 0, self.iters, head, index=i, file=f, offset=off)
        return _item(torch, i, int(a.nbytes), head)


class RemoteSamples:
    """sample i = GET /obj/i from 127.0.0.1:PORT (one connection per worker)"""

    def __init__(self, port, n, iters, state_dir):
        self.port, self.n, self.iters, self.state_dir = port, n, iters, state_dir

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        global CONN
        import http.client
        import torch
        r0, m0 = time.perf_counter(), mono_ns()
        for attempt in (0, 1):
            if CONN is None:
                CONN = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                CONN.request("GET", "/obj/%d" % i)
                resp = CONN.getresponse()
                data = resp.read()
                break
            except (http.client.HTTPException, ConnectionError):
                CONN.close()        # the server closed a kept-alive connection: once more
                CONN = None
                if attempt:
                    raise
        if resp.status != 200:
            raise OSError("GET /obj/%d: HTTP %d" % (i, resp.status))
        if resp.will_close:
            CONN.close()
            CONN = None
        m1, r1 = mono_ns(), time.perf_counter()
        account(WORKER, r0, m0, m1, r1, len(data), 1, self.iters, data, index=i, status=resp.status)
        return _item(torch, i, len(data), data)


# ---- the loop
class Loop:
    """the timed loop of the main thread: step(GET) times GET and the compute"""

    def __init__(self, step_iters, ready=None):
        self.steps = []
        self.iters = step_iters
        self.block = bytes(BLOCK)
        self.main_tid = threading.get_native_id()
        self.start_mono = None
        self.end_sched = None
        if ready:
            with open(ready + ".tmp", "w") as f:
                f.write("%d\n" % os.getpid())
            os.rename(ready + ".tmp", ready)
        self.sched0 = schedstat()
        # this thread's schedstat, kept open: one pread per read (its run_delay
        # around each get() says how long it waited for a CPU inside it)
        try:
            self.sched_fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self.sched_fd = None

    def run_delay(self):
        if self.sched_fd is None:
            return 0
        return int(os.pread(self.sched_fd, 128, 0).split()[1])

    def step(self, get):
        """one step; StopIteration from GET ends the loop (not a step)"""
        d0 = self.run_delay()
        t0, m0, c0 = time.perf_counter(), mono_ns(), time.thread_time_ns()
        if self.start_mono is None:
            self.start_mono, self.start_t = m0, t0
        item = get()
        t1, m1, c1 = time.perf_counter(), mono_ns(), time.thread_time_ns()
        d1 = self.run_delay()
        spin(self.iters, self.block)
        t2, m2, c2 = time.perf_counter(), mono_ns(), time.thread_time_ns()
        st = {"step": len(self.steps), "wait_s": t1 - t0, "compute_s": t2 - t1,
              "t0_mono_ns": m0, "t1_mono_ns": m1, "t2_mono_ns": m2,
              "wait_cpu_ns": c1 - c0, "compute_cpu_ns": c2 - c1, "wait_run_delay_ns": d1 - d0}
        self.steps.append(st)
        self.end_t = t2
        return item, st

    def finish(self):
        s1 = schedstat()
        self.main_threads = threads()
        self.run_delay = s1[1] - self.sched0[1] if s1 and self.sched0 else None

    def out(self):
        st = self.steps
        comm = self.main_threads.get(str(self.main_tid), {}).get("comm")
        return {"pid": os.getpid(), "main_tid": self.main_tid, "main_comm": comm,
                "steps": st, "first_wait_s": st[0]["wait_s"] if st else None,
                "total_wait_s": sum(s["wait_s"] for s in st),
                "total_compute_s": sum(s["compute_s"] for s in st),
                "loop_start_mono_ns": st[0]["t0_mono_ns"] if st else None,
                "loop_end_mono_ns": st[-1]["t2_mono_ns"] if st else None,
                "loop_s": (self.end_t - self.start_t) if st else 0.0,
                "samples": sum(s.get("samples", 0) for s in st),
                "bytes": sum(s.get("bytes", 0) for s in st),
                "main_threads": self.main_threads, "main_run_delay_ns": self.run_delay}


def collect_workers(state_dir):
    workers, pids = [], []
    for name in sorted(os.listdir(state_dir)):
        p = os.path.join(state_dir, name)
        if name.startswith("pid-"):
            pids.append(int(name[4:]))
        elif name.startswith("worker-") and name.endswith(".json"):
            with open(p) as f:
                workers.append(json.load(f))
        os.unlink(p)
    os.rmdir(state_dir)
    workers.sort(key=lambda w: w["worker_id"])
    order = {w["pid"]: w["worker_id"] for w in workers}
    pids.sort(key=lambda p: order.get(p, 1 << 30))
    return workers, pids


def run_loader(args, torch, ds, loop, seconds=None, pin=None):
    """the DataLoader loop: steps until StopIteration or SECONDS; then the
    workers shut down. Returns (extra output, error or None)"""
    from torch.utils.data import DataLoader
    kw = {}
    if args.workers > 0:
        kw = dict(worker_init_fn=worker_init_fn, prefetch_factor=args.prefetch_factor,
                  persistent_workers=args.shape == "loader")
    if pin == "cuda":
        kw["pin_memory"] = True
    elif pin == "stand-in":
        kw.update(pin_memory=True, pin_memory_device="cpu")
    loader = DataLoader(ds, batch_size=args.batch, shuffle=False, num_workers=args.workers, **kw)
    state = {"it": None, "iter_s": None}

    def get():
        if state["it"] is None:
            s = time.perf_counter()
            state["it"] = iter(loader)
            state["iter_s"] = time.perf_counter() - s
        return next(state["it"])

    extra = {}
    while True:
        try:
            batch, st = loop.step(get)
        except StopIteration:
            break
        st["samples"] = int(batch["size"].numel())
        st["bytes"] = int(batch["size"].sum())
        st["source"] = int(batch["worker"][0])
        if len(loop.steps) == 1:
            st["iter_s"] = state["iter_s"]
            t = getattr(state["it"], "_pin_memory_thread", None)
            if t is not None:
                extra["pin_thread_tid"], extra["pin_thread_name"] = t.native_id, t.name
        del batch
        if args.allreduce:
            # the step's collective: the faster ranks wait in it for the slowest
            import torch.distributed as dist
            d0 = loop.run_delay()
            a0, c0 = mono_ns(), time.thread_time_ns()
            dist.all_reduce(torch.ones(1))
            st["ar0_mono_ns"], st["ar1_mono_ns"] = a0, mono_ns()
            st["ar_cpu_ns"] = time.thread_time_ns() - c0
            st["ar_run_delay_ns"] = loop.run_delay() - d0
        if args.steps and len(loop.steps) >= args.steps:
            break
        if seconds is not None and st["t2_mono_ns"] - loop.start_mono >= seconds * 1e9:
            break
    loop.finish()
    t_end = time.perf_counter()
    it = state["it"]
    if it is not None and hasattr(it, "_shutdown_workers"):
        it._shutdown_workers()
    state["it"] = it = None
    extra["shutdown_s"] = time.perf_counter() - t_end
    if args.workers > 0:
        workers, pids = collect_workers(ds.state_dir)
        extra["worker_pids"], extra["workers"] = pids, workers
        extra["workers_run_ns"] = sum(w.get("run_ns", 0) for w in workers)
        extra["workers_run_delay_ns"] = sum(w.get("run_delay_ns", 0) for w in workers)
        alive = [p for p in pids if os.path.exists("/proc/%d" % p)]
        if alive:
            return extra, "workers still alive after shutdown: %s" % alive
        if len(workers) != len(pids):
            return extra, "%d workers started, %d reported at exit" % (len(pids), len(workers))
    return extra, None


def set_comm(name):
    try:
        with open("/proc/thread-self/comm", "w") as f:
            f.write(name[:15])
    except OSError:
        pass


def run_threads(args, torch, loop, iters):
    """the loop fed by reader threads through a queue.Queue"""
    import queue
    paths = [tl.sample_path(args.data, i) for i in range(args.files)]
    nb = (len(paths) + args.batch - 1) // args.batch
    q = queue.Queue(maxsize=args.queue)
    readers = [{"reader": k, "samples": 0, "bytes": 0, "read_s": 0.0, "read_calls": 0,
                "busy_s": 0.0, "busy_cpu_ns": 0, "log": []} for k in range(args.readers)]
    errors = []

    def reader(k):
        rec = readers[k]
        rec["tid"] = threading.get_native_id()
        set_comm("reader-%d" % k)
        with open("/proc/thread-self/comm") as f:
            rec["comm"] = f.read().strip()
        try:
            for b in range(k, nb, args.readers):
                heads, n = [], 0
                for i in range(b * args.batch, min((b + 1) * args.batch, len(paths))):
                    r0, m0 = time.perf_counter(), mono_ns()
                    data, calls = read_file(paths[i])
                    m1, r1 = mono_ns(), time.perf_counter()
                    account(rec, r0, m0, m1, r1, len(data), calls, iters, data, index=i)
                    heads.append(data[:16].ljust(16, b"\0"))
                    n += len(data)
                t = torch.frombuffer(bytearray(b"".join(heads)), dtype=torch.uint8).view(len(heads), 16)
                q.put({"batch": b, "reader": k, "samples": len(heads), "bytes": n, "data": t,
                       "put_mono_ns": mono_ns()})
        except Exception as e:          # said by the loop, which would wait forever
            errors.append("reader %d: %r" % (k, e))
            q.put(None)

    ths = [threading.Thread(target=reader, args=(k,), name="reader-%d" % k, daemon=True)
           for k in range(args.readers)]
    for t in ths:
        t.start()
    for _ in range(nb):
        item, st = loop.step(q.get)
        if item is None:
            break
        st.update(samples=item["samples"], bytes=item["bytes"], source=item["reader"],
                  batch=item["batch"], put_mono_ns=item["put_mono_ns"],
                  woke=item["put_mono_ns"] > st["t0_mono_ns"])
    loop.finish()
    t_end = time.perf_counter()
    for t in ths:
        t.join()
    extra = {"readers": readers, "reader_tids": [r.get("tid") for r in readers],
             "shutdown_s": time.perf_counter() - t_end}
    return extra, ("; ".join(errors) or None)


def mincore_bytes(arr):
    """bytes of a memmap's file in the page cache (mincore on its mapping), or None"""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    page = os.sysconf("SC_PAGE_SIZE")
    n = (arr.nbytes + page - 1) // page
    vec = (ctypes.c_ubyte * n)()
    rc = libc.mincore(ctypes.c_void_p(arr.ctypes.data), ctypes.c_size_t(arr.nbytes), vec)
    if rc != 0:
        return None
    return min(sum(v & 1 for v in vec) * page, arr.nbytes)


def touched_bytes(workers, nfiles):
    """per file, bytes covered by the samples' [offset, offset + bytes) ranges"""
    ranges = [[] for _ in range(nfiles)]
    for w in workers:
        for e in w["log"]:
            ranges[e["file"]].append((e["offset"], e["offset"] + e["bytes"]))
    out = []
    for rs in ranges:
        tot, end = 0, 0
        for a, b in sorted(rs):
            a = max(a, end)
            if b > a:
                tot += b - a
                end = b
        out.append(tot)
    return out


def launch(argv):
    """launch --nproc N -- SHAPE ARGS...: N ranks of this program"""
    if len(argv) < 3 or argv[0] != "--nproc" or "--" not in argv:
        print("usage: torch_shapes.py launch --nproc N -- SHAPE ARGS...", file=sys.stderr)
        return 2
    n = int(argv[1])
    rest = argv[argv.index("--") + 1:]
    procs = []
    for r in range(n):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(n),
                   LOCAL_WORLD_SIZE=str(n), GROUP_RANK="0", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT="29500", OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + rest, env=env))
    rcs = [p.wait() for p in procs]
    return next((rc for rc in rcs if rc), 0)


def run(args):
    t_imp = time.perf_counter()
    import torch
    import warnings
    warnings.filterwarnings("ignore", message="This DataLoader will create")
    import_torch_s = time.perf_counter() - t_imp
    ns_per_iter = args.ns_per_iter or tl.calibrate()
    cpu = [float(x) for x in str(args.cpu_us).split(",")]
    sleeps = [float(x) for x in str(args.sleep_us).split(",")]
    sleep_us = sleeps[0]
    extra = {}
    if args.shape == "rank":
        rank = int(os.environ.get("RANK", "0"))
        extra = {"rank": rank, "local_rank": int(os.environ.get("LOCAL_RANK", rank)),
                 "world_size": int(os.environ.get("WORLD_SIZE", "1"))}
        cpu_us = cpu[min(rank, len(cpu) - 1)]
        sleep_us = sleeps[min(rank, len(sleeps) - 1)]
        extra["cpu_us"] = cpu_us
        extra["sleep_us"] = sleep_us
        data = os.path.join(args.data, "rank-%d" % rank)
        args.out = args.out.format(rank=rank) if args.out else None
        if args.allreduce:
            import torch.distributed as dist
            dist.init_process_group("gloo")     # env://: MASTER_ADDR/PORT, RANK, WORLD_SIZE
        args.ready = args.ready.format(rank=rank) if args.ready else None
    else:
        cpu_us = cpu[0]
        data = args.data
    iters = tl.iters_for(cpu_us, ns_per_iter)
    step_iters = tl.iters_for(args.step_cpu_us, ns_per_iter)
    state_dir = tempfile.mkdtemp(prefix="torch_shapes.")
    paths = [tl.sample_path(data, i) for i in range(args.files)] if data else []
    for p in paths:
        if not os.path.isfile(p):
            raise OSError("%s missing (create it with torch_loader.py --create)" % p)

    err = None
    pin = None
    if args.shape in ("rank", "loader", "noworkers"):
        length = 1 << 30 if args.seconds or args.steps else None
        ds = FileSamples(paths, iters, state_dir, length, sleep_us / 1e6)
        if args.shape == "noworkers":
            global WORKER
            args.workers = 0
            WORKER = new_record(-1)
        if args.shape == "loader" and args.pin_memory:
            pin = "cuda" if torch.cuda.is_available() else "stand-in"
            if pin == "stand-in":
                # DataLoader's own pin-memory thread, a stand-in for the copy to pinned memory
                torch.Tensor.pin_memory = lambda self, device=None: self.clone()
                torch.cuda.current_device = lambda: 0
                torch.cuda.set_device = lambda device: None
            extra["pin"] = pin
        loop = Loop(step_iters, args.ready)
        more, err = run_loader(args, torch, ds, loop, args.seconds, pin)
        extra.update(more)
        if args.shape == "noworkers":
            rec = WORKER
            rec.pop("_dir", None)
            extra["reads"] = {k: rec[k] for k in ("tid", "samples", "bytes", "read_s", "read_calls", "log")}
        if os.path.isdir(state_dir):
            os.rmdir(state_dir)
    elif args.shape == "memmap":
        ds = MemmapSamples(paths, args.sample_size, iters, state_dir)
        before = [mincore_bytes(m) for m in ds.maps]
        loop = Loop(step_iters, args.ready)
        more, err = run_loader(args, torch, ds, loop)
        extra.update(more)
        after = [mincore_bytes(m) for m in ds.maps]
        touched = touched_bytes(extra.get("workers", []), len(paths))
        extra["mmap_files"] = [{"path": os.path.abspath(p), "size": int(m.nbytes), "resident_before": b,
                                "resident_after": a, "touched": t}
                               for p, m, b, a, t in zip(paths, ds.maps, before, after, touched)]
        extra["touched"] = sum(touched)
    elif args.shape == "remote":
        with open(args.port_file) as f:
            port = int(f.read().split()[0])
        ds = RemoteSamples(port, args.objects, iters, state_dir)
        loop = Loop(step_iters, args.ready)
        more, err = run_loader(args, torch, ds, loop)
        extra.update(more)
        logs = [e for w in extra.get("workers", []) for e in w["log"]]
        extra.update(port=port, requests=len(logs), request_bytes=sum(e["bytes"] for e in logs),
                     fetch_s=sum(w["read_s"] for w in extra.get("workers", [])))
    elif args.shape == "threads":
        os.rmdir(state_dir)
        loop = Loop(step_iters, args.ready)
        more, err = run_threads(args, torch, loop, iters)
        extra.update(more)

    if args.allreduce:
        import torch.distributed as dist
        dist.destroy_process_group()
    out = {"program": "torch_shapes", "shape": args.shape, "format": 1, "argv": sys.argv[1:],
           "config": {"data": os.path.abspath(data) if data else None, "files": args.files,
                      "batch": args.batch, "workers": args.workers, "prefetch_factor": args.prefetch_factor,
                      "cpu_us": cpu_us, "step_cpu_us": args.step_cpu_us, "seconds": args.seconds,
                      "sample_size": args.sample_size, "readers": args.readers, "queue": args.queue,
                      "objects": args.objects, "pin_memory": args.pin_memory,
                      "torch": torch.__version__, "nproc": os.cpu_count()},
           "calibration": {"unit": "hashlib.sha256().update(1 KiB)", "ns_per_iter": ns_per_iter,
                           "iters_per_sample": iters, "iters_per_step": step_iters}}
    out.update(loop.out())
    out.update(extra)
    out["import_torch_s"] = import_torch_s
    out["run_s"] = time.perf_counter() - PROG_START
    out["main_schedstat_end"] = schedstat()
    out["main_schedstat_end_mono_ns"] = mono_ns()
    summary = ("torch_shapes %s: pid %d, %d steps, wait %.3f s (first %.3f s), compute %.3f s, loop %.3f s, "
               "%d samples, %d bytes, run %.2f s"
               % (args.shape + (" %d" % extra["rank"] if "rank" in extra else ""), out["pid"],
                  len(out["steps"]), out["total_wait_s"], out["first_wait_s"] or 0.0,
                  out["total_compute_s"], out["loop_s"], out["samples"], out["bytes"], out["run_s"]))
    if args.out:
        with open(args.out + ".tmp", "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        os.rename(args.out + ".tmp", args.out)
        print(summary, file=sys.stderr)
    else:
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    if not out["steps"]:
        err = err or "no step ran"
    if err:
        print("torch_shapes: %s" % err, file=sys.stderr)
    if args.shape == "rank":
        # a rank ends right after its last reading (main_schedstat_end): the
        # interpreter's teardown with torch loaded (0.2-0.6 s, unmeasured)
        # would otherwise be the end of the thread's life in a trace. Its
        # workers are joined, its process group destroyed, its output written.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1 if err else 0)
    return 1 if err else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "launch":
        return launch(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shape", choices=SHAPES)
    ap.add_argument("--data")
    ap.add_argument("--files", type=int, default=0)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--prefetch-factor", type=int, default=2)
    ap.add_argument("--cpu-us", default="0")
    ap.add_argument("--sleep-us", default="0")
    ap.add_argument("--step-cpu-us", type=float, default=2000)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--sample-size", type=int, default=256 * 1024)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--queue", type=int, default=2)
    ap.add_argument("--port-file")
    ap.add_argument("--objects", type=int, default=0)
    ap.add_argument("--pin-memory", action="store_true")
    ap.add_argument("--ready")
    ap.add_argument("--allreduce", action="store_true")
    ap.add_argument("--steps", type=int)
    ap.add_argument("--ns-per-iter", type=float)
    ap.add_argument("--out")
    args = ap.parse_args()
    try:
        cpu_ok = all(float(x) >= 0 for x in args.cpu_us.split(","))
    except ValueError:
        cpu_ok = False
    if args.batch < 1 or args.workers < 0 or args.prefetch_factor < 1 or not cpu_ok or \
            args.step_cpu_us < 0 or args.sample_size < 4096 or args.readers < 1 or args.queue < 1 or \
            (args.seconds is not None and args.seconds <= 0):
        ap.error("counts must be positive (workers, CPU times >= 0)")
    if args.shape == "remote":
        if not args.port_file or args.objects < 1:
            ap.error("remote needs --port-file and --objects")
    elif not args.data or args.files < 1:
        ap.error("%s needs --data and --files" % args.shape)
    if args.shape in ("rank", "loader") and args.workers < 1:
        ap.error("%s needs workers" % args.shape)
    if args.shape in ("memmap", "remote", "loader", "rank") and args.workers < 1:
        ap.error("%s needs --workers >= 1" % args.shape)
    return run(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError as e:
        print("torch_shapes: %s" % e, file=sys.stderr)
        sys.exit(1)
