"""CUDA API calls seen by uprobes, decoded from the capture here (a minimal
reader of bpf/gpuio_abi.h's CUDA_API (11), GPU_SYM (15) and GPU_INFO (7)
records), against what the programs say they called (t_cuda_uprobes,
t_cuda_bystander, t_cupti_on), and the breakpoint byte a uprobe leaves in a
process (t_cuda_bystander).

capture_bytes and records walk a capture (version 2 frames unpacked by
gpu_records.v2_records); printed_calls reads the programs' CALL lines;
match pairs them; all three are unit-tested."""
import struct
import subprocess

import gpu_records
from checks.common import Checks

REC_GPU_INFO, REC_CUDA_API, REC_GPU_SYM = 7, 11, 15
REC_HDR = 24


def capture_bytes(path):
    """(the capture's bytes with a version 2 capture's frames unpacked into
    verbatim records after the header, the header's size)"""
    with open(path, "rb") as f:
        d = f.read()
    assert d[:8] == b"GPUIOCAP", "not a capture"
    hs = struct.unpack_from("<I", d, 12)[0]
    if struct.unpack_from("<I", d, 8)[0] == 2:    # frames: the records verbatim after the header
        d = d[:hs] + b"".join(r for _, r in gpu_records.v2_records(d, hs))
    return d, hs


def records(d, hs):
    """(offset, type, size) of each record after the header, up to the first
    one that is shorter than a record header or runs past the end"""
    off = hs
    while off + REC_HDR <= len(d):
        t, sz = struct.unpack_from("<HH", d, off)
        if sz < REC_HDR or off + sz > len(d):
            break
        yield off, t, sz
        off += sz


def load(path):
    """([CUDA_API record dict], {(pid, addr): GPU_SYM name}, the header's modes_detail)"""
    d, hs = capture_bytes(path)
    # modes_detail: after magic..ncpus (48), hostname 64, kernel 128, boot_id 40, 5 modes x 16
    detail = d[48 + 64 + 128 + 40 + 80:48 + 64 + 128 + 40 + 80 + 512].split(b'\0')[0].decode()
    api, syms = [], {}
    for off, t, sz in records(d, hs):
        _, _, pid, tid, cpu, ts = struct.unpack_from('<HHIIIQ', d, off)
        if t == REC_CUDA_API:
            end, ret, nbytes, stream, func, corr, cbid, src, kind, mk = \
                struct.unpack_from('<QqQQQIIBBB', d, off + 24)
            api.append(dict(name=d[off + 80:off + 128].split(b'\0')[0].decode(), pid=pid, tid=tid,
                            ts=ts, end=end, ret=ret, bytes=nbytes, stream=stream, func=func,
                            source=src, kind=kind, mk=mk))
        elif t == REC_GPU_SYM:
            addr, nl = struct.unpack_from('<QH', d, off + 24)
            syms[(pid, addr)] = d[off + 40:off + 40 + nl].decode()
    return api, syms, detail


def printed_calls(out):
    """CALL lines the program printed: [(name, {key: int})]"""
    res = []
    with open(out) as f:
        for l in f:
            if l.startswith('CALL '):
                fl = l.split()
                res.append((fl[1], {k: int(v) for k, v in (x.split('=') for x in fl[2:])}))
    return res


def match(check, api, printed, pid):
    """Each printed call is one record, in order per thread, same return code;
    the record matched to each printed call ({} where none)"""
    mine = [a for a in api if a['pid'] == pid]
    check(len(mine) == len(printed), f'{len(printed)} calls printed, {len(mine)} records for pid {pid}: '
          f'{[a["name"] for a in mine]}')
    by_tid = {}
    for a in mine:
        by_tid.setdefault(a['tid'], []).append(a)
    out = []
    for name, v in printed:
        q = by_tid.get(v['tid'], [])
        a = q.pop(0) if q else None
        ok = a is not None and a['name'] == name and a['ret'] == v['rc'] and a['end'] >= a['ts']
        check(ok, f'{name} tid={v["tid"]} rc={v["rc"]}: record '
              f'{(a["name"], a["tid"], a["ret"]) if a else None}')
        out.append(a or {})
    return out


def first_pid(cap):
    """t_cuda_uprobes A: the pid of the first CUDA API record (0: none)"""
    api, _, _ = load(cap)
    print(api[0]['pid'] if api else 0)


def cudart(cap, out, pid, label):
    """t_cuda_uprobes A/B: cuda_calls' 8 calls of the real libcudart, each once
    on its thread with its return code, bytes, stream, kind, memcpy kind and
    source; its launch stubs named by GPU_SYM; the header says uprobes"""
    pid = int(pid)
    check = Checks()
    api, syms, detail = load(cap)
    printed = printed_calls(out)
    check(len(printed) == 8, f'{label}: cuda_calls printed 8 calls ({len(printed)})')
    recs = match(check, api, printed, pid)
    want = {  # index: (bytes, stream, kind, memcpy kind)
        0: (1 << 20, 0, 6, 0), 1: (4096, 0, 2, 1), 2: (0, 0x5a5a, 1, 0), 3: (0, 0x5a5a, 1, 0),
        4: (65536, 0, 3, 0), 5: (0, 0, 4, 0), 6: (8192, 0, 2, 2), 7: (0, 0x77, 4, 0)}
    for i, (b, s, k, mk) in want.items():
        r = recs[i] if i < len(recs) else {}
        got = (r.get('bytes'), r.get('stream'), r.get('kind'), r.get('mk'), r.get('source'))
        check(got == (b, s, k, mk, 3), f'{label}: {printed[i][0] if i < len(printed) else i}: '
              f'bytes/stream/kind/memcpy kind/source {got} == {(b, s, k, mk, 3)}')
    main_tid = printed[0][1]['tid'] if printed else -1
    check(len({v['tid'] for _, v in printed}) == 2 and printed[6][1]['tid'] != main_tid,
          f'{label}: calls on two threads')
    for i in (2, 3):
        r = recs[i] if i < len(recs) else {}
        name = syms.get((pid, r.get('func')))
        check(bool(r.get('func')) and name == 'my_kernel(float*, int)',
              f'{label}: launch stub {r.get("func", 0):#x} named {name!r}')
    check('cuda uprobes:' in detail, f'{label}: header says {detail!r}')
    return check.status()


DRIVER_KINDS = {'cuMemAlloc_v2': (6, 0), 'cuMemcpyHtoD_v2': (2, 1), 'cuMemcpyDtoHAsync_v2': (2, 2),
                'cuMemcpy2D_v2': (2, 1), 'cuMemsetD32_v2': (3, 0), 'cuLaunchKernel': (1, 0),
                'cuLaunchKernelEx': (1, 0), 'cuStreamSynchronize': (4, 0), 'cuCtxSynchronize': (4, 0),
                'cuMemFree_v2': (7, 0)}


def driver(cap, out, pid, label):
    """t_cuda_uprobes C: fake_libcuda_calls' 11 driver calls exact (bytes,
    streams, copy kinds, CUfunction handles, source); the library's internal
    cuMemcpy is no record of its own"""
    pid = int(pid)
    check = Checks()
    api, syms, detail = load(cap)
    printed = printed_calls(out)
    check(len(printed) == 11, f'{label}: fake_libcuda_calls printed 11 calls ({len(printed)})')
    recs = match(check, api, printed, pid)
    funcs = {'cuLaunchKernel': 0xf00d, 'cuLaunchKernelEx': 0xf11d}
    for (name, v), r in zip(printed, recs):
        got = (r.get('bytes'), r.get('stream'), (r.get('kind'), r.get('mk')), r.get('func'), r.get('source'))
        want = (v['bytes'], v['stream'], DRIVER_KINDS[name], funcs.get(name, 0), 4)
        check(got == want, f'{label}: {name}: bytes/stream/(kind, memcpy kind)/func/source {got} == {want}')
    check(not [a for a in api if a['name'] == 'cuMemcpy'],
          f'{label}: cuMemcpy called inside cuMemcpyHtoD_v2 is not a record of its own')
    return check.status()


def no_uprobes(cap):
    """t_cuda_uprobes D: --no-cuda-uprobes: no CUDA records, and the header says so"""
    check = Checks()
    api, syms, detail = load(cap)
    check(not api, f'no CUDA records ({len(api)})')
    check('cuda uprobes: off (--no-cuda-uprobes)' in detail, f'header: {detail!r}')
    return check.status()


def by_pid(path, tpid, ypid, all_):
    """t_cuda_bystander: the traced process's CUDA calls (>= 8) are in the
    capture, the bystander's are not (with -a, ALL_ 1: both)"""
    tpid, ypid, all_ = int(tpid), int(ypid), all_ == "1"
    d, hs = capture_bytes(path)
    n = {}
    for off, typ, size in records(d, hs):
        if typ == REC_CUDA_API:
            pid = struct.unpack_from("<I", d, off + 4)[0]
            n[pid] = n.get(pid, 0) + 1
    assert n.get(tpid, 0) >= 8, f"traced pid {tpid}: {n.get(tpid, 0)} CUDA calls ({n})"
    if all_:
        assert n.get(ypid, 0) >= 8, f"-a: pid {ypid}: {n.get(ypid, 0)} CUDA calls ({n})"
    else:
        assert n.get(ypid, 0) == 0, f"bystander pid {ypid} in the capture ({n})"
    print(f"CUDA API records by pid: {n}")


def uprobe_calls(path):
    """t_cupti_on: "N STATE REASON" of a capture: its CUDA API records, and the
    first GPU_INFO record's collector state and reason (spaces as _)"""
    d, pos = capture_bytes(path)
    n, state, reason = 0, None, ""
    for off, typ, size in records(d, pos):
        if typ == REC_CUDA_API:
            n += 1
        elif typ == REC_GPU_INFO and state is None:   # the first one
            state = struct.unpack_from("<I", d, off + 64)[0]
            reason = d[off + 88:off + 216].split(b"\0")[0].decode()
    print(n, state, reason.replace(" ", "_"))


def breakpoint_byte(pid, sym):
    """t_cuda_bystander: "file=XX mem=XX": the first byte of SYM in the
    libcudart file the process PID maps, and in its memory (/proc/PID/mem);
    0xcc in memory where a uprobe is (x86 int3)"""
    pid = int(pid)
    with open(f"/proc/{pid}/maps") as f:
        maps = [l.split() for l in f if "libcudart.so" in l]
    path = maps[0][5]
    # the symbol's address in the file (st_value) -> file offset through its PT_LOAD
    value = None
    for l in subprocess.run(["readelf", "-W", "--dyn-syms", path], capture_output=True,
                            text=True, check=True).stdout.splitlines():
        f = l.split()
        if len(f) >= 8 and f[7].split("@")[0] == sym and f[6] != "UND":
            value = int(f[1], 16)
            break
    assert value is not None, f"{sym} not in {path}"
    off = None
    for l in subprocess.run(["readelf", "-W", "-l", path], capture_output=True, text=True,
                            check=True).stdout.splitlines():
        f = l.split()
        if f and f[0] == "LOAD":
            p_off, p_vaddr, p_filesz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            if p_vaddr <= value < p_vaddr + p_filesz:
                off = value - p_vaddr + p_off
    assert off is not None, "no PT_LOAD holds the symbol"
    # the mapping of the process that holds that file offset
    for m in maps:
        lo, hi = (int(x, 16) for x in m[0].split("-"))
        moff = int(m[2], 16)
        if moff <= off < moff + (hi - lo):
            addr = lo + off - moff
            break
    else:
        raise SystemExit("offset not mapped")
    with open(path, "rb") as f:
        f.seek(off)
        fb = f.read(1)[0]
    with open(f"/proc/{pid}/mem", "rb") as f:
        f.seek(addr)
        mb = f.read(1)[0]
    print(f"file={fb:02x} mem={mb:02x}")
