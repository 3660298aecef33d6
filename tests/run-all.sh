#!/usr/bin/env bash
# Run every tests/t_*.sh (or those named on the command line). Each test exits
# 0 = pass, 77 = skipped (it prints why), anything else = fail.
set -u
cd "$(dirname "$0")/.."
export GPUIO="${GPUIO:-$PWD/build/gpuio}"
export GPUIO_TESTS="$PWD/build/tests"
export GPUIO_SRC="$PWD"
pass=0 fail=0 skip=0 failed=()
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(tests/t_*.sh)
start=$(date +%s)
for t in "${tests[@]}"; do
  name=$(basename "$t" .sh)
  t0=$(date +%s)
  log=$(mktemp)
  bash "$t" >"$log" 2>&1
  rc=$?
  dt=$(( $(date +%s) - t0 ))
  case $rc in
    0)  pass=$((pass+1)); echo "PASS $name (${dt}s)" ;;
    77) skip=$((skip+1)); echo "SKIP $name: $(grep -m1 -i 'skip' "$log" || tail -n1 "$log")" ;;
    *)  fail=$((fail+1)); failed+=("$name"); echo "FAIL $name (rc=$rc, ${dt}s)"
        # the failed checks wherever they are, then the end of the log
        grep -E '^(FAIL|not ok)|^ *FAIL ' "$log" | head -n 20 | sed 's/^/  ! /'
        sed 's/^/    /' "$log" | tail -n 40 ;;
  esac
  rm -f "$log"
done
echo "total time $(( $(date +%s) - start ))s"
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
