#!/usr/bin/env bash
# t_unit: the unit tests of libgpuio.a (tests/unit/): lane assignment, the
# clock anchor and capture header, the header's attach layers and the drop
# counters, the capture writer and reader, the maps parser, number and name
# parsing, the key map, the report's file roles, the Python stacks' images,
# the live stream's arrows (its streams must also pass check_trace: no arrow
# ends where none starts). Each prints its checks.
source "$(dirname "$0")/lib.sh"
shopt -s nullglob
bins=("$GPUIO_TESTS"/unit/unit_*)
[ ${#bins[@]} -ge 6 ] || fail "unit tests not built (make test-progs): ${bins[*]}"
rc=0
mkdir -p "$TMP/stream"
for b in "${bins[@]}"; do
  arg=()
  [ "$(basename "$b")" = unit_stream ] && arg=("$TMP/stream")
  "$b" "${arg[@]}" || { echo "FAIL: $(basename "$b")"; rc=1; }
done
n=0
for f in "$TMP"/stream/*.pftrace; do
  $CHECK "$f" > /dev/null || { echo "FAIL: check_trace rejects $(basename "$f")"; rc=1; }
  n=$((n + 1))
done
[ $n -ge 4 ] || { echo "FAIL: unit_stream left $n streams, want 4"; rc=1; }
[ $rc -eq 0 ] || fail "a unit test failed"
