#!/usr/bin/env python3
"""tests/bench/py_work.py — the Python workloads of tests/bench/stacks.sh.

  py_work.py pread FILE CALLS DEPTH   random 4 KiB os.pread()s, DEPTH Python
                                      frames deep (a stack walk's length);
                                      prints ns_per_call=N
  py_work.py spin SECONDS             one thread busy on its CPU; prints
                                      cpu_s=X (its own CPU time)
"""
import os
import random
import sys
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


if __name__ == "__main__":
    if sys.argv[1] == "pread":
        pread_loop(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "spin":
        spin(float(sys.argv[2]))
    else:
        sys.exit("usage: py_work.py pread FILE CALLS DEPTH | spin SECONDS")
