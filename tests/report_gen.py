#!/usr/bin/env python3
"""report_gen.py — synthetic gpuio captures with known content, for the
`gpuio report` tests and benchmark. Records are packed with struct per
bpf/gpuio_abi.h (the stats record's counter count is read from that header,
so the generator follows the ABI as it grows: the first STAT_FIXED counters
before the user counters, the ones added since after the fixed part).

    report_gen.py gpu-idle OUT [--side SIDE]   VFS + GPU scenario (below); with
                                               --side, the GPU records are the
                                               records of a cupti_synth side file
                                               (pid rewritten), else packed here
    report_gen.py gpu-spec                     the cupti_synth spec of that scenario
    report_gen.py small OUT                    200 files of 64 KiB, each read once
    report_gen.py empty OUT                    a header and nothing else
    report_gen.py bench OUT EVENTS             EVENTS records: reads/writes over
                                               2000 files by 16 threads, block
                                               requests, and GPU kernels

The gpu-idle scenario (ms after the anchor; pid 100 = the GPU process with
threads 100 and 101, pid 200 = an unrelated process) and its exact answers
are in GPU_IDLE_EXPECT.
"""
import os
import re
import struct
import sys

ANCHOR_MONO = 1_000_000_000_000
ANCHOR_REAL = 1_800_000_000_000_000_000
MS = 1_000_000

REC_VFS, REC_BLOCK, REC_PATH, REC_PROC, REC_STATS, REC_DEVNAME = 1, 2, 3, 4, 5, 6
REC_GPU_INFO, REC_GPU_KERNEL, REC_GPU_MEMCPY, REC_CUDA_API = 7, 8, 9, 11
CALL = {"read": 1, "write": 2, "pread64": 3, "pwrite64": 4, "openat": 12, "close": 15,
        "fsync": 16}
PROC_EXEC, PROC_EXIT, PROC_THREAD = 2, 3, 4
DEV = (8 << 20) | 0          # fs dev of the files
DISK = (8 << 20) | 0


def stat_count():
    """GPUIO_STAT_MAX from bpf/gpuio_abi.h (the stats record grows with it)."""
    src = os.environ.get("GPUIO_SRC", os.path.join(os.path.dirname(__file__), ".."))
    text = open(os.path.join(src, "bpf", "gpuio_abi.h")).read()
    body = re.search(r"enum gpuio_stat \{(.*?)GPUIO_STAT_MAX", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return len([x for x in body.split(",") if x.strip()])


STAT_FIXED = 13     # GPUIO_STATS_BPF_FIXED: counters before user[] in a stats record


def pad8(b):
    return b + b"\0" * (-len(b) % 8)


def hdr(typ, size, pid, tid, ts):
    return struct.pack("<HHIIIQ", typ, size, pid, tid, 0, ts)


class Capture:
    def __init__(self, path, target=b"synthetic"):
        self.f = open(path, "wb")
        self.n = 0
        h = struct.pack("<8sIIQQIIII", b"GPUIOCAP", 1, 2024, ANCHOR_REAL, ANCHOR_MONO, 1, 0, 1, 2)
        h += b"gen".ljust(64, b"\0") + b"synthetic".ljust(128, b"\0") + b"\0" * 40
        for mode in (b"sys:tp_btf", b"tp_btf", b"tp_btf", b"tp_btf", b"tp_btf"):
            h += mode.ljust(16, b"\0")
        h += b"\0" * 512 + target.ljust(128, b"\0")[:128] + b"report_gen".ljust(1024, b"\0")
        assert len(h) == 2024
        self.f.write(h)
        self.vfs_s = struct.Struct("<HHIIIQQqQqqQQIIiiIIIHBB")
        self.blk_s = struct.Struct("<HHIIIQQQQQIIIIiBBBB")
        self.nstat = stat_count()

    def raw(self, b):
        self.f.write(b)
        self.n += 1

    def vfs(self, pid, tid, call, ts, dur, ret, requested=0, offset=-1, ino=0, fd=3,
            miss=0, flags=0, seq=0):
        self.raw(self.vfs_s.pack(REC_VFS, 112, pid, tid, 0, ts, dur, ret, requested, offset, -1,
                                 ino, 0, DEV if ino else 0, 0, fd, -1, seq, miss, flags,
                                 CALL[call], 8, 0))

    def block(self, pid, tid, ts, issue, complete, nbytes, op=0, ino=0, attr=0):
        self.raw(self.blk_s.pack(REC_BLOCK, 80, pid, tid, 0, ts, issue, complete, 0, ino, nbytes,
                                 DISK, DEV, 0, 0, op, 0, attr, 0))

    def path(self, ino, path):
        data = path.encode()
        body = struct.pack("<QIHH", ino, DEV, len(data), 0) + data
        rec = pad8(hdr(REC_PATH, 0, 0, 0, ANCHOR_MONO) + body)
        self.raw(struct.pack("<HH", REC_PATH, len(rec)) + rec[4:])

    def proc(self, kind, pid, tid, ts, comm, args=b""):
        body = struct.pack("<IIiI", kind, 0, 0, len(args)) + comm.ljust(16, b"\0")[:16] + args
        rec = pad8(hdr(REC_PROC, 0, pid, tid, ts) + body)
        self.raw(struct.pack("<HH", REC_PROC, len(rec)) + rec[4:])

    def devname(self, dev, name):
        self.raw(hdr(REC_DEVNAME, 64, 0, 0, ANCHOR_MONO) + struct.pack("<II", dev, 0) +
                 name.ljust(32, b"\0"))

    def stats(self, final=1):
        # the first 13 BPF counters, user[2], records, final; then the BPF
        # counters added since (GPUIO_STATS_BPF_FIXED in bpf/gpuio_abi.h)
        fixed = min(self.nstat, 13)
        body = struct.pack("<%dQ" % (fixed + 2), *([0] * (fixed + 2)))
        body += struct.pack("<QII", self.n, final, 0)
        body += struct.pack("<%dQ" % (self.nstat - fixed), *([0] * (self.nstat - fixed)))
        self.raw(hdr(REC_STATS, 24 + len(body), 0, 0, ANCHOR_MONO) + body)

    def kernel(self, pid, start, end, device=0, name=b"kern"):
        body = struct.pack("<QQQII3I3IIIIHH", end, 1, 7, 0, device, 1, 1, 1, 1, 1, 1, 0, 0, 0,
                           len(name), 0) + name
        rec = pad8(hdr(REC_GPU_KERNEL, 0, pid, 0, start) + body)
        self.raw(struct.pack("<HH", REC_GPU_KERNEL, len(rec)) + rec[4:])

    def memcpy(self, pid, start, end, nbytes, device=0):
        self.raw(hdr(REC_GPU_MEMCPY, 72, pid, 0, start) +
                 struct.pack("<QQQQIIIBBBB", end, nbytes, 1, 7, 0, device, device, 1, 0, 0, 0))

    def cuda_sync(self, pid, tid, start, end, name=b"cudaDeviceSynchronize"):
        self.raw(hdr(REC_CUDA_API, 128, pid, tid, start) +
                 struct.pack("<QqQQQIIBBB5x", end, 0, 0, 0, 0, 0, 165, 1, 4, 0) +
                 name.ljust(48, b"\0"))

    def side(self, side_path, pid):
        """Append the records of a collector side file, as its writer's pid."""
        d = open(side_path, "rb").read()
        if d[:8] != b"GPUIOCAP":
            raise SystemExit(f"{side_path}: not a capture")
        o = struct.unpack_from("<I", d, 12)[0]
        while o + 24 <= len(d):
            typ, size = struct.unpack_from("<HH", d, o)
            rec = bytearray(d[o:o + size])
            struct.pack_into("<I", rec, 4, pid)
            self.raw(bytes(rec))
            o += size

    def close(self):
        self.f.close()


def at(ms):
    return ANCHOR_MONO + int(ms * MS)


# ---- the GPU idle scenario ----
# GPU 0 of pid 100: kernels (and one copy overlapping K3) -> busy 60 ms of a
# 150 ms span, gaps G1 [20,30] G2 [40,60] G3 [72,100] G4 [110,112] G5 [120,150].
GPU_ACTIVITY = [("kernel", 10, 20), ("kernel", 30, 40), ("kernel", 60, 70), ("memcpy", 65, 72),
                ("kernel", 100, 110), ("kernel", 112, 120), ("kernel", 150, 160)]
FILES = {11: "/data/train/shard-A.bin", 12: "/data/train/shard-B.bin",
         13: "/data/train/shard-C.bin", 14: "/ckpt/model.pt", 15: "/data/other.bin"}
GPU_IDLE_EXPECT = {
    "busy_ms": 60, "span_ms": 150, "idle_ms": 90, "gaps": 5,
    # reads win over writes, writes over CUDA sync; the rest is "other"
    "cause_ms": {"file_read": 23, "write_fsync": 21, "other_file_io": 0, "cuda_sync": 25,
                 "other": 21},
    "file_read_ms": {"/data/train/shard-A.bin": 18, "/data/train/shard-B.bin": 8,
                     "/data/train/shard-C.bin": 2, "/data/other.bin": 0},
    "largest_gaps": [(120, 30), (72, 28), (40, 20), (20, 10), (110, 2)],
    "gap_files": {40: {"/data/train/shard-A.bin": 10, "/data/train/shard-B.bin": 8}},
    "checkpoint": {"path": "/ckpt/model.pt", "start_ms": 72, "dur_ms": 23,
                   "bytes": 2 << 20, "gpu_idle_ms": 23},
    "recommendations": {"loader", "async_checkpoint"},
}


def gpu_spec():
    """cupti_synth spec of the GPU side (CUPTI clock = MONOTONIC)."""
    lines = [f"now {at(0)}"]
    for i, (kind, s, e) in enumerate(GPU_ACTIVITY):
        if kind == "kernel":
            lines.append(f"kernel {at(s)} {at(e)} 0 7 {i + 1} step_kernel_{i}")
        else:
            lines.append(f"memcpy {at(s)} {at(e)} 0 7 {i + 1} 1048576 htod")
    # cudaDeviceSynchronize (runtime cbid 165) on thread 100 during G5
    lines.append(f"api runtime {at(125)} {at(150)} 100 99 165")
    return "\n".join(lines) + "\n"


def gen_gpu_idle(out, side=None):
    c = Capture(out, b"launch train.py")
    c.proc(PROC_EXEC, 100, 100, at(0), b"python3", b"python3\0train.py")
    c.proc(PROC_THREAD, 100, 101, at(0.5), b"loader")
    c.proc(PROC_EXEC, 200, 200, at(0), b"backup", b"backup")
    for ino, p in FILES.items():
        c.path(ino, p)
    c.devname(DISK, b"sda")
    for ino in (11, 12, 13):
        c.vfs(100, 100, "openat", at(1), 10_000, 3 + ino, ino=ino, fd=-100)
    # before the first kernel: not in a gap
    c.vfs(100, 100, "read", at(2), 5 * MS, 1 << 20, 1 << 20, 0, ino=11, fd=14, miss=256)
    # G1: a read across the gap's start: 8 ms of it inside
    c.vfs(100, 100, "read", at(18), 10 * MS, 1 << 20, 1 << 20, 1 << 20, ino=11, fd=14, miss=256)
    # G2: two threads read at once: union 13 ms (B 8, A 10)
    c.vfs(100, 101, "read", at(42), 8 * MS, 1 << 20, 1 << 20, 0, ino=12, fd=15, miss=256)
    c.vfs(100, 100, "read", at(45), 10 * MS, 1 << 20, 1 << 20, 2 << 20, ino=11, fd=14, miss=256)
    # G3: checkpoint: 2 x 1 MiB writes then fsync (23 ms), a read in the middle wins 2 ms
    c.vfs(100, 100, "openat", at(71.5), 10_000, 17, ino=14, fd=-100, flags=0o1101)
    c.vfs(100, 100, "write", at(72), 4 * MS, 1 << 20, 1 << 20, 0, ino=14, fd=17)
    c.vfs(100, 100, "write", at(76), 4 * MS, 1 << 20, 1 << 20, 1 << 20, ino=14, fd=17)
    c.vfs(100, 101, "read", at(90), 2 * MS, 65536, 65536, 0, ino=13, fd=16, miss=16)
    c.vfs(100, 100, "fsync", at(80), 15 * MS, 0, ino=14, fd=17)
    c.block(100, 100, at(80.5), at(80.6), at(94), 2 << 20, op=1, ino=14)
    # G5: another process reads (not ours), our thread 100 waits in CUDA sync
    c.vfs(200, 200, "read", at(120), 30 * MS, 1 << 20, 1 << 20, 0, ino=15, fd=3, miss=256)
    # during K6: busy GPU, not a gap
    c.vfs(100, 101, "read", at(151), 5 * MS, 1 << 20, 1 << 20, 1 << 20, ino=12, fd=15)
    if side:
        c.side(side, 100)
    else:
        for kind, s, e in GPU_ACTIVITY:
            if kind == "kernel":
                c.kernel(100, at(s), at(e))
            else:
                c.memcpy(100, at(s), at(e), 1 << 20)
        c.cuda_sync(100, 100, at(125), at(150))
    c.proc(PROC_EXIT, 100, 100, at(165), b"python3")
    c.proc(PROC_EXIT, 200, 200, at(165), b"backup")
    c.stats()
    c.close()


def gen_small(out):
    c = Capture(out, b"launch loader")
    c.proc(PROC_EXEC, 300, 300, at(0), b"loader", b"loader")
    for i in range(200):
        ino = 1000 + i
        c.path(ino, f"/data/small/img{i:05d}.jpg")
        t = at(1 + i * 0.1)
        c.vfs(300, 300, "openat", t, 5000, 5, ino=ino, fd=-100)
        c.vfs(300, 300, "read", t + 10_000, 20_000, 65536, 65536, 0, ino=ino, fd=5, miss=16)
        c.vfs(300, 300, "read", t + 40_000, 1000, 0, 65536, 65536, ino=ino, fd=5)
        c.vfs(300, 300, "close", t + 50_000, 1000, 0, ino=ino, fd=5)
    c.proc(PROC_EXIT, 300, 300, at(30), b"loader")
    c.stats()
    c.close()


def gen_bench(out, events):
    """events records, streamed: 80% VFS calls, 10% block, 10% GPU kernels."""
    c = Capture(out, b"bench")
    nfiles, nthreads = 2000, 16
    c.proc(PROC_EXEC, 100, 100, at(0), b"python3", b"python3\0train.py")
    for t in range(1, nthreads):
        c.proc(PROC_THREAD, 100, 100 + t, at(0), b"worker")
    for i in range(nfiles):
        c.path(10 + i, f"/data/bench/shard-{i:05d}.bin")
    c.devname(DISK, b"sda")
    vfs_pack = c.vfs_s.pack
    blk_pack = c.blk_s.pack
    buf = bytearray()
    step = 1000  # ns between events: 10M events = 10 s
    x = 12345
    n = c.n
    kern_t = at(0)
    for i in range(events - n - 1):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        ts = ANCHOR_MONO + i * step
        k = i % 10
        if k < 8:
            tid = 100 + (x >> 20) % nthreads
            ino = 10 + (x >> 33) % nfiles
            off = ((x >> 40) % 4096) * 4096
            call = 3 if k < 7 else 4
            buf += vfs_pack(REC_VFS, 112, 100, tid, 0, ts, 800 + (x & 1023), 4096, 4096, off, -1,
                            ino, 0, DEV, 0, 5, -1, 0, (x >> 12) & 1, 0, call, 8, 0)
        elif k == 8:
            buf += blk_pack(REC_BLOCK, 80, 100, 100, 0, ts, ts + 2000, ts + 50_000 + (x & 0xffff),
                            (x >> 20) & 0xffff, 10 + (x >> 33) % nfiles, 4096, DISK, DEV, 0, 0,
                            (x >> 7) & 1, 0, 0, 0)
        else:
            # a kernel every 10 events, with a gap now and then
            kern_t = max(kern_t, ts)
            length = 5000 + (x & 0x3fff)
            buf += struct.pack("<HHIIIQQQQII3I3IIIIHH", REC_GPU_KERNEL, 104, 100, 0, 0, kern_t,
                               kern_t + length, 1, 7, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 8, 0)
            buf += b"kernel_x"
            kern_t += length + (20_000 if (x >> 50) & 7 == 0 else 0)
        if len(buf) > (1 << 20):
            c.f.write(buf)
            buf.clear()
    c.f.write(buf)
    c.n = events - 1
    c.stats()
    c.close()


def main(argv):
    if len(argv) >= 3 and argv[1] == "gpu-idle":
        side = None
        if len(argv) == 5 and argv[3] == "--side":
            side = argv[4]
        gen_gpu_idle(argv[2], side)
    elif len(argv) == 2 and argv[1] == "gpu-spec":
        sys.stdout.write(gpu_spec())
    elif len(argv) == 3 and argv[1] == "small":
        gen_small(argv[2])
    elif len(argv) == 3 and argv[1] == "empty":
        Capture(argv[2]).close()
    elif len(argv) == 4 and argv[1] == "bench":
        gen_bench(argv[2], int(argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
