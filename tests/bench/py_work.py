#!/usr/bin/env python3
"""tests/bench/py_work.py — the Python workloads of tests/bench/stacks.sh.

  py_work.py pread FILE CALLS DEPTH   random 4 KiB os.pread()s, DEPTH Python
                                      frames deep (a stack walk's length);
                                      prints ns_per_call=N
  py_work.py spin SECONDS             one thread busy on its CPU; prints
                                      cpu_s=X (its own CPU time)
  py_work.py pingpong N DEPTH         two threads pass a byte through two
                                      pipes N times, each sleeping in
                                      os.read() DEPTH Python frames deep
                                      (a switch-out's stack); prints
                                      us_per_round_trip=X
"""
import os
import random
import sys
import threading
import time


def deep(n, fn):
    return fn() if n <= 0 else deep(n - 1, fn)


def pread_loop(path, calls, depth):
    fd = os.open(path, os.O_RDONLY)
    blocks = os.fstat(fd).st_size // 4096
    rnd = random.Random(7)
    offs = [rnd.randrange(blocks) * 4096 for _ in range(calls)]

    def run():
        t0 = time.perf_counter_ns()
        for o in offs:
            os.pread(fd, 4096, o)
        return time.perf_counter_ns() - t0

    ns = deep(depth, run)
    print("ns_per_call=%d" % (ns // calls))


def spin(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for i in range(10000):
            x ^= i
    print("cpu_s=%.3f" % time.process_time())


def pingpong(n, depth):
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()

    def peer():
        for _ in range(n):
            os.read(r1, 1)
            os.write(w2, b"x")

    t = threading.Thread(target=lambda: deep(depth, peer))
    t.start()

    def run():
        t0 = time.perf_counter()
        for _ in range(n):
            os.write(w1, b"x")
            os.read(r2, 1)
        return time.perf_counter() - t0

    s = deep(depth, run)
    t.join()
    print("us_per_round_trip=%.2f" % (s / n * 1e6))


if __name__ == "__main__":
    if sys.argv[1] == "pread":
        pread_loop(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "spin":
        spin(float(sys.argv[2]))
    elif sys.argv[1] == "pingpong":
        pingpong(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit("usage: py_work.py pread FILE CALLS DEPTH | spin SECONDS | pingpong N DEPTH")
