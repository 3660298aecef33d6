#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""stack_truth.py — a Python program of known structure, for the tests of
Python stacks in the exports (tests/t_export_stacks.sh).

    stack_truth.py DATA MAPPED [--reads N] [--size BYTES] [--burn-s S] [--naps N]

It does four things, each in a function of its own, and prints where (one
JSON object on stdout, read from its own code objects, never hard-coded):

  - read_data(): N preads of BYTES from DATA, all on one line;
  - touch_map(): every page of MAPPED through an mmap, evicted from the
    page cache first (posix_fadvise DONTNEED), so the touches fault;
  - nap(): N sleeps of 20 ms;
  - burn(): S seconds of pure Python arithmetic on the CPU.

Output keys: file (the code objects' co_filename), pid, tid, and per
function its name (co_qualname where the interpreter has it, else co_name)
and the line of the statement that does the work: read_func/read_line,
map_func/map_line, nap_func/nap_line, busy_func/busy_line; data, mapped
(the two paths), reads, bytes (what the preads returned), pages (touched),
naps, burn_s, burn_cpu_s (the thread's CPU time in burn(): time.thread_time),
python (sys.version).
"""
import inspect
import json
import mmap
import os
import sys
import threading
import time

PAGE = mmap.PAGESIZE


def read_data(path, reads, size):
    fd = os.open(path, os.O_RDONLY)
    total = 0
    for i in range(reads):
        total += len(os.pread(fd, size, i * size))  # work: read
    os.close(fd)
    return total


def touch_map(path):
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
    total = 0
    for off in range(0, size, PAGE):
        total += m[off]  # work: map
    m.close()
    os.close(fd)
    return size // PAGE


def nap(n):
    for _ in range(n):
        time.sleep(0.02)  # work: nap


def burn(seconds):
    """seconds of wall time on the CPU as it is given; the thread's own CPU time spent"""
    cpu0 = time.thread_time()
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for i in range(2000):
            x = (x + i * i) % 1000003  # work: busy
    return time.thread_time() - cpu0


def where(fn, tag):
    """(name, line) of the statement of fn marked `# work: tag`."""
    lines, first = inspect.getsourcelines(fn)
    code = fn.__code__
    name = getattr(code, "co_qualname", code.co_name)
    for k, text in enumerate(lines):
        if text.rstrip().endswith("# work: " + tag):
            return name, first + k
    raise SystemExit("stack_truth: no line marked %r in %s" % (tag, name))


def main():
    args = sys.argv[1:]
    opts = {"--reads": 64, "--size": 4096, "--burn-s": 1.0, "--naps": 5}
    pos = []
    i = 0
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = type(opts[args[i]])(args[i + 1])
            i += 2
        else:
            pos.append(args[i])
            i += 1
    if len(pos) != 2:
        raise SystemExit(__doc__)
    data, mapped = pos
    got = read_data(data, opts["--reads"], opts["--size"])
    pages = touch_map(mapped)
    nap(opts["--naps"])
    burn_cpu = burn(opts["--burn-s"])
    out = {"file": read_data.__code__.co_filename, "pid": os.getpid(),
           "tid": threading.get_native_id(), "python": sys.version.split()[0],
           "data": data, "mapped": mapped, "reads": opts["--reads"], "bytes": got,
           "pages": pages, "naps": opts["--naps"], "burn_s": opts["--burn-s"],
           "burn_cpu_s": round(burn_cpu, 6)}
    for key, fn, tag in (("read", read_data, "read"), ("map", touch_map, "map"),
                         ("nap", nap, "nap"), ("busy", burn, "busy")):
        out[key + "_func"], out[key + "_line"] = where(fn, tag)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
