"""native_frames.py — Python calling native code that reads: ground truth for
gpuio's native frames (t_native_frames.sh). Any CPython 3.10+, no packages.

    native_frames.py --lib LIBNATIVE.so --data FILE --calls N --out OUT

Calls native_outer -> native_mid -> native_leaf_read of the library
(tests/progs/native_lib.c, built with frame pointers) N times through
ctypes from one line marked "SITE:native", each reading 4 KiB of FILE
(lseek'd back to 0 by os.lseek between, a call of its own), then lives
on --linger seconds (1). Writes to OUT
its pid, the library's path as mapped, the site's file, line and
function, the calls made and the bytes the library's reads returned.
"""
import argparse
import ctypes
import json
import os
import sys
import time


def site_line(tag):
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# SITE:" + tag):
                return i
    raise SystemExit("no SITE:%s line" % tag)


def read_all(lib, fd, buf, calls):
    got = 0
    for _ in range(calls):
        os.lseek(fd, 0, os.SEEK_SET)
        got += lib.native_outer(fd, buf, 4096)  # SITE:native
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--out", required=True)
    ap.add_argument("--linger", type=float, default=1.0)
    a = ap.parse_args()
    lib = ctypes.CDLL(os.path.realpath(a.lib))
    lib.native_outer.restype = ctypes.c_long
    lib.native_outer.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_long]
    buf = ctypes.create_string_buffer(4096)
    fd = os.open(a.data, os.O_RDONLY)
    got = read_all(lib, fd, buf, a.calls)
    os.close(fd)
    # alive a while: the collector names native frames from the process's
    # own mappings, which go with it (docs/stacks.md)
    time.sleep(a.linger)
    with open(a.out, "w") as f:
        json.dump({"pid": os.getpid(), "lib": os.path.realpath(a.lib), "data": os.path.realpath(a.data),
                   "file": os.path.abspath(__file__), "line": site_line("native"),
                   "func": "read_all", "calls": a.calls, "bytes": got,
                   "python": "%d.%d" % sys.version_info[:2]}, f)


if __name__ == "__main__":
    main()
