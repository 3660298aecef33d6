#!/usr/bin/env python3
"""tests/gpu_records.py — decode gpuio GPU records (bpf/gpuio_abi.h types 7..15)
and the capture header (user/capture/capture.h), independently of the C readers.

    python3 tests/gpu_records.py FILE            one JSON object per record
    python3 tests/gpu_records.py --layout        "struct.field offset" lines,
                                                 compared with cupti_abi's

As a module: read(path) -> (header dict, [record dict]); every record dict
has "type" (name), the gpuio_hdr fields and the type's own fields; strings
are decoded (reason NUL-terminated; names by their length field).
"""
import json
import struct
import sys

HDR = [("type", "H"), ("size", "H"), ("pid", "I"), ("tid", "I"), ("cpu", "I"), ("ts", "Q")]

CAP_HEADER = [
    ("magic", "8s"), ("version", "I"), ("header_size", "I"), ("realtime_ns", "Q"),
    ("monotonic_ns", "Q"), ("tracer_pid", "I"), ("flags", "I"), ("abi_version", "I"),
    ("ncpus", "I"), ("hostname", "64s"), ("kernel", "128s"), ("boot_id", "40s"),
    ("vfs_mode", "16s"), ("block_mode", "16s"), ("proc_mode", "16s"),
    ("pagecache_mode", "16s"), ("iouring_mode", "16s"), ("modes_detail", "512s"),
    ("target", "128s"), ("cmdline", "1024s"), ("sched_mode", "16s"),
    ("fault_mode", "16s"), ("stack_mode", "16s"), ("sample_mode", "16s"),
]

# type -> (name, struct name, fields after gpuio_hdr, variable tail or None)
# A tail is (field, length field, max): name bytes after the fixed part.
TYPES = {
    7: ("gpu_info", "gpuio_gpu_info", [
        ("offset_ns", "q"), ("uncertainty_ns", "Q"), ("cupti_dropped", "Q"), ("records", "Q"),
        ("write_errors", "Q"), ("state", "I"), ("clock", "I"), ("how", "I"),
        ("cupti_version", "I"), ("cupti_error", "i"), ("pad", "I"), ("reason", "128s")], None),
    8: ("gpu_kernel", "gpuio_gpu_kernel", [
        ("end_ns", "Q"), ("context", "Q"), ("stream", "Q"), ("correlation", "I"), ("device", "I"),
        ("grid", "3I"), ("block", "3I"), ("static_smem", "I"), ("dynamic_smem", "I"),
        ("registers", "I"), ("name_len", "H"), ("flags", "H")], ("name", "name_len", 1024)),
    9: ("gpu_memcpy", "gpuio_gpu_memcpy", [
        ("end_ns", "Q"), ("bytes", "Q"), ("context", "Q"), ("stream", "Q"), ("correlation", "I"),
        ("device", "I"), ("dst_device", "I"), ("kind", "B"), ("src_kind", "B"),
        ("dst_kind", "B"), ("flags", "B")], None),
    10: ("gpu_memset", "gpuio_gpu_memset", [
        ("end_ns", "Q"), ("bytes", "Q"), ("context", "Q"), ("stream", "Q"), ("correlation", "I"),
        ("device", "I"), ("value", "I"), ("mem_kind", "B"), ("flags", "B"), ("pad", "H")], None),
    11: ("cuda_api", "gpuio_cuda_api", [
        ("end_ns", "Q"), ("ret", "q"), ("bytes", "Q"), ("stream", "Q"), ("func", "Q"),
        ("correlation", "I"), ("cbid", "I"), ("source", "B"), ("kind", "B"),
        ("memcpy_kind", "B"), ("pad", "5s"), ("name", "48s")], None),
    12: ("gpu_sync", "gpuio_gpu_sync", [
        ("end_ns", "Q"), ("context", "Q"), ("stream", "Q"), ("correlation", "I"),
        ("sync_type", "I")], None),
    13: ("nvtx", "gpuio_nvtx_range", [
        ("end_ns", "Q"), ("depth", "I"), ("name_len", "H"), ("pad", "H")],
        ("name", "name_len", 256)),
    14: ("gpu_overhead", "gpuio_gpu_overhead", [
        ("end_ns", "Q"), ("kind", "I"), ("object_kind", "I"), ("object_id", "Q")], None),
    15: ("gpu_sym", "gpuio_gpu_sym", [
        ("addr", "Q"), ("name_len", "H"), ("pad", "6s")], ("name", "name_len", 1024)),
}

# enums of bpf/gpuio_abi.h
GPU_ON, GPU_UNAVAILABLE, GPU_FINAL = 1, 2, 3
CLOCK_NONE, CLOCK_MONOTONIC_CB, CLOCK_OFFSET = 0, 1, 2
HOW_LAUNCH, HOW_ATTACH = 1, 2
API_RUNTIME, API_DRIVER = 1, 2
API_KINDS = {"other": 0, "launch": 1, "memcpy": 2, "memset": 3, "sync": 4,
             "graph_launch": 5, "malloc": 6, "free": 7}
GM_ASYNC, GM_PEER = 1, 2
GK_NAME_TRUNCATED = 1
# Python field names that differ from the C ones (hdr.type would clash).
C_NAMES = {"sync_type": "type"}


def fmt_of(fields):
    return "<" + "".join(f for _, f in fields)


def layout(fields, base=0):
    """[(name, offset)] of fields packed as the C structs are (no implicit padding)."""
    out, off = [], base
    for name, f in fields:
        out.append((name, off))
        off += struct.calcsize("<" + f)
    return out, off


def _cstr(b):
    return b.split(b"\0", 1)[0].decode("utf-8", "replace")


def _unpack(fields, data, off):
    vals = struct.unpack_from(fmt_of(fields), data, off)
    d, i = {}, 0
    for name, f in fields:
        n = 3 if f == "3I" else 1
        d[name] = list(vals[i:i + n]) if n > 1 else vals[i]
        i += n
    return d


def decode(data, off):
    """Decode the record at off; returns its dict (size from its header)."""
    rec = _unpack(HDR, data, off)
    t = TYPES.get(rec["type"])
    if not t:
        rec["type_name"] = "unknown"
        return rec
    name, _, fields, tail = t
    rec["type_name"] = name
    hdr_size = struct.calcsize(fmt_of(HDR))
    body = _unpack(fields, data, off + hdr_size)
    rec.update(body)
    for k in ("reason", "name"):
        if k in rec and isinstance(rec[k], bytes):
            rec[k] = _cstr(rec[k])
    if tail:
        field, lenf, _ = tail
        start = off + hdr_size + struct.calcsize(fmt_of(fields))
        raw = data[start:start + rec[lenf]]
        rec[field] = raw.decode("utf-8", "replace")
        rec[field + "_pad"] = data[start + rec[lenf]:off + rec["size"]]
    rec.pop("pad", None)
    return rec


def _varint(data, pos, end):
    v = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("bad varint at offset %d" % pos)
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def _zz(v):
    return (v >> 1) ^ -(v & 1)


VFS_FMT = "<HHIIIQQqQqqQQIIiiIIIHBB"    # struct gpuio_vfs_event (112 bytes)


def _head(data, off, end, prev_ts):
    """A VFS or SCHED body's start: presence bits, ts (delta from prev_ts),
    thread id, cpu; and the position after them."""
    P, p = data[off], off + 1
    d, p = _varint(data, p, end)
    t, p = _varint(data, p, end)
    cpu, p = _varint(data, p, end)
    return P, (prev_ts + _zz(d)) & 0xFFFFFFFFFFFFFFFF, t, cpu, p


def v2_records(data, off, path="capture"):
    """Version 2 (user/capture/compact.c), decoded independently of the C
    reader: yields (offset, record bytes as in bpf/gpuio_abi.h); offset is
    where the verbatim bytes of a RAW frame start, else the frame's."""
    thr, files, tstate, fstate, prev_ts = {}, {}, {}, {}, 0
    m64 = (1 << 64) - 1
    while off < len(data):
        start = off
        n, off = _varint(data, off, min(len(data), off + 3))
        if off + 1 + n > len(data):
            raise ValueError("%s: %d bytes of a cut frame at the end" % (path, len(data) - start))
        kind, off, end = data[off], off + 1, off + 1 + n
        if kind == 1:   # RAW
            yield off, data[off:end]
            prev_ts = struct.unpack_from("<Q", data, off + 16)[0]
        elif kind == 2:     # THREAD: id, pid, tid
            i, p = _varint(data, off, end)
            pid, p = _varint(data, p, end)
            tid, p = _varint(data, p, end)
            thr[i], tstate[i] = (pid, tid), [0, None, bytes(16), bytes(16)]
        elif kind == 3:     # FILE: id, pid, zz fd, dev, ino, ftype
            i, p = _varint(data, off, end)
            pid, p = _varint(data, p, end)
            fd, p = _varint(data, p, end)
            dev, p = _varint(data, p, end)
            ino, p = _varint(data, p, end)
            files[i], fstate[i] = (pid, _zz(fd), dev, ino, data[p]), -(1 << 63)
        elif kind == 4:     # VFS
            P, ts, t, cpu, p = _head(data, off, end, prev_ts)
            call, p = _varint(data, p, end)
            dur, p = _varint(data, p, end)
            ret, p = _varint(data, p, end)
            ret = _zz(ret)
            if P & 0x01:
                req = ret & m64
            else:
                req, p = _varint(data, p, end)
            if P & 0x04:
                offset = -1
            elif not P & 0x02:
                offset, p = _varint(data, p, end)
                offset = _zz(offset)
            if P & 0x08:
                fid = tstate[t][1]
            else:
                fid, p = _varint(data, p, end)
            if P & 0x02:
                offset = fstate[fid]
            if P & 0x10:
                seq = tstate[t][0]
            else:
                seq, p = _varint(data, p, end)
            cmp_, flags = 0, 0
            if P & 0x20:
                cmp_, p = _varint(data, p, end)
            if P & 0x40:
                flags, p = _varint(data, p, end)
            f2, off2 = (0, -1, 0, 0, 0), -1
            if P & 0x80:
                fid2, p = _varint(data, p, end)
                off2, p = _varint(data, p, end)
                f2, off2 = files[fid2], _zz(off2)
            f = files[fid]
            yield start, struct.pack(VFS_FMT, 1, 112, thr[t][0], thr[t][1], cpu, ts, dur, ret,
                                     req, offset, off2, f[3], f2[3], f[2], f2[2], f[1], f2[1],
                                     seq, cmp_, flags, call, f[4], f2[4])
            tstate[t][0:2] = [(seq + 1) & 0xFFFFFFFF, fid]
            if offset != -1:
                fstate[fid] = ((offset + max(ret, 0) + (1 << 63)) & m64) - (1 << 63)
            prev_ts = ts
        elif kind == 5:     # SCHED
            P, ts, t, cpu, p = _head(data, off, end, prev_ts)
            sk, p = _varint(data, p, end)
            fl, p = _varint(data, p, end)
            o = None
            if not P & 0x80:
                o, p = _varint(data, p, end)
            st = tc = ws = 0
            if P & 0x20:
                st, p = _varint(data, p, end)
            if P & 0x08:
                tc = cpu
            elif not P & 0x10:
                tc, p = _varint(data, p, end)
            if P & 0x40:
                ws, p = _varint(data, p, end)
            prio, p = _varint(data, p, end)
            if P & 0x04:
                comm = bytes(16)
            elif P & 0x01:
                comm = tstate[o][2]
            elif P & 0x02:
                comm = tstate[t][3]
            else:
                comm = data[p:p + 16]
            op, ot = thr[o] if o is not None else (0, 0)
            yield start, struct.pack("<HHIIIQIIIIIIIi16s", 16, 72, thr[t][0], thr[t][1], cpu, ts,
                                     sk, fl, op, ot, st, tc, ws, _zz(prio), comm)
            tstate[t][3] = comm
            if o is not None:
                tstate[o][2] = comm
            prev_ts = ts
        else:
            raise ValueError("%s: unknown frame kind %d at offset %d" % (path, kind, start))
        off = end


def read(path):
    data = open(path, "rb").read()
    hsz = struct.calcsize(fmt_of(CAP_HEADER))
    if len(data) < hsz:
        raise ValueError("%s: shorter than a capture header" % path)
    h = _unpack(CAP_HEADER, data, 0)
    # fields past a shorter (older) header are not in the file: empty
    for name, off in layout(CAP_HEADER)[0]:
        if off >= h["header_size"] and isinstance(h[name], bytes):
            h[name] = b""
    for k, v in h.items():
        if isinstance(v, bytes) and k != "magic":
            h[k] = _cstr(v)
    if h["magic"] != b"GPUIOCAP":
        raise ValueError("%s: bad magic" % path)
    h["magic"] = "GPUIOCAP"
    off, recs = h["header_size"], []
    if h["version"] == 2:
        for roff, raw in v2_records(data, off, path):
            r = decode(raw, 0)
            r["offset"] = roff
            recs.append(r)
        return h, recs
    while off + 24 <= len(data):
        size = struct.unpack_from("<H", data, off + 2)[0]
        if size < 24 or size % 8 or off + size > len(data):
            raise ValueError("%s: bad record at offset %d (size %d)" % (path, off, size))
        r = decode(data, off)
        r["offset"] = off
        recs.append(r)
        off += size
    if off != len(data):
        raise ValueError("%s: %d trailing bytes" % (path, len(data) - off))
    return h, recs


def layout_lines():
    lines = []
    hl, hsz = layout(CAP_HEADER)
    lines += ["gpuio_cap_header.%s %d" % (n, o) for n, o in hl]
    lines.append("gpuio_cap_header.sizeof %d" % hsz)
    base = struct.calcsize(fmt_of(HDR))
    for t, (_, cname, fields, tail) in sorted(TYPES.items()):
        fl, end = layout(fields, base)
        lines += ["%s.%s %d" % (cname, C_NAMES.get(n, n), o) for n, o in fl if n != "pad"]
        if tail:
            lines.append("%s.%s %d" % (cname, tail[0], end))
            lines.append("%s.sizeof %d" % (cname, end + tail[2]))
        else:
            lines.append("%s.sizeof %d" % (cname, end))
    return lines


def main(argv):
    if len(argv) == 2 and argv[1] == "--layout":
        print("\n".join(layout_lines()))
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    h, recs = read(argv[1])
    print(json.dumps({"header": h}))
    for r in recs:
        r = {k: (v.hex() if isinstance(v, bytes) else v) for k, v in r.items()}
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
