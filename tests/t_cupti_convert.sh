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

pycheck cupti_records.synth_main "$main" "$LONG" || fail "main side file content"
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
  pycheck cupti_records.synth_layout "$main" "$(cat "$TMP/v$v.path")" "$v" || fail "CUDA 12 layout (API version $v)"
done
# a libcupti older than 12.0 (CUDA 11.8 is API 18) is refused, plainly, before any record
mkdir "$TMP/v18"
f=$(printf 'cupti 18\nkernel 1 2 0 0 1 k\n' | "$SYNTH" - "$TMP/v18") || fail "cupti_synth (cupti 18)"
pycheck cupti_records.synth_refused "$f" || fail "CUDA 11.8 libcupti not refused"

# --- clock offset: CUPTI on another clock (REALTIME-like), timestamps moved exactly
cat > "$TMP/off.spec" <<'EOF2'
clock offset -1700000000000000000
kernel 1700000000000001000 1700000000000002000 0 7 11 _Z1kv
api runtime 1700000000000000900 1700000000000001100 77 11 211
EOF2
mkdir "$TMP/off"
off=$("$SYNTH" "$TMP/off.spec" "$TMP/off") || fail "cupti_synth (offset) failed"
pycheck cupti_records.synth_offset "$off" || fail "offset side file content"

# --- CUPTI held by another profiler (error 39), and an enable that fails: one UNAVAILABLE record
check_unavailable() {  # SPEC-TEXT ERROR REASON
  local d="$TMP/u$2"
  mkdir "$d"
  printf '%s\n' "$1" > "$d.spec"
  f=$("$SYNTH" "$d.spec" "$d") || fail "cupti_synth ($1) failed"
  [ "$(ls "$d")" = "$(basename "$f")" ] || fail "($1): files $(ls "$d")"
  pycheck cupti_records.synth_unavailable "$f" "$2" "$3" || fail "unavailable side file ($1)"
}
check_unavailable "fail subscribe 39" 39 \
  "CUPTI unavailable: cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (another profiler holds CUPTI)"
check_unavailable "fail enable 27" 27 \
  "CUPTI unavailable: cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_NOT_SUPPORTED"

# another profiler holding CUPTI is said plainly by info and report
held=$(ls "$TMP"/u39/cupti.*.gpuio)
"$GPUIO" info "$held" | has "held by another profiler: no GPU activity, CUDA calls from uprobes" ||
  fail "gpuio info does not say CUPTI is held by another profiler"
"$GPUIO" report "$held" 2>/dev/null | has "another profiler holds CUPTI in pid" ||
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
