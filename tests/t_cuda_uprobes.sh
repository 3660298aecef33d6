#!/usr/bin/env bash
# t_cuda_uprobes: CUDA API calls seen by uprobes, checked against what the
# programs say they called (no GPU or driver needed: the probes fire anyway).
#
#   A. launch: gpuio trace -- cuda_calls (the real libcudart.so.13, linked):
#      every call it printed is in the capture once, on its thread, with its
#      return code; cudaMalloc 1 MiB, cudaMemcpy 4096 HtoD / 8192 DtoH,
#      cudaMemset 65536, launches on stream 0x5a5a whose host stub is named
#      my_kernel(float*, int) by a GPU_SYM record; cudaStreamSynchronize on
#      0x77; __cudaLaunchKernel's tail call into cudaLaunchKernel is one call;
#   B. attach: -p to a cuda_calls that loaded libcudart and waits: same;
#   C. driver side: fake_libcuda_calls dlopens a stand-in libcuda.so.1
#      (tests/progs/fake_libcuda.c) after gpuio started (found by the
#      periodic rescan), in both attach flavours (uprobe.multi and classic
#      perf uprobes): exact bytes, streams, copy kinds, CUfunction handles,
#      return codes, tids; the library's internal cuMemcpy is not a record;
#   D. --no-cuda-uprobes: no CUDA records, and the capture header says so.
# The capture is decoded here (a minimal reader of gpuio_abi.h's records).
source "$(dirname "$0")/lib.sh"
need_root
CALLS="$GPUIO_TESTS/cuda_calls"
FAKE_CALLS="$GPUIO_TESTS/fake_libcuda_calls"
FAKE_LIB="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
for f in "$CALLS" "$FAKE_CALLS" "$FAKE_LIB"; do
  [ -e "$f" ] || fail "$f missing (make test-progs)"
done

chmod 0755 "$TMP"

# version 2 captures (frames) are unpacked by the independent decoder
cp "$GPUIO_SRC/tests/gpu_records.py" "$TMP/"
cat >"$TMP/dec.py" <<'EOF'
# Minimal capture reader: CUDA_API (11) and GPU_SYM (15) records, header text.
import struct
def load(path):
    d = open(path, 'rb').read()
    assert d[:8] == b'GPUIOCAP', 'not a capture'
    hs = struct.unpack_from('<I', d, 12)[0]
    if struct.unpack_from('<I', d, 8)[0] == 2:    # frames: the records verbatim after the header
        import gpu_records
        d = d[:hs] + b''.join(r for _, r in gpu_records.v2_records(d, hs))
    # modes_detail: after magic..ncpus (48), hostname 64, kernel 128, boot_id 40, 5 modes x 16
    detail = d[48 + 64 + 128 + 40 + 80:48 + 64 + 128 + 40 + 80 + 512].split(b'\0')[0].decode()
    api, syms, off = [], {}, hs
    while off + 24 <= len(d):
        t, sz, pid, tid, cpu, ts = struct.unpack_from('<HHIIIQ', d, off)
        if sz < 24 or off + sz > len(d):
            break
        if t == 11:
            end, ret, nbytes, stream, func, corr, cbid, src, kind, mk = \
                struct.unpack_from('<QqQQQIIBBB', d, off + 24)
            api.append(dict(name=d[off + 80:off + 128].split(b'\0')[0].decode(), pid=pid, tid=tid,
                            ts=ts, end=end, ret=ret, bytes=nbytes, stream=stream, func=func,
                            source=src, kind=kind, mk=mk))
        elif t == 15:
            addr, nl = struct.unpack_from('<QH', d, off + 24)
            syms[(pid, addr)] = d[off + 40:off + 40 + nl].decode()
        off += sz
    return api, syms, detail

def calls(out):
    """CALL lines the program printed: [(name, {key: int})]"""
    res = []
    for l in open(out):
        if l.startswith('CALL '):
            f = l.split()
            res.append((f[1], {k: int(v) for k, v in (x.split('=') for x in f[2:])}))
    return res

bad = 0
def check(cond, msg):
    global bad
    print(('ok   ' if cond else 'FAIL ') + msg)
    bad += not cond

def match(api, printed, pid):
    """Each printed call is one record, in order per thread, same return code."""
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
EOF

# ---- A/B: the real libcudart ----------------------------------------------
"$CALLS" >"$TMP/probe.out" 2>&1 || { [ $? -eq 77 ] && skip "cuda_calls built without libcudart (no CUDA toolkit)"; }

check_cudart() {  # $1 capture, $2 program output, $3 pid, $4 label
  python3 - "$@" <<'EOF' || fail "$4: libcudart calls"
import sys, os
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import dec
cap, out, pid, label = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
api, syms, detail = dec.load(cap)
printed = dec.calls(out)
dec.check(len(printed) == 8, f'{label}: cuda_calls printed 8 calls ({len(printed)})')
recs = dec.match(api, printed, pid)
want = {  # index: (bytes, stream, kind, memcpy kind)
    0: (1 << 20, 0, 6, 0), 1: (4096, 0, 2, 1), 2: (0, 0x5a5a, 1, 0), 3: (0, 0x5a5a, 1, 0),
    4: (65536, 0, 3, 0), 5: (0, 0, 4, 0), 6: (8192, 0, 2, 2), 7: (0, 0x77, 4, 0)}
for i, (b, s, k, mk) in want.items():
    r = recs[i] if i < len(recs) else {}
    got = (r.get('bytes'), r.get('stream'), r.get('kind'), r.get('mk'), r.get('source'))
    dec.check(got == (b, s, k, mk, 3), f'{label}: {printed[i][0] if i < len(printed) else i}: '
              f'bytes/stream/kind/memcpy kind/source {got} == {(b, s, k, mk, 3)}')
main_tid = printed[0][1]['tid'] if printed else -1
dec.check(len({v['tid'] for _, v in printed}) == 2 and printed[6][1]['tid'] != main_tid,
          f'{label}: calls on two threads')
for i in (2, 3):
    r = recs[i] if i < len(recs) else {}
    name = syms.get((pid, r.get('func')))
    dec.check(bool(r.get('func')) and name == 'my_kernel(float*, int)',
              f'{label}: launch stub {r.get("func", 0):#x} named {name!r}')
dec.check('cuda uprobes:' in detail, f'{label}: header says {detail!r}')
sys.exit(1 if dec.bad else 0)
EOF
}

# A. launch: the command's libcudart is probed before it runs
"$GPUIO" trace -o "$TMP/a.json" -- "$CALLS" --linger 500 >"$TMP/a.out" 2>"$TMP/a.err" \
  || { cat "$TMP/a.err"; fail "A: gpuio trace -- cuda_calls exited non-zero"; }
cat "$TMP/a.err"
APID=$(python3 -c "
import sys; sys.path.insert(0, '$TMP'); import dec
api, _, _ = dec.load('$TMP/a.gpuio'); print(api[0]['pid'] if api else 0)")
check_cudart "$TMP/a.gpuio" "$TMP/a.out" "$APID" A
check_struct "$TMP/a.json"

# B. attach to a process that loaded libcudart before gpuio started
rm -f "$TMP/b.go"
spawn -l "$TMP/b.out" cuda_calls "$CALLS" --wait "$TMP/b.go" --linger 500
BPID=$SPAWNED
wait_lines "$TMP/b.out" 1
spawn -e "$TMP/b.err" gpuio "$GPUIO" trace -p "$BPID" -d 20s -o "$TMP/b.json"
GPID=$SPAWNED
wait_line -m "B: gpuio never started tracing" tracing "$TMP/b.err"
touch "$TMP/b.go"
wait "$BPID" || fail "B: cuda_calls failed"
wait "$GPID" || { cat "$TMP/b.err"; fail "B: gpuio trace -p exited non-zero"; }
cat "$TMP/b.err"
check_cudart "$TMP/b.gpuio" "$TMP/b.out" "$BPID" B

# ---- C: the driver (a stand-in libcuda.so.1, loaded with dlopen) ------------
check_driver() {  # $1 capture, $2 output, $3 pid, $4 label
  python3 - "$@" <<'EOF' || fail "$4: libcuda calls"
import sys, os
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import dec
cap, out, pid, label = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
api, syms, detail = dec.load(cap)
printed = dec.calls(out)
dec.check(len(printed) == 11, f'{label}: fake_libcuda_calls printed 11 calls ({len(printed)})')
recs = dec.match(api, printed, pid)
kinds = {'cuMemAlloc_v2': (6, 0), 'cuMemcpyHtoD_v2': (2, 1), 'cuMemcpyDtoHAsync_v2': (2, 2),
         'cuMemcpy2D_v2': (2, 1), 'cuMemsetD32_v2': (3, 0), 'cuLaunchKernel': (1, 0),
         'cuLaunchKernelEx': (1, 0), 'cuStreamSynchronize': (4, 0), 'cuCtxSynchronize': (4, 0),
         'cuMemFree_v2': (7, 0)}
funcs = {'cuLaunchKernel': 0xf00d, 'cuLaunchKernelEx': 0xf11d}
for (name, v), r in zip(printed, recs):
    got = (r.get('bytes'), r.get('stream'), (r.get('kind'), r.get('mk')), r.get('func'), r.get('source'))
    want = (v['bytes'], v['stream'], kinds[name], funcs.get(name, 0), 4)
    dec.check(got == want, f'{label}: {name}: bytes/stream/(kind, memcpy kind)/func/source {got} == {want}')
dec.check(not [a for a in api if a['name'] == 'cuMemcpy'],
          f'{label}: cuMemcpy called inside cuMemcpyHtoD_v2 is not a record of its own')
sys.exit(1 if dec.bad else 0)
EOF
}

for flavour in uprobe.multi uprobe; do
  rm -f "$TMP/c.go"
  # launched: the library is dlopened after the start, so the rescan must find it
  spawn -o "$TMP/c-$flavour.out" -e "$TMP/c-$flavour.err" gpuio \
    env GPUIO_CUDA_UPROBE_MODE=$flavour "$GPUIO" trace -v -o "$TMP/c-$flavour.json" -- \
    "$FAKE_CALLS" "$FAKE_LIB" --wait "$TMP/c.go" --linger 100
  GPID=$SPAWNED
  wait_lines "$TMP/c-$flavour.out" 1
  # the rescan runs every second: give it two
  poll -t 3 grep -q "fake_cuda/libcuda.so.1: 11 functions" "$TMP/c-$flavour.err" || true
  touch "$TMP/c.go"
  wait "$GPID" || { cat "$TMP/c-$flavour.err"; fail "C: gpuio trace -- fake_libcuda_calls ($flavour) failed"; }
  cat "$TMP/c-$flavour.err"
  grep -q "cuda=$flavour" "$TMP/c-$flavour.err" || fail "C: attach flavour $flavour not used"
  CPID=$(awk '/^ready/ {print $2}' "$TMP/c-$flavour.out")
  check_driver "$TMP/c-$flavour.gpuio" "$TMP/c-$flavour.out" "$CPID" "C/$flavour"
done

# ---- D: --no-cuda-uprobes -------------------------------------------------
"$GPUIO" trace --no-cuda-uprobes -o "$TMP/d.json" -- "$CALLS" >"$TMP/d.out" 2>"$TMP/d.err" \
  || { cat "$TMP/d.err"; fail "D: gpuio trace --no-cuda-uprobes failed"; }
python3 - "$TMP/d.gpuio" <<'EOF' || fail "D: --no-cuda-uprobes"
import sys, os
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import dec
api, syms, detail = dec.load(sys.argv[1])
dec.check(not api, f'no CUDA records ({len(api)})')
dec.check('cuda uprobes: off (--no-cuda-uprobes)' in detail, f'header: {detail!r}')
sys.exit(1 if dec.bad else 0)
EOF
echo "PASS: CUDA runtime and driver calls traced by uprobes (launch, attach, dlopen later, both flavours), exact"
