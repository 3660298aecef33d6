#!/usr/bin/env bash
# t_report_gpu: GPU idle time explained, on captures with known answers.
#
# tests/report_gen.py writes the host side (VFS reads, a checkpoint, an
# unrelated process) at known times; the GPU side (kernels, a copy that
# overlaps a kernel, a cudaDeviceSynchronize) comes from cupti_synth — the
# collector's real conversion path — when it is built, and is also packed by
# report_gen.py itself, so both variants are checked. The expected answers
# (report_gen.GPU_IDLE_EXPECT) are exact, in ns:
#   busy 60 of 150 ms; idle 90 ms = reads 23 + writes/fsync 21 + CUDA sync 25
#   + other 21; gaps overlapping reads name those files (A 18 ms, B 8, C 2);
#   another process's read during a gap and a read while kernels run count
#   for nothing; the checkpoint costs 23 ms of GPU time; recommendations
#   "loader" and "async_checkpoint" come with their numbers.
source "$(dirname "$0")/lib.sh"
export GPUIO_SRC
GEN="python3 $GPUIO_SRC/tests/report_gen.py"

variants=(packed)
SYNTH="$GPUIO_TESTS/cupti_synth"
if [ -x "$SYNTH" ]; then
  $GEN gpu-spec >"$TMP/gpu.spec"
  "$SYNTH" "$TMP/gpu.spec" -o "$TMP/side.gpuio" >/dev/null || fail "cupti_synth failed"
  variants+=(cupti_synth)
else
  echo "note: $SYNTH not built: GPU records packed by report_gen.py only"
fi

for v in "${variants[@]}"; do
  if [ "$v" = cupti_synth ]; then
    $GEN gpu-idle "$TMP/$v.gpuio" --side "$TMP/side.gpuio"
  else
    $GEN gpu-idle "$TMP/$v.gpuio"
  fi
  "$GPUIO" report --json --files all "$TMP/$v.gpuio" >"$TMP/$v.json" || fail "$v: report --json failed"
  "$GPUIO" report "$TMP/$v.gpuio" >"$TMP/$v.txt" || fail "$v: report failed"
  python3 - "$TMP/$v.json" "$v" <<'EOF' || fail "$v: GPU idle attribution is wrong"
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["GPUIO_SRC"], "tests"))
from report_gen import GPU_IDLE_EXPECT as X, ANCHOR_MONO
rep, variant = json.load(open(sys.argv[1])), sys.argv[2]
MS = 1000.0   # report times are µs
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + f"[{variant}] " + msg)
    bad += not cond
g = rep["gpu"]
check(g["present"] and len(g["devices"]) == 1, "one GPU device")
d = g["devices"][0]
check(d["pid"] == 100 and d["device"] == 0, f"GPU 0 of pid 100 ({d['pid']}, {d['device']})")
check(d["busy_us"] == X["busy_ms"] * MS and d["span_us"] == X["span_ms"] * MS,
      f"busy {d['busy_us']} of {d['span_us']} us")
check(abs(d["busy_fraction"] - 0.4) < 1e-9, f"busy fraction {d['busy_fraction']}")
check(d["idle_us"] == X["idle_ms"] * MS and d["gaps"] == X["gaps"], f"idle {d['idle_us']} us in {d['gaps']} gaps")
want = {k: v * MS for k, v in X["cause_ms"].items()}
check(d["idle_by_cause_us"] == want, f"idle by cause {d['idle_by_cause_us']} == {want}")
check(g["idle_by_cause_us"] == want, "totals over devices agree")
files = {f["path"]: f for f in rep["files"]}
for p, ms in X["file_read_ms"].items():
    check(files[p]["gpu_idle_read_us"] == ms * MS, f"{p}: read while GPU idle {files[p]['gpu_idle_read_us']} us == {ms} ms")
gaps = [(round(x["start_ts_us"] / MS), round(x["dur_us"] / MS)) for x in g["largest_gaps"]]
check(gaps == X["largest_gaps"], f"largest gaps {gaps}")
for x in g["largest_gaps"]:
    start = round(x["start_ts_us"] / MS)
    if start in X["gap_files"]:
        got = {f["path"]: f["read_us"] / MS for f in x["files"]}
        check(got == X["gap_files"][start], f"gap at {start} ms reads {got}")
    check("start_utc" in x, "gaps carry wall-clock time too")
ck = rep["checkpoints"]
c = X["checkpoint"]
check(len(ck) == 1 and ck[0]["path"] == c["path"] and ck[0]["bytes"] == c["bytes"]
      and ck[0]["start_ts_us"] == c["start_ms"] * MS and ck[0]["dur_us"] == c["dur_ms"] * MS
      and ck[0]["gpu_idle_us"] == c["gpu_idle_ms"] * MS, f"checkpoint {ck}")
kinds = {r["kind"] for r in rep["recommendations"]}
check(X["recommendations"] <= kinds, f"recommendations {sorted(kinds)}")
for r in rep["recommendations"]:
    check(any(ch.isdigit() for ch in r["evidence"]), f"[{r['kind']}] has numbers: {r['evidence']}")
check(rep["monotonic_base_ns"] == ANCHOR_MONO, "time base is the capture's anchor")
sys.exit(1 if bad else 0)
EOF
  grep -q "GPU 0 of pid 100 (python3): busy 40.0% of 150.0 ms; idle 90.00 ms: file reads 23.00 ms" "$TMP/$v.txt" || { cat "$TMP/$v.txt"; fail "$v: no GPU headline"; }
  grep -q "ts=120000.000us" "$TMP/$v.txt" || fail "$v: largest gap not printed with its ts"
done
sed -n '1,40p' "$TMP/packed.txt"
echo "PASS: GPU idle gaps are attributed exactly (${variants[*]})"
