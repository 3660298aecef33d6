#!/usr/bin/env bash
# The CUPTI collector's converter, without a GPU: cupti_synth builds activity
# buffers from the real CUDA 13 structs, the real libcupti iterates them, the
# collector converts and writes its side file. Every record is decoded by
# tests/gpu_records.py (an independent reader of bpf/gpuio_abi.h) and checked
# field by field against the values put in the spec below (the ground truth):
# names demangled, timestamps moved by the clock offset, noisy API calls
# absent, CUPTI's drop count carried, NVTX push/pop nesting, FINAL at the end.
# Then `gpuio info` and `gpuio convert` must accept the side file.
source "$(dirname "$0")/lib.sh"
SYNTH="$GPUIO_TESTS/cupti_synth"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
[ -f "$CUDA_HOME/include/cupti.h" ] || skip "CUDA/CUPTI not installed ($CUDA_HOME)"
[ -x "$SYNTH" ] || fail "missing $SYNTH (run: make test-progs)"
[ -x "$GPUIO" ] || fail "missing $GPUIO (run: make)"
export PYTHONPATH="$GPUIO_SRC/tests"

LONG=$(printf 'k%.0s' $(seq 1100))
cat > "$TMP/main.spec" <<EOF2
now 5000000000
# --- buffer 1: device activity and API calls
kernel 1000 2000 0 7 11 ctx=3 grid=4,2,1 block=128,1,1 regs=32 ssmem=1024 dsmem=2048 _Z6matmulIfEvPKT_S2_PS0_i
kernel 2100 2500 1 8 12 plain_c_kernel
memcpy 2600 3100 0 7 13 4096 htod async ctx=3 src=1 dst=2
memcpy 3200 3300 0 7 14 8192 dtoh
peer 3400 3900 0 1 9 15 65536 async ctx=3
memset 4000 4100 0 7 16 1024 255 async mem=2
api runtime 900 1100 4242 11 211          # cudaLaunchKernel_v7000
api runtime 950 960 4242 0 10             # cudaGetLastError: noise
api runtime 961 962 4242 0 17             # cudaGetDevice: noise
api runtime 963 964 4242 0 3              # cudaGetDeviceCount: noise
api runtime 2550 2700 4242 13 41          # cudaMemcpyAsync_v3020
api driver 970 980 4243 0 307 ret=3       # cuLaunchKernel
api driver 981 982 4243 0 304             # cuCtxGetCurrent: noise
api driver 983 984 4243 0 125             # cuStreamQuery: noise
api driver 985 986 4243 0 439             # cuStreamQuery_ptsz: noise
api driver 3150 3350 4243 14 278          # cuMemcpyDtoH_v2
api driver 3400 3450 4243 20 243          # cuMemAlloc_v2
ignored
flush
# --- buffer 2: CUPTI dropped 5 before it; sync, overhead, NVTX
drop 5
sync 5000 6000 stream 7 17 ctx=3
sync 6100 6200 event 0 18
overhead 6300 6400 1 4242
push 500 4242 epoch 1
push 600 4242 load batch
pop 900 4242
mark 6500 4243 checkpoint
pop 7000 4242
kernel 7100 7200 0 7 19 $LONG
flush
# --- left in CUPTI's buffer: the exit flush brings it, 2 more dropped
drop 2
memcpy 0 7300 0 7 21 16 dtod
EOF2
"$SYNTH" "$TMP/main.spec" "$TMP" > "$TMP/main.path" || fail "cupti_synth failed"
main=$(cat "$TMP/main.path")
[ "$main" = "$TMP/cupti.$(basename "$main" | cut -d. -f2).gpuio" ] || fail "side file name $main"

python3 - "$main" "$LONG" <<'PY' || fail "main side file content"
import os, sys, gpu_records as g
hdr, recs = g.read(sys.argv[1])
long_name = sys.argv[2]
pid = hdr["tracer_pid"]
assert hdr["version"] == 1 and hdr["abi_version"] == 1, hdr
ns = os.stat("/proc/self/ns/pid").st_ino   # same namespace as the collector
assert hdr["header_size"] == 2040 and hdr["target"] == "cupti pid %d pidns %d" % (pid, ns), hdr
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
PY
if command -v c++filt > /dev/null; then
  [ "$(c++filt _Z6matmulIfEvPKT_S2_PS0_i)" = "void matmul<float>(float const*, float const*, float*, int)" ] ||
    fail "c++filt disagrees with the expected demangled name"
fi

# --- CUDA 12 libcupti (PyTorch's bundled copy): the same activity handed over in the
# record structs of CUPTI API versions 24 (12.6: Kernel9, Memcpy5, Synchronization) and
# 26/27 (12.8/12.9: Memcpy6 of 12.8, Synchronization2) decodes to the same records
for v in 24 26 27; do
  mkdir "$TMP/v$v"
  { echo "cupti $v"; cat "$TMP/main.spec"; } > "$TMP/v$v.spec"
  "$SYNTH" "$TMP/v$v.spec" "$TMP/v$v" > "$TMP/v$v.path" || fail "cupti_synth (cupti $v) failed"
  python3 - "$main" "$(cat "$TMP/v$v.path")" "$v" <<'PY' || fail "CUDA 12 layout (API version $v)"
import sys, gpu_records as g
_, want = g.read(sys.argv[1])
_, got = g.read(sys.argv[2])
v = int(sys.argv[3])
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
PY
done
# a libcupti older than 12.0 (CUDA 11.8 is API 18) is refused, plainly, before any record
mkdir "$TMP/v18"
f=$(printf 'cupti 18\nkernel 1 2 0 0 1 k\n' | "$SYNTH" - "$TMP/v18") || fail "cupti_synth (cupti 18)"
python3 - "$f" <<'PY' || fail "CUDA 11.8 libcupti not refused"
import sys, gpu_records as g
_, recs = g.read(sys.argv[1])
assert len(recs) == 1 and recs[0]["state"] == g.GPU_UNAVAILABLE, recs
assert recs[0]["reason"] == "CUPTI unavailable: libcupti of CUDA 11.8 (API 18): gpuio decodes 12.0-13.x", recs[0]
PY

# --- clock offset: CUPTI on another clock (REALTIME-like), timestamps moved exactly
cat > "$TMP/off.spec" <<'EOF2'
clock offset -1700000000000000000
kernel 1700000000000001000 1700000000000002000 0 7 11 _Z1kv
api runtime 1700000000000000900 1700000000000001100 77 11 211
EOF2
mkdir "$TMP/off"
off=$("$SYNTH" "$TMP/off.spec" "$TMP/off") || fail "cupti_synth (offset) failed"
python3 - "$off" <<'PY' || fail "offset side file content"
import sys, gpu_records as g
_, recs = g.read(sys.argv[1])
infos = [r for r in recs if r["type_name"] == "gpu_info"]
assert all(i["clock"] == g.CLOCK_OFFSET and i["offset_ns"] == -1700000000000000000 and
           i["uncertainty_ns"] == 5 for i in infos), infos
k = [r for r in recs if r["type_name"] == "gpu_kernel"]
a = [r for r in recs if r["type_name"] == "cuda_api"]
assert len(k) == 1 and (k[0]["ts"], k[0]["end_ns"], k[0]["name"]) == (1000, 2000, "k()"), k
assert len(a) == 1 and (a[0]["ts"], a[0]["end_ns"], a[0]["tid"]) == (900, 1100, 77), a
assert infos[-1]["state"] == g.GPU_FINAL
PY

# --- CUPTI held by another profiler (error 39), and an enable that fails: one UNAVAILABLE record
check_unavailable() {  # SPEC-TEXT ERROR REASON
  local d="$TMP/u$2"
  mkdir "$d"
  printf '%s\n' "$1" > "$d.spec"
  f=$("$SYNTH" "$d.spec" "$d") || fail "cupti_synth ($1) failed"
  [ "$(ls "$d")" = "$(basename "$f")" ] || fail "($1): files $(ls "$d")"
  python3 - "$f" "$2" "$3" <<'PY' || fail "unavailable side file ($1)"
import sys, gpu_records as g
_, recs = g.read(sys.argv[1])
assert len(recs) == 1, recs
r = recs[0]
assert r["type_name"] == "gpu_info" and r["state"] == g.GPU_UNAVAILABLE, r
assert r["cupti_error"] == int(sys.argv[2]) and r["reason"] == sys.argv[3], r
assert r["clock"] == g.CLOCK_NONE and r["records"] == 0, r
PY
}
check_unavailable "fail subscribe 39" 39 \
  "CUPTI unavailable: cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (another profiler holds CUPTI)"
check_unavailable "fail enable 27" 27 \
  "CUPTI unavailable: cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_NOT_SUPPORTED"

# another profiler holding CUPTI is said plainly by info and report
held=$(ls "$TMP"/u39/cupti.*.gpuio)
"$GPUIO" info "$held" | grep -q "held by another profiler: no GPU activity, CUDA calls from uprobes" ||
  fail "gpuio info does not say CUPTI is held by another profiler"
"$GPUIO" report "$held" 2>/dev/null | grep -q "another profiler holds CUPTI in pid" ||
  fail "gpuio report does not say CUPTI is held by another profiler"

# --- the gpuio readers accept the side files
for f in "$main" "$off" "$TMP"/u39/cupti.*.gpuio; do
  "$GPUIO" info "$f" > "$TMP/info.out" 2>&1 || { cat "$TMP/info.out"; fail "gpuio info $f"; }
  "$GPUIO" convert "$f" -o "$TMP/out.json" > "$TMP/conv.out" 2>&1 ||
    { cat "$TMP/conv.out"; fail "gpuio convert $f"; }
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out.json" ||
    fail "gpuio convert $f: not JSON"
done
echo "PASS: t_cupti_convert"
