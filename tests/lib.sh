# tests/lib.sh — sourced by every tests/t_*.sh.
set -euo pipefail
GPUIO="${GPUIO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/gpuio}"
GPUIO_TESTS="${GPUIO_TESTS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/tests}"
GPUIO_SRC="${GPUIO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
CHECK="python3 $GPUIO_SRC/tests/check_trace.py"
TMP=$(mktemp -d /tmp/gpuio-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }

# check_struct TRACE: the project checker accepts TRACE, and so does Perfetto's
# importer (tp_check), else fail with their message
check_struct() {
  $CHECK "$1" >"$TMP/check.out" 2>&1 || { cat "$TMP/check.out"; fail "check_trace.py rejected $1"; }
  tp_check "$1"
}
# wait_lines FILE N: until FILE has >= N lines (10 s at most)
wait_lines() {
  for _ in $(seq 200); do
    [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
    sleep 0.05
  done
  fail "$1 never reached $2 lines"
}
# tp_check TRACE: Perfetto's own importer takes TRACE with no error/data_loss
# stats and the slice/flow/counter counts the file holds (tests/tp_check.py;
# said and passed where ../shared/tools/trace_processor_shell is absent)
tp_check() {  # [--part] TRACE
  python3 "$GPUIO_SRC/tests/tp_check.py" "$@" > "$TMP/tp.out" 2>&1 || {
    cat "$TMP/tp.out"
    # GPUIO_KEEP_FAILED=DIR keeps the rejected trace for a look after $TMP is gone
    [ -n "${GPUIO_KEEP_FAILED:-}" ] && mkdir -p "$GPUIO_KEEP_FAILED" && cp "${@: -1}" "$GPUIO_KEEP_FAILED/"
    fail "Perfetto's importer: $*"
  }
  cat "$TMP/tp.out"
}
