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
export PYTHONPATH="$GPUIO_SRC/tests"

"$ABI" | sort > "$TMP/c.layout"
python3 "$GPUIO_SRC/tests/gpu_records.py" --layout | sort > "$TMP/py.layout"
diff "$TMP/c.layout" "$TMP/py.layout" || fail "gpu_records.py layout differs from the C structs (< C, > Python)"
[ "$(wc -l < "$TMP/c.layout")" -gt 90 ] || fail "layout list too short"

"$UNIT" clock > "$TMP/clock.out" || { cat "$TMP/clock.out"; fail "clock math"; }
"$UNIT" names > "$TMP/names.out" || { cat "$TMP/names.out"; fail "API names"; }
"$UNIT" pool > "$TMP/pool.out" || { cat "$TMP/pool.out"; fail "CUPTI buffers"; }
mkdir "$TMP/short"
"$UNIT" short "$TMP/short" > "$TMP/short.out" || { cat "$TMP/short.out"; fail "full disk"; }
python3 - "$TMP/short/short.gpuio" <<'PY' || fail "side file after a full disk is not whole records"
import sys, gpu_records as g
_, recs = g.read(sys.argv[1])
assert [r["correlation"] for r in recs] == [0, 1, 2, 3, 4, 5, 6, 28, 29], recs
PY

mkdir "$TMP/fork"
"$UNIT" fork "$TMP/fork" > "$TMP/fork.out" || { cat "$TMP/fork.out"; fail "fork case"; }
read -r _ parent c1 c2 < <(grep '^pids ' "$TMP/fork.out") || fail "fork case printed no pids"
for p in "$parent" "$c1" "$c2"; do
  [ "$(cat "$TMP/fork/flushes.$p")" = "$([ "$p" = "$parent" ] && echo 1 || echo 0)" ] ||
    fail "pid $p ran $(cat "$TMP/fork/flushes.$p") CUPTI flushes at exit"
done
[ ! -e "$TMP/fork/cupti.$c1.gpuio" ] || fail "a child without GPU activity created a side file"
python3 - "$TMP/fork" "$parent" "$c2" <<'PY' || fail "fork: side files"
import sys, gpu_records as g
d, parent, child = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def summary(pid):
    hdr, recs = g.read("%s/cupti.%d.gpuio" % (d, pid))
    assert hdr["tracer_pid"] == pid and all(r["pid"] == pid for r in recs), (pid, recs)
    return [(r["type_name"], r.get("correlation"), r.get("state")) for r in recs]

p = summary(parent)
assert [c for t, c, _ in p if t == "gpu_kernel"] == [1, 2], p     # each once, in order
assert p[-1] == ("gpu_info", None, g.GPU_FINAL), p
c = summary(child)
assert [x for x in c if x[0] == "gpu_kernel"] == [("gpu_kernel", 3, None)], c
assert c[0] == ("gpu_info", None, g.GPU_ON) and c[-1] == ("gpu_info", None, g.GPU_FINAL), c
PY
# the tracer unlinks the side file at the end of its trace: the collector stops;
# a later attach writes a new file with only the new session's records
mkdir "$TMP/unlink"
"$UNIT" unlink "$TMP/unlink" > "$TMP/unlink.out" || { cat "$TMP/unlink.out"; fail "unlink case"; }
second=$(sed -n 's/^path //p' "$TMP/unlink.out")
[ "$(ls "$TMP/unlink")" = "$(basename "$second")" ] || fail "unlink: files $(ls "$TMP/unlink")"
python3 - "$second" <<'PY' || fail "unlink: second session's file"
import sys, gpu_records as g
_, recs = g.read(sys.argv[1])
s = [(r["type_name"], r.get("correlation"), r.get("state"), r.get("how")) for r in recs]
assert s == [("gpu_info", None, g.GPU_ON, g.HOW_ATTACH), ("gpu_kernel", 3, None, None),
             ("gpu_info", None, g.GPU_ON, g.HOW_ATTACH),
             ("gpu_info", None, g.GPU_FINAL, g.HOW_ATTACH)], s
PY
# idle when its trace ended (no buffer saw the unlink): a new attach moves the
# live session to a new file, which holds only the new trace's records
mkdir "$TMP/idle"
"$UNIT" idle "$TMP/idle" > "$TMP/idle.out" || { cat "$TMP/idle.out"; fail "idle case"; }
second=$(sed -n 's/^path //p' "$TMP/idle.out")
[ "$(ls "$TMP/idle")" = "$(basename "$second")" ] || fail "idle: files $(ls "$TMP/idle")"
python3 - "$second" <<'PY' || fail "idle: second session's file"
import sys, gpu_records as g
_, recs = g.read(sys.argv[1])
s = [(r["type_name"], r.get("correlation"), r.get("state"), r.get("how")) for r in recs]
assert s == [("gpu_info", None, g.GPU_ON, g.HOW_ATTACH), ("gpu_kernel", 3, None, None),
             ("gpu_info", None, g.GPU_ON, g.HOW_ATTACH),
             ("gpu_info", None, g.GPU_FINAL, g.HOW_ATTACH)], s
PY
echo "PASS: t_cupti_unit"
