#!/usr/bin/env bash
# GPU records (CUPTI collector, CUDA uprobes) in both exports and in `gpuio
# info`, against gen_capture's ground truth (gen_capture gpu): every GPU-side
# slice exactly (category, name, track, ts and dur to the ns), the tracks
# ("GPU N" pseudo-processes, "GPU N · stream S" lanes where kernels overlap,
# the overlap lane of a host thread whose NVTX range does not nest), arrows
# from each launch/copy/memset API call to its activities by correlation id
# (a graph launch fans out to two kernels), one slice per call that CUPTI and
# a uprobe both saw (uprobe args merged in), kernel names for launches (by
# correlation, or by GPU_SYM for a launch only uprobes saw), the busy-fraction
# counters, collector status and CUPTI drops in the trace info. JSON and
# protobuf must be equal (compare_exports.py); check_trace.py must accept both
# and must reject a trace whose GPU lanes overlap or whose arrow points back
# in time. Merged (two hosts) and 2 captures keep GPU tracks apart.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$GPUIO" ] || fail "missing $GPUIO (run: make)"
CMP="python3 $GPUIO_SRC/tests/compare_exports.py"

"$GEN" gpu "$TMP/g.gpuio" > "$TMP/g.manifest" || fail "gen_capture gpu failed"
"$GPUIO" convert "$TMP/g.gpuio" -o "$TMP/g.json" 2> "$TMP/g.err" || { cat "$TMP/g.err"; fail "convert to JSON failed"; }
grep -q "7 dropped" "$TMP/g.err" || { cat "$TMP/g.err"; fail "convert does not say the GPU collector dropped 7 records"; }
"$GPUIO" convert -q "$TMP/g.gpuio" -o "$TMP/g.pftrace" || fail "convert to .pftrace failed"
$CMP "$TMP/g.json" "$TMP/g.pftrace" > "$TMP/g.cmp" 2>&1 || { cat "$TMP/g.cmp"; fail "JSON and protobuf differ"; }
echo "gpu: $(cat "$TMP/g.cmp")"
check_struct "$TMP/g.json"
check_struct "$TMP/g.pftrace"

pycheck export_gen.gpu "$TMP/g.manifest" "$TMP/g.json" "$TMP/g.pftrace" ||
  fail "the export differs from the generator's ground truth"

# gpuio info: counts per GPU record type, collectors, drops
"$GPUIO" info "$TMP/g.gpuio" > "$TMP/info.txt" || fail "gpuio info failed"
grep -q "^gpu records .*kernel 6, memcpy 5, memset 1, cuda_api 17" "$TMP/info.txt" || { cat "$TMP/info.txt"; fail "info: GPU record counts"; }
grep -q "^gpu drops    7 " "$TMP/info.txt" || { cat "$TMP/info.txt"; fail "info: CUPTI drops"; }
grep -q "pid 600: unavailable: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS" "$TMP/info.txt" || { cat "$TMP/info.txt"; fail "info: collector reason"; }
"$GPUIO" info --json "$TMP/g.gpuio" > "$TMP/info.json" || fail "gpuio info --json failed"
pycheck export_gen.gpu_info "$TMP/info.json" || fail "info --json: GPU fields"

# the checker can fail: overlapping GPU lane, an arrow back in time
pycheck export_gen.gpu_bad_traces "$TMP/g.json" "$TMP/bad1.json" "$TMP/bad2.json"
$CHECK "$TMP/bad1.json" > "$TMP/bad1.out" 2>&1 && fail "check_trace accepts overlapping kernels on one GPU lane"
grep -q "GPU slices overlap" "$TMP/bad1.out" || { cat "$TMP/bad1.out"; fail "bad1: wrong complaint"; }
$CHECK "$TMP/bad2.json" > "$TMP/bad2.out" 2>&1 && fail "check_trace accepts an activity before its API call"
grep -q "starts before its API call" "$TMP/bad2.out" || { cat "$TMP/bad2.out"; fail "bad2: wrong complaint"; }

# two hosts: GPU tracks, lanes and arrows stay apart
"$GEN" shift "$TMP/g2.gpuio" "$TMP/g.gpuio" 5000000 0 > /dev/null || fail "gen_capture shift failed"
"$GPUIO" merge -q "$TMP/g.gpuio" "$TMP/g2.gpuio" -o "$TMP/m.json" || fail "merge to JSON failed"
"$GPUIO" merge -q "$TMP/g.gpuio" "$TMP/g2.gpuio" -o "$TMP/m.pftrace" || fail "merge to .pftrace failed"
check_struct "$TMP/m.json"
$CMP --machines "$TMP/m.json" "$TMP/m.pftrace" > "$TMP/m.cmp" 2>&1 || { cat "$TMP/m.cmp"; fail "merged JSON and protobuf differ"; }
tp_check "$TMP/m.json"
tp_check "$TMP/m.pftrace"
pycheck export_gen.gpu_merged "$TMP/m.json" || fail "merge: GPU tracks"
# many launches, kernels delivered late and out of order: every kernel bound
"$GEN" gpubig "$TMP/b.gpuio" 20000 > /dev/null || fail "gen_capture gpubig failed"
"$GPUIO" convert -q "$TMP/b.gpuio" -o "$TMP/b.json" || fail "gpubig: convert to JSON failed"
"$GPUIO" convert -q "$TMP/b.gpuio" -o "$TMP/b.pftrace" || fail "gpubig: convert to .pftrace failed"
check_struct "$TMP/b.json"
$CMP "$TMP/b.json" "$TMP/b.pftrace" > "$TMP/b.cmp" 2>&1 || { cat "$TMP/b.cmp"; fail "gpubig: JSON and protobuf differ"; }
grep -q " 20000 flows" "$TMP/b.cmp" || { cat "$TMP/b.cmp"; fail "gpubig: not every kernel has its arrow"; }
echo "gpubig: $(cat "$TMP/b.cmp")"
echo "GPU records export as generated"
