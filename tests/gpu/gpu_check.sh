#!/usr/bin/env bash
# tests/gpu/gpu_check.sh — `make gpu-check`: gpuio against a real NVIDIA GPU.
# Builds tests/gpu/gpu_check.cu (kernels of known duration, copies of known
# size on three streams, a CUDA graph, clock probes; it writes its own ground
# truth), traces it twice and checks each trace against that truth with
# tests/gpu/gpu_check.py:
#   launch  build/gpuio trace -o launch.json -- gpu_check launch.truth.json
#           (the driver loads the collector at cuInit: CUDA_INJECTION64_PATH)
#   attach  gpu_check --wait-for-file GO started on its own, CUDA set up; then
#           build/gpuio trace -p PID injects the collector; then GO is created
#           and the program does its GPU work
# Exit 0 = both PASS, 1 = a FAIL, 2 = cannot run here (no GPU, not root, no
# nvcc, gpuio not built): nothing was checked.
#
# Environment (the GPU bundle, tests/gpu/bundle/run.sh, sets them):
#   GPU_CHECK_TRACE_ARGS  more `gpuio trace` options, e.g. --no-bpf (then root
#                         is not needed: the GPU side alone, from CUPTI)
#   GPU_CHECK_OUT         build and run folder (default build/gpu-check)
#   GPU_CHECK_LABEL       prefix of the two modes' labels (default none)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
say() { echo "gpu-check: $*"; }
cannot() { echo "gpu-check: $*" >&2; exit 2; }   # could not run here: exit 2

# ---- 1. a usable GPU, before anything is built ----
[ -e /dev/nvidia0 ] ||
  cannot "no NVIDIA GPU on this machine (no /dev/nvidia0); this check needs one — nothing was run"
if command -v nvidia-smi >/dev/null 2>&1; then
  smi=$(nvidia-smi -L 2>&1) ||
    cannot "nvidia-smi -L failed ($(echo "$smi" | head -n1)); this check needs a working GPU — nothing was run"
  echo "$smi" | grep -q '^GPU [0-9]' ||
    cannot "nvidia-smi -L lists no GPU; this check needs one — nothing was run"
fi
# the driver library itself: loadable, cuInit works, at least one device
ndev=$(python3 - 2>&1 <<'EOF'
import ctypes
try:
    cu = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    raise SystemExit("libcuda.so.1 cannot be loaded: %s" % e)
r = cu.cuInit(0)
if r:
    raise SystemExit("cuInit failed with CUDA error %d" % r)
n = ctypes.c_int(0)
r = cu.cuDeviceGetCount(ctypes.byref(n))
if r or n.value < 1:
    raise SystemExit("cuDeviceGetCount: error %d, %d device(s)" % (r, n.value))
print(n.value)
EOF
) || cannot "$ndev; this check needs a usable GPU — nothing was run"

# ---- 2. what the check needs besides the GPU ----
TRACE_ARGS=${GPU_CHECK_TRACE_ARGS:-}
LABEL=${GPU_CHECK_LABEL:-}
case " $TRACE_ARGS " in
  *" --no-bpf "*) ;;
  *) [ "$(id -u)" -eq 0 ] ||
       cannot "needs root (gpuio trace loads eBPF programs): sudo make gpu-check, or GPU_CHECK_TRACE_ARGS=--no-bpf — nothing was run" ;;
esac
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
[ -x "$NVCC" ] || NVCC=$(command -v nvcc) ||
  cannot "no nvcc ($CUDA_HOME/bin/nvcc; set CUDA_HOME) — nothing was run"
GPUIO=$ROOT/build/gpuio
LIB=$ROOT/build/libgpuio-cupti.so
[ -x "$GPUIO" ] || cannot "missing $GPUIO: run make — nothing was run"
[ -f "$LIB" ] || cannot "missing $LIB (make found no CUPTI under CUDA_HOME=$CUDA_HOME) — nothing was run"
say "$ndev CUDA device(s)${smi:+; $(echo "$smi" | head -n1)}"

# ---- 3. build ----
SRC=$ROOT/tests/gpu/gpu_check.cu
OUT=${GPU_CHECK_OUT:-$ROOT/build/gpu-check}
BIN=$OUT/gpu_check
CHECK="python3 $ROOT/tests/gpu/gpu_check.py"
mkdir -p "$OUT"
if [ ! -x "$BIN" ] || [ "$SRC" -nt "$BIN" ]; then
  say "building $BIN"
  # -arch=native: SASS for this GPU (no JIT); older nvcc lacks it
  "$NVCC" -O2 -lineinfo -arch=native -o "$BIN" "$SRC" 2>"$OUT/nvcc.err" ||
    "$NVCC" -O2 -lineinfo -o "$BIN" "$SRC" 2>>"$OUT/nvcc.err" ||
    { cat "$OUT/nvcc.err"; say "FAIL: nvcc could not build $SRC"; exit 1; }
fi

# Run directory: under sudo the launched command runs as the invoking user
# and must be able to write its truth file there.
RUN=${GPU_CHECK_RUN:-$OUT/run}
rm -rf "$RUN" && mkdir -p "$RUN"
[ -n "${SUDO_UID:-}" ] && chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$RUN"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
result=()
verdict() {  # MODE RC
  if [ "$2" -eq 0 ]; then result+=("$1 PASS"); else result+=("$1 FAIL"); fi
}
show_gpuio() {  # the tracer's own lines about the GPU, for the log
  grep -E 'GPU|cuda|CUPTI|warning|error|exited after' "$1" | sed 's/^/    /'
}

# ---- 4. launch mode ----
say "${LABEL}launch: gpuio trace $TRACE_ARGS -o $RUN/launch.json -- $BIN $RUN/launch.truth.json"
timeout 600 "$GPUIO" trace $TRACE_ARGS -o "$RUN/launch.json" -- "$BIN" "$RUN/launch.truth.json" \
  >"$RUN/launch.out" 2>"$RUN/launch.err"
rc=$?
show_gpuio "$RUN/launch.err"
if [ "$rc" -ne 0 ] || [ ! -s "$RUN/launch.truth.json" ]; then
  tail -n 20 "$RUN/launch.out" "$RUN/launch.err"
  say "[${LABEL}launch]: FAIL: the traced program or gpuio failed (rc $rc)"
  verdict "${LABEL}launch" 1
else
  $CHECK --label "${LABEL}launch" "$RUN/launch.json" "$RUN/launch.truth.json"
  verdict "${LABEL}launch" $?
fi

# ---- 5. attach mode ----
"$BIN" --wait-for-file "$RUN/attach.go" "$RUN/attach.truth.json" >"$RUN/attach.out" 2>&1 &
tpid=$!
pids+=("$tpid")
for _ in $(seq 1200); do   # CUDA set-up (and a JIT) can take a while: 120 s
  grep -q ' ready' "$RUN/attach.out" 2>/dev/null && break
  kill -0 "$tpid" 2>/dev/null || break
  sleep 0.1
done
arc=1
if ! grep -q ' ready' "$RUN/attach.out"; then
  cat "$RUN/attach.out"
  say "[${LABEL}attach]: FAIL: gpu_check never became ready"
else
  say "${LABEL}attach: gpuio trace $TRACE_ARGS -p $tpid -o $RUN/attach.json"
  timeout 600 "$GPUIO" trace $TRACE_ARGS -p "$tpid" -o "$RUN/attach.json" >"$RUN/attach.trace.out" 2>"$RUN/attach.err" &
  gpid=$!
  pids+=("$gpid")
  for _ in $(seq 600); do   # the collector is injected within a few gpu_watch periods
    grep -q "GPU collector injected into pid $tpid\|could not inject" "$RUN/attach.err" && break
    kill -0 "$gpid" 2>/dev/null || break
    sleep 0.1
  done
  injected=0
  grep -q "GPU collector injected into pid $tpid" "$RUN/attach.err" && injected=1
  # one ingest period, so the collector's ON record and clock are in before the work
  [ "$injected" -eq 1 ] && sleep 1.5
  touch "$RUN/attach.go"
  wait "$tpid"; trc=$?
  wait "$gpid"; grc=$?
  pids=()
  show_gpuio "$RUN/attach.err"
  if [ "$injected" -ne 1 ]; then
    say "[${LABEL}attach]: FAIL: gpuio did not inject its collector into pid $tpid"
  elif [ "$trc" -ne 0 ] || [ "$grc" -ne 0 ] || [ ! -s "$RUN/attach.truth.json" ]; then
    tail -n 20 "$RUN/attach.out" "$RUN/attach.err"
    say "[${LABEL}attach]: FAIL: gpu_check (rc $trc) or gpuio (rc $grc) failed"
  else
    $CHECK --label "${LABEL}attach" "$RUN/attach.json" "$RUN/attach.truth.json"
    arc=$?
  fi
fi
verdict "${LABEL}attach" "$arc"

# ---- 6. verdict ----
echo "gpu-check: ${result[*]} (traces and truths in $RUN)"
case "${result[*]}" in
  *FAIL*) echo "gpu-check: FAIL"; exit 1 ;;
  *)      echo "gpu-check: PASS"; exit 0 ;;
esac
