#!/usr/bin/env bash
# t_native_frames: native (C) frames before the Python ones, by frame
# pointers, against a program that knows its own call chain.
#
# tests/progs/native_frames.py calls, through ctypes from one line of its
# own, native_outer -> native_mid -> native_leaf_read of a library built
# with frame pointers (tests/progs/native_lib.c), which reads 4 KiB of a
# file by its own syscall instruction, N times. Traced with --stacks under
# each Python 3.10-3.13 found, then with --no-native-frames;
# tests/checks/native_truth.py checks every read's stack in the JSON export
# (the three functions of the library's file, innermost first, then only
# native frames of other files, then the program's line, its site), the
# report's call site and chain for the file, and both exports import.
source "$(dirname "$0")/lib.sh"
need_root
[ "$(uname -m)" = x86_64 ] || skip "the library's read is an x86-64 syscall instruction"
LIB=$GPUIO_TESTS/native_lib
[ -e "$LIB" ] || fail "build/tests/native_lib not built (make test-progs)"
PROG=$GPUIO_SRC/tests/progs/native_frames.py
find_pythons
[ ${#PYTHONS[@]} -gt 0 ] || skip "no Python 3.10-3.13 here"
head -c 65536 /dev/urandom >"$TMP/data.bin"
CALLS=64

# run NAME PYTHON NATIVE(on|off) [trace options]
run() {
  local name=$1 py=$2 native=$3; shift 3
  "$GPUIO" trace -q -o "$TMP/$name.json" --capture "$TMP/$name.gpuio" --stacks "$@" -- \
    "$py" "$PROG" --lib "$LIB" --data "$TMP/data.bin" --calls "$CALLS" --out "$TMP/$name.prog.json" \
    >"$TMP/$name.log" 2>&1 || { cat "$TMP/$name.log"; fail "$name: gpuio trace failed"; }
  check_struct "$TMP/$name.json"
  "$GPUIO" convert -q "$TMP/$name.gpuio" -o "$TMP/$name.pftrace" || fail "$name: convert to .pftrace failed"
  check_struct "$TMP/$name.pftrace"
  echo "== $name ($("$py" -V 2>&1), native frames $native)"
  pycheck native_truth.exports "$TMP/$name.prog.json" "$TMP/$name.json" "$native" ||
    fail "$name: the reads' stacks are not the program's"
  if [ "$native" = on ]; then
    "$GPUIO" report --json "$TMP/$name.gpuio" >"$TMP/$name.report.json" || fail "$name: report failed"
    pycheck native_truth.report "$TMP/$name.prog.json" "$TMP/$name.report.json" ||
      fail "$name: the report's call site is not the program's"
  fi
}

for py in "${PYTHONS[@]}"; do
  run "py$("$py" -c 'import sys; print("%d%d" % sys.version_info[:2])')" "$py" on
done
run off "${PYTHONS[0]}" off --no-native-frames
echo "PASS"
