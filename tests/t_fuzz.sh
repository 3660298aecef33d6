#!/usr/bin/env bash
# t_fuzz: libFuzzer (ASan + UBSan) over the three fuzz targets, each for a
# bounded time (FUZZ_SECONDS each, default 10; `make fuzz`: 600):
#   fuzz_reader  the capture reader and record sanitizer alone
#   fuzz_export  the model, both exporters and `gpuio info`
#   fuzz_report  `gpuio report` (text, JSON, HTML)
# Seeds: the committed corpus (tests/fuzz/corpus: synthetic and real captures
# of each kind), each also without its header (the targets put a valid
# header in front of inputs that lack the magic). Any crash, leak, sanitizer
# report or timeout fails; the reproducer is kept under build/fuzz-crashes/.
# Prints inputs run and inputs per second per target.
source "$(dirname "$0")/lib.sh"
secs=${FUZZ_SECONDS:-10}
[ -d "$GPUIO_SRC/tests/fuzz/corpus" ] || fail "no seed corpus (tests/fuzz/corpus)"
for t in reader export report; do
  [ -x "$GPUIO_TESTS/fuzz_$t" ] || skip "fuzz_$t not built: libFuzzer missing (apt-get install libclang-rt-14-dev, then make test-progs)"
done
mkdir -p "$TMP/seeds"
for f in "$GPUIO_SRC"/tests/fuzz/corpus/*.gpuio; do
  cp "$f" "$TMP/seeds/"
  # version and header_size are the u32s at bytes 8 and 12; records alone make a second seed
  # (version 2 records, frames, start with the fuzzers' marker byte 0xF2)
  read -r ver hs < <(python3 -c 'import struct,sys; print(*struct.unpack("<II", open(sys.argv[1],"rb").read(16)[8:16]))' "$f")
  { [ "$ver" = 2 ] && printf '\362'; tail -c +$((hs + 1)) "$f"; } > "$TMP/seeds/$(basename "$f" .gpuio).records"
done
# inputs that once failed (tests/fuzz/regress/): every run replays them first
for f in "$GPUIO_SRC"/tests/fuzz/regress/*; do
  case $f in *.md) ;; *) cp "$f" "$TMP/seeds/" ;; esac
done
crashdir="$GPUIO_SRC/build/fuzz-crashes"
mkdir -p "$crashdir"
for t in reader export report; do
  mkdir -p "$TMP/work-$t"
  rc=0
  # -rss_limit: memory is bounded by the input; 2 GB means a leak
  TMPDIR="$TMP" "$GPUIO_TESTS/fuzz_$t" -max_total_time="$secs" -max_len=65536 -timeout=20 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashdir/$t-" \
    "$TMP/work-$t" "$TMP/seeds" > "$TMP/fuzz-$t.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    grep -E "ERROR|SUMMARY|runtime error|Test unit written|ABORT|crash" "$TMP/fuzz-$t.log" | head -n 20
    tail -n 30 "$TMP/fuzz-$t.log"
    fail "fuzz_$t found a failure (rc=$rc); reproduce with: $GPUIO_TESTS/fuzz_$t $crashdir/$t-<file>"
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/fuzz-$t.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$TMP/fuzz-$t.log")
  [ "${runs:-0}" -gt 100 ] || { tail -n 20 "$TMP/fuzz-$t.log"; fail "fuzz_$t barely ran (${runs:-0} inputs)"; }
  echo "fuzz_$t: ${runs} inputs in ${secs}s (${rate}/s), no failure"
done
