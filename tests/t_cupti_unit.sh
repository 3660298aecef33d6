#!/usr/bin/env bash
# CUPTI collector internals, without a GPU:
#   - the Python decoder's struct layouts (tests/gpu_records.py) equal the C
#     compiler's for bpf/gpuio_abi.h and user/capture/capture.h (cupti_abi);
#   - clock offset math with fake clocks (tightest window, signs, 0 stays 0);
#   - API classification and the noise list;
#   - CUPTI always gets a buffer (recycled; emergency ones when malloc fails);
#   - a side file on a filesystem that fills up keeps whole records only
#     and counts what it lost;
#   - fork during collection: the child neither flushes the parent's data nor
#     writes the parent's file; a child with GPU activity of its own gets its
#     own file; the parent's file stays whole and ends with FINAL;
#   - the tracer unlinking the side file stops the collector (activity
#     disabled, unsubscribed); a later attach starts a fresh session.
source "$(dirname "$0")/lib.sh"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
[ -f "$CUDA_HOME/include/cupti.h" ] || skip "CUDA/CUPTI not installed ($CUDA_HOME)"
UNIT="$GPUIO_TESTS/cupti_unit"
ABI="$GPUIO_TESTS/cupti_abi"
[ -x "$UNIT" ] && [ -x "$ABI" ] || fail "missing $UNIT or $ABI (run: make test-progs)"

"$ABI" | sort > "$TMP/c.layout"
python3 "$GPUIO_SRC/tests/gpu_records.py" --layout | sort > "$TMP/py.layout"
diff "$TMP/c.layout" "$TMP/py.layout" || fail "gpu_records.py layout differs from the C structs (< C, > Python)"
[ "$(wc -l < "$TMP/c.layout")" -gt 90 ] || fail "layout list too short"

"$UNIT" clock > "$TMP/clock.out" || { cat "$TMP/clock.out"; fail "clock math"; }
"$UNIT" names > "$TMP/names.out" || { cat "$TMP/names.out"; fail "API names"; }
"$UNIT" pool > "$TMP/pool.out" || { cat "$TMP/pool.out"; fail "CUPTI buffers"; }
mkdir "$TMP/short"
"$UNIT" short "$TMP/short" > "$TMP/short.out" || { cat "$TMP/short.out"; fail "full disk"; }
pycheck cupti_records.unit_short "$TMP/short/short.gpuio" || fail "side file after a full disk is not whole records"

mkdir "$TMP/fork"
"$UNIT" fork "$TMP/fork" > "$TMP/fork.out" || { cat "$TMP/fork.out"; fail "fork case"; }
read -r _ parent c1 c2 < <(grep '^pids ' "$TMP/fork.out") || fail "fork case printed no pids"
for p in "$parent" "$c1" "$c2"; do
  [ "$(cat "$TMP/fork/flushes.$p")" = "$([ "$p" = "$parent" ] && echo 1 || echo 0)" ] ||
    fail "pid $p ran $(cat "$TMP/fork/flushes.$p") CUPTI flushes at exit"
done
[ ! -e "$TMP/fork/cupti.$c1.gpuio" ] || fail "a child without GPU activity created a side file"
pycheck cupti_records.unit_fork "$TMP/fork" "$parent" "$c2" || fail "fork: side files"
# the tracer unlinks the side file at the end of its trace: the collector stops;
# a later attach writes a new file with only the new session's records
mkdir "$TMP/unlink"
"$UNIT" unlink "$TMP/unlink" > "$TMP/unlink.out" || { cat "$TMP/unlink.out"; fail "unlink case"; }
second=$(sed -n 's/^path //p' "$TMP/unlink.out")
[ "$(ls "$TMP/unlink")" = "$(basename "$second")" ] || fail "unlink: files $(ls "$TMP/unlink")"
pycheck cupti_records.unit_second_session "$second" || fail "unlink: second session's file"
# idle when its trace ended (no buffer saw the unlink): a new attach moves the
# live session to a new file, which holds only the new trace's records
mkdir "$TMP/idle"
"$UNIT" idle "$TMP/idle" > "$TMP/idle.out" || { cat "$TMP/idle.out"; fail "idle case"; }
second=$(sed -n 's/^path //p' "$TMP/idle.out")
[ "$(ls "$TMP/idle")" = "$(basename "$second")" ] || fail "idle: files $(ls "$TMP/idle")"
pycheck cupti_records.unit_second_session "$second" || fail "idle: second session's file"
echo "PASS: t_cupti_unit"
