"""py_sites.py — a data loading loop of known structure that knows its own
lines and times itself: ground truth for gpuio's Python stacks (the call
sites of reads, faults and receives, the CPU profile, the loop's time inside
next()). Any CPython 3.10+, no packages.

    py_sites.py --data DIR --mode workers|threads|none [--steps N]
                [--wait-file PATH] --out FILE

Per sample (Dataset.__getitem__, in a worker process, a reader thread, or
the loop itself with --mode none), three fetches through three functions,
each at one line marked "SITE:" below:
  read_plain   a plain read of a whole file             (SITE:plain)
  read_mapped  a slice of a memory-mapped file, its pages dropped from the
               page cache first, so that touching them reads them (SITE:mmap)
  fetch_socket a fixed-size object from a server process over TCP  (SITE:sock)
then decode(): pure-Python CPU work, the busy function.
The loop reads its label file itself once (SITE:label), then per step times
next(it) and a train_step() (some CPU work, then a sleep standing for the
wait on the GPU). With --wait-file it waits for PATH to exist
before its loop (a tracer attaches meanwhile).

The JSON written to FILE: the program's path, each SITE's line and function,
the bytes each fetch moved, the files of each kind, the loop's thread id and
its time inside next() (perf_counter_ns around each call), the steps.
"""
import argparse
import json
import mmap
import multiprocessing as mp
import os
import queue
import re
import socket
import sys
import threading
import time

OBJ = 96 * 1024         # bytes a socket fetch gets
MAP_BYTES = 128 * 1024  # bytes of a mapped file a sample touches


def site_lines():
    """SITE: markers of this file: {name: (line, function)}"""
    out, func = {}, None
    with open(__file__) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if s.startswith("def "):
                func = s[4:s.index("(")]
            m = re.search(r"[)\]]  # SITE:(\w+)$", line.rstrip())
            if m:
                out[m.group(1)] = (n, func)
    return out


def read_plain(path):
    with open(path, "rb") as f:
        return f.read()  # SITE:plain


def read_mapped(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        with mmap.mmap(fd, MAP_BYTES, prot=mmap.PROT_READ) as mm:
            return mm[0:MAP_BYTES]  # SITE:mmap
    finally:
        os.close(fd)


def fetch_socket(port):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET\n")
        buf, got = bytearray(OBJ), 0
        view = memoryview(buf)
        while got < OBJ:
            n = s.recv_into(view[got:])  # SITE:sock
            if not n:
                break
            got += n
        return got


def decode(blob, rounds):
    x = 0
    for _ in range(rounds):
        for b in blob[:2048]:
            x = (x * 31 + b) & 0xFFFFFFFF
    return x


class Dataset:
    def __init__(self, data, port, rounds):
        self.plain = sorted(os.path.join(data, f) for f in os.listdir(data) if f.startswith("plain-"))
        self.mapped = sorted(os.path.join(data, f) for f in os.listdir(data) if f.startswith("mapped-"))
        self.port, self.rounds = port, rounds

    def __getitem__(self, i):
        a = read_plain(self.plain[i % len(self.plain)])
        b = read_mapped(self.mapped[i % len(self.mapped)])
        n = fetch_socket(self.port)
        decode(a, self.rounds)
        return len(a), len(b), n


def serve(lsock):
    """The object store: each connection gets OBJ bytes."""
    blob = os.urandom(OBJ)
    while True:
        c, _ = lsock.accept()
        with c:
            c.recv(16)
            c.sendall(blob)


def worker(ds, idx_q, out_q):
    while True:
        i = idx_q.get()
        if i is None:
            return
        out_q.put(ds[i])


class Loader:
    """An iterator over samples fetched by workers (processes or threads) or inline."""

    def __init__(self, ds, mode, n, nworkers=2, depth=2):
        self.ds, self.mode, self.n, self.sent, self.got = ds, mode, n, 0, 0
        if mode == "none":
            return
        if mode == "workers":
            ctx = mp.get_context("fork")
            self.idx, self.out = ctx.Queue(), ctx.Queue()
            self.ws = [ctx.Process(target=worker, args=(ds, self.idx, self.out), daemon=True)
                       for _ in range(nworkers)]
        else:
            self.idx, self.out = queue.Queue(), queue.Queue()
            self.ws = [threading.Thread(target=worker, args=(ds, self.idx, self.out), daemon=True)
                       for _ in range(nworkers)]
        for w in self.ws:
            w.start()
        for _ in range(min(n, nworkers * depth)):
            self._send()

    def _send(self):
        self.idx.put(self.sent)
        self.sent += 1

    def __iter__(self):
        return self

    def __next__(self):
        if self.got == self.n:
            raise StopIteration
        self.got += 1
        if self.mode == "none":
            return self.ds[self.got - 1]
        r = self.out.get()
        if self.sent < self.n:
            self._send()
        return r

    def close(self):
        if self.mode != "none":
            for _ in self.ws:
                self.idx.put(None)


def train_step(rounds, sync_ms):
    """the host's part of a step, then a wait for the GPU's (a sleep)"""
    x = 0
    for i in range(rounds * 2048):
        x ^= i
    time.sleep(sync_ms / 1000)
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--mode", choices=("workers", "threads", "none"), default="workers")
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=6, help="decode's work per sample")
    ap.add_argument("--step-rounds", type=int, default=4, help="train_step's work on the CPU")
    ap.add_argument("--sync-ms", type=float, default=4, help="train_step's wait for the GPU")
    ap.add_argument("--wait-file")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    lsock = socket.create_server(("127.0.0.1", 0))
    port = lsock.getsockname()[1]
    srv = mp.get_context("fork").Process(target=serve, args=(lsock,), daemon=True)
    srv.start()
    ds = Dataset(a.data, port, a.rounds)
    if a.wait_file:
        print("waiting for", a.wait_file, flush=True)
        while not os.path.exists(a.wait_file):
            time.sleep(0.01)
    with open(os.path.join(a.data, "labels.csv"), "rb") as f:
        labels = f.read()  # SITE:label
    it = Loader(ds, a.mode, a.steps)
    next_ns, steps, got = 0, [], [0, 0, 0]
    for _ in range(a.steps):
        t0 = time.perf_counter_ns()
        m0 = time.monotonic_ns()
        sample = next(it)  # SITE:next
        t1 = time.perf_counter_ns()
        train_step(a.step_rounds, a.sync_ms)
        t2 = time.perf_counter_ns()
        next_ns += t1 - t0
        steps.append({"start_mono_ns": m0, "next_ns": t1 - t0, "step_ns": t2 - t1})
        got = [g + s for g, s in zip(got, sample)]
    it.close()
    srv.terminate()
    sites = site_lines()
    out = {
        "program": os.path.abspath(__file__), "data": os.path.abspath(a.data), "python": list(sys.version_info[:3]),
        "pid": os.getpid(), "loop_tid": threading.get_native_id(), "mode": a.mode,
        "sites": {k: {"line": v[0], "function": v[1]} for k, v in sites.items()},
        "busy_function": "decode",
        "bytes": {"plain": got[0], "mmap": got[1], "sock": got[2], "label": len(labels)},
        "next_ns": next_ns, "steps": steps,
    }
    with open(a.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
