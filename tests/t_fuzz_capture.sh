#!/usr/bin/env bash
# Fuzz the capture reader, the JSON exporter and `gpuio info` with libFuzzer
# (ASan + UBSan) for a bounded time (FUZZ_SECONDS, default 30). Seeds are
# gen_capture's captures, whole and without their header (the target puts a
# valid header in front of inputs that lack the magic). Any crash, leak,
# sanitizer report or timeout fails; the reproducer is kept under
# build/fuzz-crashes/.
source "$(dirname "$0")/lib.sh"
FUZZ="$GPUIO_TESTS/fuzz_capture"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$FUZZ" ] || skip "fuzz_capture not built: libFuzzer missing (apt-get install libclang-rt-14-dev, then make test-progs)"
secs=${FUZZ_SECONDS:-30}

mkdir -p "$TMP/seeds" "$TMP/work"
for mode in basic hostile flows truncate corrupt gpu; do
  "$GEN" "$mode" "$TMP/seeds/$mode.gpuio" > /dev/null || fail "gen_capture $mode"
done
"$GEN" big "$TMP/seeds/big.gpuio" 40 > /dev/null || fail "gen_capture big"
for f in "$TMP"/seeds/*.gpuio; do
  # header_size is the u32 at byte 12; records alone make a second seed
  hs=$(python3 -c 'import struct,sys; print(struct.unpack("<I", open(sys.argv[1],"rb").read(16)[12:16])[0])' "$f")
  tail -c +$((hs + 1)) "$f" > "${f%.gpuio}.records"
done

crashdir="$GPUIO_SRC/build/fuzz-crashes"
mkdir -p "$crashdir"
rc=0
# -rss_limit: the exporter's memory is bounded by the input; 2 GB means a leak
TMPDIR="$TMP" "$FUZZ" -max_total_time="$secs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$crashdir/" "$TMP/work" "$TMP/seeds" \
  > "$TMP/fuzz.log" 2>&1 || rc=$?
grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units)" "$TMP/fuzz.log" | head -n 2
if [ "$rc" -ne 0 ]; then
  grep -E "ERROR|SUMMARY|runtime error|Test unit written|ABORT|crash" "$TMP/fuzz.log" | head -n 20
  tail -n 30 "$TMP/fuzz.log"
  fail "fuzz_capture found a failure (rc=$rc); reproduce with: $FUZZ $crashdir/<file>"
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/fuzz.log")
[ "${runs:-0}" -gt 100 ] || { tail -n 20 "$TMP/fuzz.log"; fail "the fuzzer barely ran (${runs:-0} inputs)"; }
echo "fuzzed ${runs} inputs in ${secs}s without a failure"
