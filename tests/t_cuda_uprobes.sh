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
# The capture is decoded by tests/checks/cuda_calls.py (a minimal reader of
# gpuio_abi.h's records).
source "$(dirname "$0")/lib.sh"
need_root
CALLS="$GPUIO_TESTS/cuda_calls"
FAKE_CALLS="$GPUIO_TESTS/fake_libcuda_calls"
FAKE_LIB="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
for f in "$CALLS" "$FAKE_CALLS" "$FAKE_LIB"; do
  [ -e "$f" ] || fail "$f missing (make test-progs)"
done

chmod 0755 "$TMP"

# ---- A/B: the real libcudart ----------------------------------------------
"$CALLS" >"$TMP/probe.out" 2>&1 || { [ $? -eq 77 ] && skip "cuda_calls built without libcudart (no CUDA toolkit)"; }

check_cudart() {  # $1 capture, $2 program output, $3 pid, $4 label
  pycheck cuda_calls.cudart "$@" || fail "$4: libcudart calls"
}

# A. launch: the command's libcudart is probed before it runs
"$GPUIO" trace -o "$TMP/a.json" -- "$CALLS" --linger 500 >"$TMP/a.out" 2>"$TMP/a.err" \
  || { cat "$TMP/a.err"; fail "A: gpuio trace -- cuda_calls exited non-zero"; }
cat "$TMP/a.err"
APID=$(pycheck cuda_calls.first_pid "$TMP/a.gpuio")
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
  pycheck cuda_calls.driver "$@" || fail "$4: libcuda calls"
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
pycheck cuda_calls.no_uprobes "$TMP/d.gpuio" || fail "D: --no-cuda-uprobes"
echo "PASS: CUDA runtime and driver calls traced by uprobes (launch, attach, dlopen later, both flavours), exact"
