#!/usr/bin/env bash
# libgpuio-cupti.so loaded the way the CUDA driver (InitializeInjection) and
# the tracer (dlopen + gpuio_cupti_attach) load it, on a machine without a
# usable CUDA driver: the collector must write exactly one UNAVAILABLE info
# record saying why, leave the application's stdout, stderr and exit status
# as they were, return from attach at once, and stay silent and write
# nothing without an output dir. With GPUIO_CUPTI_VERBOSE=1 it says why on
# stderr. (With a working driver and GPU this test skips: the UNAVAILABLE
# path is not reachable there.)
source "$(dirname "$0")/lib.sh"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
[ -f "$CUDA_HOME/include/cupti.h" ] || skip "CUDA/CUPTI not installed ($CUDA_HOME)"
LIB=${GPUIO_CUPTI_LIB:-$(dirname "$GPUIO")/libgpuio-cupti.so}
APP="$GPUIO_TESTS/cupti_inject"
[ -f "$LIB" ] || fail "missing $LIB (run: make)"
[ -x "$APP" ] || fail "missing $APP (run: make test-progs)"
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  skip "a GPU and driver are present: the driverless path is not reachable"
fi

# exports: the entry points and nothing else
syms=$(nm -D --defined-only "$LIB" | awk '$2 == "T" {print $3}' | LC_ALL=C sort | tr '\n' ' ')
[ "$syms" = "InitializeInjection InitializeInjectionNvtx2 gpuio_cupti_attach " ] ||
  fail "exported symbols: $syms"

# baseline: the application alone
rc=0; "$APP" "$LIB" none "$TMP/none.rep" > "$TMP/none.out" 2> "$TMP/none.err" || rc=$?
[ "$rc" -eq 7 ] && [ "$(cat "$TMP/none.out")" = "app: hello" ] && [ ! -s "$TMP/none.err" ] ||
  fail "baseline app run broken (rc $rc)"

# run MODE DIR [VERBOSE]: the app with the collector, its status and output unchanged
run() {
  local mode=$1 dir=$2 verbose=${3:-0} rc=0
  env ${dir:+GPUIO_GPU_DIR=$dir} GPUIO_CUPTI_VERBOSE=$verbose \
    "$APP" "$LIB" "$mode" "$TMP/$mode.rep" > "$TMP/$mode.out" 2> "$TMP/$mode.err" || rc=$?
  [ "$rc" -eq 7 ] || fail "$mode: application exit status $rc, want 7"
  cmp -s "$TMP/$mode.out" "$TMP/none.out" || fail "$mode: application stdout changed: $(cat "$TMP/$mode.out")"
  if [ "$verbose" = 0 ] && [ -s "$TMP/$mode.err" ]; then
    fail "$mode: collector wrote to stderr without GPUIO_CUPTI_VERBOSE: $(cat "$TMP/$mode.err")"
  fi
  return 0
}
# one_unavailable DIR HOW [FILES]: FILES (1) side files, each holding exactly one UNAVAILABLE record
one_unavailable() {
  local n f
  n=$(find "$1" -name 'cupti.*.gpuio' | wc -l)
  [ "$n" -eq "${3:-1}" ] || fail "$1: $n side files, want ${3:-1}"
  for f in "$1"/cupti.*.gpuio; do
    pycheck cupti_records.one_unavailable "$f" "$2" || fail "$f: not one UNAVAILABLE record"
  done
}

# --- launch mode: InitializeInjection as cuInit calls it
mkdir "$TMP/launch"
run launch "$TMP/launch"
grep -qx "InitializeInjection=1" "$TMP/launch.rep" || fail "InitializeInjection: $(cat "$TMP/launch.rep")"
grep -qx "again=1" "$TMP/launch.rep" || fail "second InitializeInjection: $(cat "$TMP/launch.rep")"
one_unavailable "$TMP/launch" 1 > "$TMP/launch.reason"

# --- attach mode: returns at once, the collector's thread does the rest
mkdir "$TMP/attach"
run attach "$TMP/attach"
grep -qx "attach=0" "$TMP/attach.rep" || fail "gpuio_cupti_attach: $(cat "$TMP/attach.rep")"
us=$(sed -n 's/^attach_us=//p' "$TMP/attach.rep")
[ "$us" -lt 100000 ] || fail "gpuio_cupti_attach took $us us"
# a second session after an UNAVAILABLE one tries again (CUPTI may be free now)
grep -qx "again=0" "$TMP/attach.rep" || fail "second attach: $(cat "$TMP/attach.rep")"
one_unavailable "$TMP/attach" 2 2 > /dev/null

# --- verbose: the reason on stderr, still nothing on stdout
mkdir "$TMP/verbose"
run launch "$TMP/verbose" 1
grep -qF "$(cat "$TMP/launch.reason")" "$TMP/launch.err" ||
  fail "verbose stderr lacks the reason: $(cat "$TMP/launch.err")"
one_unavailable "$TMP/verbose" 1 > /dev/null

# --- no output dir: off, silent, no file anywhere we can see
find "$TMP" -name 'cupti.*.gpuio' | sort > "$TMP/before"
(cd "$TMP" && run launch "")
find "$TMP" -name 'cupti.*.gpuio' | sort | cmp -s - "$TMP/before" || fail "file written without GPUIO_GPU_DIR"
(cd "$TMP" && run launch "" 1)
grep -q "GPUIO_GPU_DIR is not set" "$TMP/launch.err" || fail "verbose does not say why it is off"

# --- unwritable output dir: the application still runs untouched
run launch "$TMP/no/such/dir"

# --- NVTX_INJECTION64_PATH naming us: NVTX reaches CUPTI, the app is untouched
NVTX_APP="$GPUIO_TESTS/cupti_nvtx"
[ -x "$NVTX_APP" ] || fail "missing $NVTX_APP (run: make test-progs)"
for v in 0 1; do
  rc=0
  NVTX_INJECTION64_PATH="$LIB" GPUIO_CUPTI_VERBOSE=$v "$NVTX_APP" > "$TMP/nvtx.out" 2> "$TMP/nvtx.err" || rc=$?
  [ "$rc" -eq 7 ] && [ "$(cat "$TMP/nvtx.out")" = "app: nvtx" ] || fail "NVTX app changed (rc $rc)"
  if [ $v = 0 ]; then
    [ ! -s "$TMP/nvtx.err" ] || fail "NVTX: stderr without verbose: $(cat "$TMP/nvtx.err")"
  else
    grep -q "NVTX: handing the NVTX injection to CUPTI" "$TMP/nvtx.err" ||
      fail "NVTX injection not forwarded: $(cat "$TMP/nvtx.err")"
  fi
done
echo "PASS: t_cupti_inject"
