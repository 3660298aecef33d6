#!/usr/bin/env bash
# t_py_stacks: Python stacks read in the kernel from CPython's own frames,
# against programs that know their own lines and time themselves.
#
#   1. the line-table decoder (user/python/py_lines.c) against each
#      interpreter's own co_lines() for every instruction of a set of code
#      objects (tests/progs/py_lines_gen.py | build/tests/py_lines_check):
#      0 mismatches, per Python version found (3.10-3.13);
#   2. tests/progs/py_sites.py, a loop over a Dataset that reads through
#      three functions at known lines (a plain read, a memory-mapped slice,
#      a socket fetch) plus a label file read by the loop, timing each
#      next(): traced with --stacks under each Python version found (its
#      worker processes forked), then with Debian's python3 with reader
#      threads, with no workers, with the default stacks (sleeps and
#      samples only), and attached to mid-run; tests/checks/sites_truth.py
#      compares the report's call sites, busy function and time inside
#      next() with the program's own (see there).
# A Python version that is not installed is skipped with its name.
source "$(dirname "$0")/lib.sh"
need_root
[ -x "$GPUIO_TESTS/py_lines_check" ] || fail "build/tests/py_lines_check not built (make test-progs)"
PROG=$GPUIO_SRC/tests/progs/py_sites.py

# the interpreters: Debian's, then any 3.10-3.13 on PATH or built with pyenv
find_pythons
pythons=("${PYTHONS[@]}")
[ ${#pythons[@]} -gt 0 ] || skip "no Python 3.10-3.13 here"
DEB_PY=/usr/bin/python3
[ -x "$DEB_PY" ] || DEB_PY=${pythons[0]}

# ---- 1. the line tables
for py in "${pythons[@]}"; do
  "$py" "$GPUIO_SRC/tests/progs/py_lines_gen.py" >"$TMP/lines.txt" || fail "$py py_lines_gen.py failed"
  "$GPUIO_TESTS/py_lines_check" <"$TMP/lines.txt" >"$TMP/lines.out" ||
    { cat "$TMP/lines.out"; fail "$py: the line decoder disagrees with the interpreter"; }
  echo "lines $("$py" -V 2>&1): $(tail -n1 "$TMP/lines.out")"
done

# ---- 2. the program of known structure
DATA=$TMP/data
mkdir -p "$DATA"
for i in 0 1 2 3 4 5 6 7; do
  head -c 262144 /dev/urandom >"$DATA/plain-$i.bin"
  head -c 262144 /dev/urandom >"$DATA/mapped-$i.bin"
done
head -c 5000 /dev/urandom >"$DATA/labels.csv"
# data-bound: the workers' decoding (48 rounds) outlasts a step (2 ms sync)
ARGS=(--data "$DATA" --steps 48 --rounds 48 --sync-ms 2)

# sites NAME PYTHON MODE STACKS [trace options]: launch, report, check
sites() {
  local name=$1 py=$2 mode=$3 stacks=$4; shift 4
  "$GPUIO" trace -q --no-export --capture "$TMP/$name.gpuio" "$@" -- \
    "$py" "$PROG" "${ARGS[@]}" --mode "$mode" --out "$TMP/$name.json" >"$TMP/$name.log" 2>&1 ||
    { tail -n 30 "$TMP/$name.log"; fail "$name: gpuio trace -- py_sites.py failed"; }
  check_sites "$name" "$mode" "$stacks"
}
check_sites() {
  local name=$1 mode=$2 stacks=$3
  "$GPUIO" report --json --files all "$TMP/$name.gpuio" >"$TMP/$name.report.json" ||
    fail "$name: gpuio report failed"
  echo "== $name ($("$GPUIO" info "$TMP/$name.gpuio" | grep -o 'stacks=[a-z,]* samples=[0-9a-zA-Z]*'))"
  pycheck sites_truth.py_sites "$mode" "$stacks" "$TMP/$name.json" "$TMP/$name.report.json" ||
    fail "$name: the report's Python sites or next() disagree with the program (FAIL above)"
}

for py in "${pythons[@]}"; do
  sites "workers-$(basename "$py")" "$py" workers all --stacks
done
sites threads "$DEB_PY" threads all --stacks
sites none "$DEB_PY" none all --stacks
sites default "$DEB_PY" workers sleeps

# attached to mid-run (its interpreter found in a running process), default stacks
rm -f "$TMP/go"
spawn -l "$TMP/attach.log" py_sites "$DEB_PY" "$PROG" "${ARGS[@]}" --mode workers \
  --wait-file "$TMP/go" --out "$TMP/attach.json"
SPID=$SPAWNED
wait_line -m "attach: py_sites.py never got to its wait" "waiting for" "$TMP/attach.log"
spawn -e "$TMP/attach.err" gpuio "$GPUIO" trace -p "$SPID" --no-export --capture "$TMP/attach.gpuio"
GPID=$SPAWNED
wait_line -m "attach: gpuio never started tracing" tracing "$TMP/attach.err"
touch "$TMP/go"
wait "$SPID" || { tail -n 30 "$TMP/attach.log"; fail "attach: py_sites.py failed"; }
wait "$GPID" || { cat "$TMP/attach.err"; fail "attach: gpuio trace -p exited non-zero"; }
check_sites attach workers sleeps

# the page: the loop's next() and its lines, in headless Chromium
"$GPUIO" report --html "$TMP/sites.html" "$TMP/none.gpuio" || fail "report --html failed"
for want in "in next() at $PROG:" "its producers&#39; reads, faults and receives, by line" \
            "its producers&#39; CPU, by function"; do
  grep -qF "$want" "$TMP/sites.html" || fail "the page lacks '$want'"
done
page_loads "$TMP/sites.html"
echo "PASS"
