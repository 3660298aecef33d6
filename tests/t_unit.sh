#!/usr/bin/env bash
# t_unit: the unit tests of libgpuio.a (tests/unit/): lane assignment, the
# clock anchor and capture header, the header's attach layers and the drop
# counters, the capture writer and reader, the maps parser, number and name
# parsing, the key map, the report's file roles, the Python stacks' images.
# Each prints its checks.
source "$(dirname "$0")/lib.sh"
shopt -s nullglob
bins=("$GPUIO_TESTS"/unit/unit_*)
[ ${#bins[@]} -ge 6 ] || fail "unit tests not built (make test-progs): ${bins[*]}"
rc=0
for b in "${bins[@]}"; do
  "$b" || { echo "FAIL: $(basename "$b")"; rc=1; }
done
[ $rc -eq 0 ] || fail "a unit test failed"
