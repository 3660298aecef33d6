#!/usr/bin/env bash
# Both exporters stream the capture: converting 2,000,000 VFS calls takes no
# more memory than converting 200,000 (peak RSS of `gpuio convert` by GNU
# time; flat = within 2 MiB), to .pftrace and to .json alike. Memory is
# bounded by files, threads, disks and block requests, never by the number of
# calls: the captures here have no block requests (gen_capture big N 0). The
# 2M protobuf is checked whole: every packet frames, and the convert summary
# counts 2,000,000 calls. `make bench` runs the same at 20,000,000 calls.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x /usr/bin/time ] || skip "GNU time not installed (apt-get install time): no peak RSS"
SMALL=${GPUIO_MEM_SMALL:-200000}
BIG=${GPUIO_MEM_BIG:-2000000}

"$GEN" big "$TMP/small.gpuio" "$SMALL" 0 > /dev/null || fail "gen_capture big $SMALL failed"
"$GEN" big "$TMP/big.gpuio" "$BIG" 0 > /dev/null || fail "gen_capture big $BIG failed"

# peak_rss CAPTURE OUT: KiB, the convert's own (not a wrapper's) maximum RSS
peak_rss() {
  /usr/bin/time -f %M -o "$2.rss" "$GPUIO" convert "$1" -o "$2" > /dev/null 2> "$2.err" \
    || { cat "$2.err"; return 1; }
  tail -n 1 "$2.rss"
}

for fmt in pftrace json; do
  s=$(peak_rss "$TMP/small.gpuio" "$TMP/small.$fmt") || fail "convert $SMALL to .$fmt failed"
  b=$(peak_rss "$TMP/big.gpuio" "$TMP/big.$fmt") || fail "convert $BIG to .$fmt failed"
  echo "$fmt: peak RSS $s KiB for $SMALL calls, $b KiB for $BIG calls"
  [ "$b" -le $((s + 2048)) ] || fail "$fmt: memory grows with the number of calls ($s -> $b KiB)"
  grep -q "($BIG vfs," "$TMP/big.$fmt.err" || { cat "$TMP/big.$fmt.err"; fail "$fmt: not $BIG calls exported"; }
  rm -f "$TMP/big.$fmt"
  [ "$fmt" = pftrace ] && "$GPUIO" convert -q "$TMP/big.gpuio" -o "$TMP/big.pftrace"
done

pycheck stream.frames "$TMP/big.pftrace" "$BIG" || fail "the $BIG-call protobuf does not frame"
echo "export memory is flat in the number of calls"
