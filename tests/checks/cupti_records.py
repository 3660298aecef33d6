"""GPU collector side files and captures, decoded by tests/gpu_records.py
(an independent reader of bpf/gpuio_abi.h), against what made them: the
activity spec cupti_synth put through the real collector (t_cupti_convert),
the collector's unit cases (t_cupti_unit), the driverless collector
(t_cupti_inject), gpuio trace's GPU path and hostile side files
(t_gpu_trace)."""
import os
import re
import struct
import sys
import time

import gpu_records as g


def synth_main(path, long_name):
    """t_cupti_convert: every record of the main side file (cupti_synth of the
    spec) field by field: names demangled, noise absent, drops carried, NVTX
    nesting, a name cut at 1024 bytes, FINAL at the end; LONG_NAME is the spec's
    long kernel name"""
    hdr, recs = g.read(path)
    long_name = long_name
    pid = hdr["tracer_pid"]
    assert hdr["version"] == 1 and hdr["abi_version"] == 1, hdr
    ns = os.stat("/proc/self/ns/pid").st_ino   # same namespace as the collector
    assert hdr["header_size"] == 2088 and hdr["target"] == "cupti pid %d pidns %d" % (pid, ns), hdr
    assert hdr["monotonic_ns"] > 0 and hdr["realtime_ns"] > hdr["monotonic_ns"], hdr

    def info(state, dropped, records):
        return dict(type_name="gpu_info", tid=pid, state=state, clock=g.CLOCK_MONOTONIC_CB,
                    offset_ns=0, uncertainty_ns=0, cupti_dropped=dropped, records=records,
                    write_errors=0, how=g.HOW_LAUNCH, cupti_version=130001, cupti_error=0)

    def kern(ts, end, dev, stream, corr, name, ctx=0, grid=[0,0,0], block=[0,0,0], regs=0,
             ssmem=0, dsmem=0, flags=0):
        return dict(type_name="gpu_kernel", tid=0, ts=ts, end_ns=end, device=dev, stream=stream,
                    correlation=corr, context=ctx, grid=grid, block=block, registers=regs,
                    static_smem=ssmem, dynamic_smem=dsmem, name=name, name_len=len(name.encode()),
                    flags=flags)

    def cpy(ts, end, dev, dst, stream, corr, nbytes, kind, flags=0, ctx=0, src=0, dstk=0):
        return dict(type_name="gpu_memcpy", tid=0, ts=ts, end_ns=end, device=dev, dst_device=dst,
                    stream=stream, correlation=corr, bytes=nbytes, kind=kind, flags=flags,
                    context=ctx, src_kind=src, dst_kind=dstk)

    def api(src, ts, end, tid, corr, cbid, name, kind, mk=0, ret=0):
        return dict(type_name="cuda_api", tid=tid, ts=ts, end_ns=end, correlation=corr, cbid=cbid,
                    source=src, name=name, kind=g.API_KINDS[kind], memcpy_kind=mk, ret=ret,
                    bytes=0, stream=0, func=0)

    def nvtx(ts, end, tid, depth, name):
        return dict(type_name="nvtx", tid=tid, ts=ts, end_ns=end, depth=depth, name=name,
                    name_len=len(name))

    R, D = g.API_RUNTIME, g.API_DRIVER
    want = [
        info(g.GPU_ON, 0, 0),
        kern(1000, 2000, 0, 7, 11, "void matmul<float>(float const*, float const*, float*, int)",
             ctx=3, grid=[4, 2, 1], block=[128, 1, 1], regs=32, ssmem=1024, dsmem=2048),
        kern(2100, 2500, 1, 8, 12, "plain_c_kernel"),
        cpy(2600, 3100, 0, 0, 7, 13, 4096, 1, flags=g.GM_ASYNC, ctx=3, src=1, dstk=2),
        cpy(3200, 3300, 0, 0, 7, 14, 8192, 2),
        cpy(3400, 3900, 0, 1, 9, 15, 65536, 10, flags=g.GM_ASYNC | g.GM_PEER, ctx=3),
        dict(type_name="gpu_memset", tid=0, ts=4000, end_ns=4100, device=0, stream=7,
             correlation=16, bytes=1024, value=255, mem_kind=2, flags=g.GM_ASYNC, context=0),
        api(R, 900, 1100, 4242, 11, 211, "cudaLaunchKernel", "launch"),
        api(R, 2550, 2700, 4242, 13, 41, "cudaMemcpyAsync", "memcpy"),
        api(D, 970, 980, 4243, 0, 307, "cuLaunchKernel", "launch", ret=3),
        api(D, 3150, 3350, 4243, 14, 278, "cuMemcpyDtoH_v2", "memcpy", mk=2),
        api(D, 3400, 3450, 4243, 20, 243, "cuMemAlloc_v2", "malloc"),
        info(g.GPU_ON, 0, 12),
        dict(type_name="gpu_sync", tid=0, ts=5000, end_ns=6000, stream=7, correlation=17,
             context=3, sync_type=3),
        dict(type_name="gpu_sync", tid=0, ts=6100, end_ns=6200, stream=0, correlation=18,
             context=0, sync_type=1),
        dict(type_name="gpu_overhead", tid=4242, ts=6300, end_ns=6400, kind=1, object_kind=2,
             object_id=4242),
        nvtx(600, 900, 4242, 1, "load batch"),
        nvtx(6500, 6500, 4243, 0, "checkpoint"),
        nvtx(500, 7000, 4242, 0, "epoch 1"),
        kern(7100, 7200, 0, 7, 19, long_name[:1024], flags=g.GK_NAME_TRUNCATED),
        info(g.GPU_ON, 5, 20),
        cpy(0, 7300, 0, 0, 7, 21, 16, 8),
        info(g.GPU_ON, 7, 22),
        info(g.GPU_FINAL, 7, 23),
    ]
    assert len(recs) == len(want), "%d records, want %d: %s" % (
        len(recs), len(want), [r["type_name"] for r in recs])
    for i, (r, w) in enumerate(zip(recs, want)):
        assert r["pid"] == pid and r["cpu"] == 0, (i, r)
        assert r["size"] % 8 == 0, (i, r)
        for k, v in w.items():
            assert r[k] == v, "record %d (%s) %s = %r, want %r" % (i, w["type_name"], k, r[k], v)
        if "name_pad" in r:
            # variable records: offsetof(name) + name_len rounded up to 8, zero padded
            fixed = 96 if r["type_name"] == "gpu_kernel" else 40
            assert r["size"] == (fixed + r["name_len"] + 7) // 8 * 8, (i, r["size"])
            assert set(r["name_pad"]) <= {0}, (i, r["name_pad"])
    # the first ON record names the libcupti the collector loaded (the real CUDA 13 one here)
    infos = [r["reason"] for r in recs if r["type_name"] == "gpu_info"]
    assert infos[0].startswith("libcupti ") and "libcupti.so.13" in infos[0], infos[0]
    assert infos[1:] == [""] * (len(infos) - 1), infos
    # the info records' ts come from the (fake) MONOTONIC clock set by "now"
    assert all(r["ts"] > 5000000000 for r in recs if r["type_name"] == "gpu_info")
    assert not any(r.get("name") in ("cudaGetLastError", "cudaGetDevice", "cudaGetDeviceCount",
                                     "cuCtxGetCurrent", "cuStreamQuery", "cuStreamQuery_ptsz")
                   for r in recs)


def synth_layout(want_path, got_path, v):
    """t_cupti_convert: the same activity handed over in CUDA 12 libcupti's record
    structs (API version V) decodes to the same records as the main file"""
    _, want = g.read(want_path)
    _, got = g.read(got_path)
    v = int(v)
    assert len(got) == len(want), (len(got), len(want))
    n = 0
    for i, (r, w) in enumerate(zip(got, want)):
        assert r["type_name"] == w["type_name"], (i, r["type_name"], w["type_name"])
        if r["type_name"] == "gpu_info":
            assert r["cupti_version"] == v and r["state"] == w["state"], (i, r)
            continue
        for k in w:
            if k not in ("pid", "hdr_pid"):
                assert r[k] == w[k], "API %d record %d (%s) %s = %r, want %r" % (
                    v, i, w["type_name"], k, r[k], w[k])
        n += 1
    assert n == 19, n


def synth_refused(path):
    """t_cupti_convert: a libcupti of CUDA 11.8 (API 18) is refused plainly, before
    any record"""
    _, recs = g.read(path)
    assert len(recs) == 1 and recs[0]["state"] == g.GPU_UNAVAILABLE, recs
    assert recs[0]["reason"] == "CUPTI unavailable: libcupti of CUDA 11.8 (API 18): gpuio decodes 12.0-13.x", recs[0]


def synth_offset(path):
    """t_cupti_convert: CUPTI on another clock: timestamps moved exactly by the
    offset"""
    _, recs = g.read(path)
    infos = [r for r in recs if r["type_name"] == "gpu_info"]
    assert all(i["clock"] == g.CLOCK_OFFSET and i["offset_ns"] == -1700000000000000000 and
               i["uncertainty_ns"] == 5 for i in infos), infos
    k = [r for r in recs if r["type_name"] == "gpu_kernel"]
    a = [r for r in recs if r["type_name"] == "cuda_api"]
    assert len(k) == 1 and (k[0]["ts"], k[0]["end_ns"], k[0]["name"]) == (1000, 2000, "k()"), k
    assert len(a) == 1 and (a[0]["ts"], a[0]["end_ns"], a[0]["tid"]) == (900, 1100, 77), a
    assert infos[-1]["state"] == g.GPU_FINAL


def synth_unavailable(path, err, reason):
    """t_cupti_convert: CUPTI held or failing: one UNAVAILABLE record with its
    error ERR and REASON"""
    _, recs = g.read(path)
    assert len(recs) == 1, recs
    r = recs[0]
    assert r["type_name"] == "gpu_info" and r["state"] == g.GPU_UNAVAILABLE, r
    assert r["cupti_error"] == int(err) and r["reason"] == reason, r
    assert r["clock"] == g.CLOCK_NONE and r["records"] == 0, r


def unit_short(path):
    """t_cupti_unit: a side file on a full filesystem keeps whole records only"""
    _, recs = g.read(path)
    assert [r["correlation"] for r in recs] == [0, 1, 2, 3, 4, 5, 6, 28, 29], recs


def unit_fork(d, parent, child):
    """t_cupti_unit: after fork the parent's file is whole and ends with FINAL; the
    child with GPU activity has its own"""
    parent, child = int(parent), int(child)

    def summary(pid):
        hdr, recs = g.read("%s/cupti.%d.gpuio" % (d, pid))
        assert hdr["tracer_pid"] == pid and all(r["pid"] == pid for r in recs), (pid, recs)
        return [(r["type_name"], r.get("correlation"), r.get("state")) for r in recs]

    p = summary(parent)
    assert [c for t, c, _ in p if t == "gpu_kernel"] == [1, 2], p     # each once, in order
    assert p[-1] == ("gpu_info", None, g.GPU_FINAL), p
    c = summary(child)
    assert [x for x in c if x[0] == "gpu_kernel"] == [("gpu_kernel", 3, None)], c
    assert c[0] == ("gpu_info", None, g.GPU_ON) and c[-1] == ("gpu_info", None, g.GPU_FINAL), c


def unit_second_session(path):
    """t_cupti_unit: the side file of a later attach holds only the new session's
    records"""
    _, recs = g.read(path)
    s = [(r["type_name"], r.get("correlation"), r.get("state"), r.get("how")) for r in recs]
    assert s == [("gpu_info", None, g.GPU_ON, g.HOW_ATTACH), ("gpu_kernel", 3, None, None),
                 ("gpu_info", None, g.GPU_ON, g.HOW_ATTACH),
                 ("gpu_info", None, g.GPU_FINAL, g.HOW_ATTACH)], s


def one_unavailable(path, how):
    """t_cupti_inject: the side file holds exactly one UNAVAILABLE record, by HOW
    (1 launch, 2 attach), saying why; prints the reason"""
    how = int(how)
    hdr, recs = g.read(path)
    pid = hdr["tracer_pid"]
    assert os.path.basename(path) in ("cupti.%d.gpuio" % pid, "cupti.%d.1.gpuio" % pid), path
    assert hdr["target"] == "cupti pid %d pidns %d" % (pid, os.stat("/proc/self/ns/pid").st_ino), hdr
    assert len(recs) == 1, [r["type_name"] for r in recs]
    r = recs[0]
    assert r["type_name"] == "gpu_info" and r["state"] == g.GPU_UNAVAILABLE and r["how"] == how, r
    assert r["pid"] == pid and r["cupti_error"] != 0 and r["clock"] == g.CLOCK_NONE, r
    assert re.match(r"CUPTI unavailable: \w+: CUPTI_ERROR_[A-Z_]+", r["reason"]), r["reason"]
    print(r["reason"])


def info_records(path):
    """t_gpu_trace: "state how pid reason" of each gpu_info record"""
    h, recs = g.read(path)
    for r in recs:
        if r["type_name"] == "gpu_info":
            print(r["state"], r["how"], r["pid"], r["reason"])


def api_names(path):
    """t_gpu_trace: the name of each CUDA API record, one a line"""
    h, recs = g.read(path)
    for r in recs:
        if r["type_name"] == "cuda_api":
            print(r["name"])


# t_gpu_trace E: what any local user can drop in the world-writable side-file dir
def _header(pid):
    h = bytearray(2048)
    h[0:8] = b"GPUIOCAP"
    struct.pack_into("<IIQQI", h, 8, 1, 2048, 0, 0, pid)
    return bytes(h)


def _info(pid, reason):   # gpuio_gpu_info, UNAVAILABLE
    r = struct.pack("<HHIIIQ", 7, 216, pid, pid, 0, 1) + bytes(40)
    r += struct.pack("<IIIIiI", 2, 0, 1, 0, 0, 0) + reason.ljust(128, b"\0")
    assert len(r) == 216
    return r


def _vfs(pid):            # gpuio_vfs_event: not a GPU type, must be dropped
    return struct.pack("<HHIIIQ", 1, 112, pid, pid, 0, 1) + bytes(88)


def plant(d, victim):
    """t_gpu_trace E: plant hostile side files in D: a FIFO, a symlink, a forged
    VFS record and a huge size field, a hard link, another user's file naming
    the live root process VICTIM, 1200 empty names, and a writer that never
    stops (this process: the test kills it)"""
    os.mkfifo(os.path.join(d, "cupti.90001.gpuio"))
    os.symlink("/etc/passwd", os.path.join(d, "cupti.90002.gpuio"))
    with open(os.path.join(d, "cupti.90003.gpuio"), "wb") as f:
        f.write(_header(90003) + _vfs(1) + _info(1, b"FORGED-OK") +
                struct.pack("<HHIIIQ", 7, 0xfff8, 1, 1, 0, 1) + _info(1, b"AFTER-HUGE"))
    with open(os.path.join(d, "other"), "wb") as f:
        f.write(_header(90004) + _info(1, b"HARDLINK"))
    os.link(os.path.join(d, "other"), os.path.join(d, "cupti.90004.gpuio"))
    # another user's file claiming a live root process (the test's own shell)
    p = os.path.join(d, "cupti.90006.gpuio")
    with open(p, "wb") as f:
        f.write(_header(int(victim)) + _info(1, b"NOT-YOURS"))
    os.chown(p, 65534, 65534)
    for i in range(1200):    # more names than a 1024-fd limit
        open(os.path.join(d, "cupti.%d.gpuio" % (100000 + i)), "wb").close()
    # a writer that never stops, not even after the trace (the test kills it)
    with open(os.path.join(d, "cupti.90005.gpuio"), "wb", buffering=0) as f:
        f.write(_header(90005))
        rec = _info(1, b"FLOOD") * 64
        while True:
            f.write(rec)
            time.sleep(0.002)


def hostile_capture(path, tpid):
    """t_gpu_trace E: of the planted files only GPU records of the regular
    one-link files of their owner's processes got in (pid forced to the
    header's), and the real collector's record (pid TPID) is there"""
    h, recs = g.read(path)
    tpid = int(tpid)
    reasons = [(r["pid"], r["reason"]) for r in recs if r["type_name"] == "gpu_info"]
    assert (90003, "FORGED-OK") in reasons, reasons[:5]
    bad = [x for x in reasons if x[1] in ("AFTER-HUGE", "HARDLINK", "NOT-YOURS")]
    assert not bad, bad
    assert all(p == 90005 for p, x in reasons if x == "FLOOD")
    assert not [r for r in recs if r["pid"] in (1, 90003) and r["type"] < 7], "forged non-GPU record"
    assert any(p == tpid and x.startswith("CUPTI unavailable") for p, x in reasons), \
        "the real collector's record is missing"
