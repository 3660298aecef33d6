#!/usr/bin/env bash
# t_checks_unit: the unit tests of tests/checks/ (test_*.py): the parts of the
# tests' Python checks that compute truth (attach_reader's log windows, fio's
# per-job totals and filefrag's extents, the open-flag names and call matcher,
# gen_capture's timeline origin and counter integrals, the UTF-8 replacement
# rule, protoc's text format, the PNG decoder, schedstat tolerances and the
# state matcher, the Prometheus parser, the capture record walker, PromQL
# name extraction, the DataLoader step counts, the job shapes' window
# clipping and report checks on right and broken hand-made reports) are
# checked on inputs with known answers. Also: every check module imports, and every function a
# test calls with pycheck exists.
source "$(dirname "$0")/lib.sh"
cd "$GPUIO_SRC/tests"
python3 -m unittest discover -s checks -t . -v > "$TMP/unit.out" 2>&1 || { cat "$TMP/unit.out"; fail "unit tests of tests/checks"; }
grep -E '^(Ran|OK)' "$TMP/unit.out"
n=$(grep -c ' \.\.\. ok$' "$TMP/unit.out")
[ "$n" -ge 30 ] || { cat "$TMP/unit.out"; fail "only $n unit tests ran"; }

# every pycheck MODULE.FUNCTION in the tests names a function that exists
grep -ohE 'pycheck [a-z_]+\.[a-z_0-9]+' t_*.sh *_lib.sh lib.sh | sort -u | cut -d' ' -f2 > "$TMP/calls"
[ -s "$TMP/calls" ] || fail "no pycheck calls found"
pycheck common.checks_exist "$TMP/calls" || fail "a test calls a check that does not exist"
echo "PASS t_checks_unit: $n unit tests"
