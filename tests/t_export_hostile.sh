#!/usr/bin/env bash
# Hostile names — '"', '\', newline, tab, control bytes, NUL, invalid UTF-8 —
# in paths, process/thread/disk names and the capture header export as valid
# JSON (plain and gzip), and every name round-trips exactly: the decoded JSON
# string equals the raw bytes the generator wrote, decoded by Python's own
# bytes.decode("utf-8", "replace") — the rule user/lib/json_writer.h documents
# (one U+FFFD per maximal ill-formed subpart). Ground truth: gen_capture's
# manifest, never the exporter.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$GPUIO" ] || fail "missing $GPUIO (run: make)"

"$GEN" hostile "$TMP/h.gpuio" > "$TMP/manifest.json" || fail "gen_capture hostile failed"

for out in h.json h.json.gz; do
  "$GPUIO" convert "$TMP/h.gpuio" -o "$TMP/$out" 2> "$TMP/err" || { cat "$TMP/err"; fail "convert -o $out failed"; }
  $CHECK "$TMP/$out" || fail "check_trace rejects $out"
  pycheck export_gen.hostile "$TMP/manifest.json" "$TMP/$out" || fail "round trip of hostile names ($out)"
done

# `gpuio info` prints hostile header strings without raw control bytes
"$GPUIO" info "$TMP/h.gpuio" > "$TMP/info.txt" || fail "gpuio info failed"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/info.txt"; then
  fail "gpuio info printed raw control bytes"
fi
"$GPUIO" info --json "$TMP/h.gpuio" | pycheck export_gen.hostile_info || fail "gpuio info --json on the hostile capture"
echo "hostile names round-trip"
