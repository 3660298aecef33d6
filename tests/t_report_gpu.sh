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
  pycheck report_truth.gpu_idle "$TMP/$v.json" "$v" || fail "$v: GPU idle attribution is wrong"
  grep -q "GPU 0 of pid 100 (python3): busy 40.0% of 150.0 ms; idle 90.00 ms: file reads 23.00 ms" "$TMP/$v.txt" || { cat "$TMP/$v.txt"; fail "$v: no GPU headline"; }
  grep -q "ts=120000.000us" "$TMP/$v.txt" || fail "$v: largest gap not printed with its ts"
done
sed -n '1,40p' "$TMP/packed.txt"
echo "PASS: GPU idle gaps are attributed exactly (${variants[*]})"
