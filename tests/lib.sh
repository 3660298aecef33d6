# tests/lib.sh — sourced by every tests/t_*.sh: paths, $TMP, fail/skip,
# the trace checks, and tests/lib/: the process registry, the EXIT trap and
# the wait helpers (lib/proc.sh), Perfetto's importer (lib/tp.sh). Python
# checks live in tests/checks/ (pycheck MODULE.FUNCTION ARGS).
set -euo pipefail
GPUIO="${GPUIO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/gpuio}"
GPUIO_TESTS="${GPUIO_TESTS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/tests}"
GPUIO_SRC="${GPUIO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
CHECK="python3 $GPUIO_SRC/tests/check_trace.py"
TMP=$(mktemp -d /tmp/gpuio-test.XXXXXX)
# the one EXIT trap: registered processes, on_exit commands, then rm -rf $TMP
source "$(dirname "${BASH_SOURCE[0]}")/lib/proc.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/tp.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }
# has ARGS...: grep ARGS over all of stdin. Use it after a pipe, not grep -q:
# grep -q exits at the first match, and with pipefail the writer's SIGPIPE
# then fails the pipeline when its output is longer than one pipe buffer
has() { grep "$@" >/dev/null; }
# find_pythons: PYTHONS=(each CPython 3.10-3.13 on PATH or built with pyenv),
# a line said for each version that is not installed
find_pythons() {
  local v p c
  PYTHONS=()
  for v in 10 11 12 13; do
    p=$(command -v "python3.$v" 2>/dev/null || true)
    case $p in */shims/*) p= ;; esac   # a pyenv shim is a shell script
    for c in /root/.pyenv/versions/3."$v".*/bin/python3."$v"; do
      [ -z "$p" ] && [ -x "$c" ] && p=$c
    done
    if [ -n "$p" ]; then PYTHONS+=("$p"); else echo "skip: python3.$v not installed"; fi
  done
}
# pycheck MODULE.FUNCTION ARG...: a check of tests/checks/MODULE.py (checks/run.py)
pycheck() { python3 "$GPUIO_SRC/tests/checks/run.py" "$@"; }
# the node's steal time so far, in seconds (the hypervisor ran something else
# on a vCPU: on a CPU by the clock, not by the task clock schedstat counts)
node_steal_s() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.3f\n", $9 / hz }' /proc/stat; }

# check_struct TRACE: the project checker accepts TRACE, and so does Perfetto's
# importer (tp_check), else fail with their message
check_struct() {
  $CHECK "$1" >"$TMP/check.out" 2>&1 || { cat "$TMP/check.out"; fail "check_trace.py rejected $1"; }
  tp_check "$1"
}
# page_loads HTML: headless Chromium runs the report page's script (its
# charts drawn, no script or console error), else fail; said and passed where
# Chromium is not installed
page_loads() {
  local chrome
  chrome=$(command -v chromium || command -v chromium-browser || true)
  if [ -z "$chrome" ]; then
    echo "html: chromium not installed: the page was not loaded (apt-get install chromium)"
    return 0
  fi
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$TMP/profile" --enable-logging=stderr --v=0 --virtual-time-budget=3000 \
    --dump-dom "file://$1" >"$TMP/dom.html" 2>"$TMP/chrome.err" ||
    { tail -20 "$TMP/chrome.err"; fail "chromium --dump-dom $1 failed"; }
  grep -q 'data-charts="[1-9]' "$TMP/dom.html" || fail "$1: the page's script did not run"
  grep -q 'data-js-errors="' "$TMP/dom.html" && fail "$1: script errors in the page"
  if grep -E 'CONSOLE|Uncaught|SyntaxError' "$TMP/chrome.err"; then fail "$1: console errors"; fi
  echo "html: loads in Chromium, $(grep -o 'data-charts="[0-9]*"' "$TMP/dom.html")"
}
# tp_check TRACE: Perfetto's own importer takes TRACE with no error/data_loss
# stats and the slice/flow/counter counts the file holds (tests/tp_check.py;
# said and passed where the importer is absent: lib/tp.sh)
tp_check() {  # [--part] TRACE
  python3 "$GPUIO_SRC/tests/tp_check.py" "$@" > "$TMP/tp.out" 2>&1 || {
    cat "$TMP/tp.out"
    # GPUIO_KEEP_FAILED=DIR keeps the rejected trace for a look after $TMP is gone
    [ -n "${GPUIO_KEEP_FAILED:-}" ] && mkdir -p "$GPUIO_KEEP_FAILED" && cp "${@: -1}" "$GPUIO_KEEP_FAILED/"
    fail "Perfetto's importer: $*"
  }
  cat "$TMP/tp.out"
}
