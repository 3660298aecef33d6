#!/usr/bin/env bash
# t_gpu_check: what of `make gpu-check` can run without a GPU. Its checker
# (tests/gpu/gpu_check.py --self-test) must pass its passing cases and fail
# each broken one on the right check; the CUDA program must compile with
# this machine's nvcc (skipped with a reason when there is none); and on a
# machine without /dev/nvidia0 the check refuses at once, exit 2, saying why.
source "$(dirname "$0")/lib.sh"
SRC=${GPUIO_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
python3 "$SRC/tests/gpu/gpu_check.py" --self-test > "$TMP/self.out" 2>&1 ||
  { cat "$TMP/self.out"; fail "gpu_check.py --self-test"; }
tail -1 "$TMP/self.out"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ -x "$NVCC" ]; then
  "$NVCC" -O2 -lineinfo -o "$TMP/gpu_check" "$SRC/tests/gpu/gpu_check.cu" > "$TMP/nvcc.out" 2>&1 ||
    { cat "$TMP/nvcc.out"; fail "nvcc cannot build tests/gpu/gpu_check.cu"; }
  echo "ok   nvcc builds tests/gpu/gpu_check.cu"
else
  echo "note: no nvcc: the CUDA program's build is not checked here"
fi
if [ ! -e /dev/nvidia0 ]; then
  rc=0
  "$SRC/tests/gpu/gpu_check.sh" > "$TMP/gc.out" 2>&1 || rc=$?
  [ $rc = 2 ] || { cat "$TMP/gc.out"; fail "gpu_check.sh without a GPU exited $rc, want 2"; }
  grep -q "no NVIDIA GPU on this machine" "$TMP/gc.out" || { cat "$TMP/gc.out"; fail "no clear reason"; }
  echo "ok   without a GPU: $(cat "$TMP/gc.out")"
fi
echo "PASS: t_gpu_check"
