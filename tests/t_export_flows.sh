#!/usr/bin/env bash
# VFS -> block flow arrows are bound exactly where the generator put them:
# every block request naming an existing (tid, seq) carries that call's
# bind_id with flow_in, the call carries it with flow_out (one call fanning
# out to three requests), and requests naming a call that is not in the
# capture get no arrow. Block slices sit on lanes that never overlap, as many
# lanes as the requests' maximum concurrency; times, queue/service split,
# throughput counters and the other call shapes (failed open, sendfile,
# ftruncate, fsync error) match what the generator wrote.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
[ -x "$GPUIO" ] || fail "missing $GPUIO (run: make)"

"$GEN" flows "$TMP/f.gpuio" > "$TMP/manifest.json" || fail "gen_capture flows failed"
"$GPUIO" convert "$TMP/f.gpuio" -o "$TMP/f.json" || fail "convert failed"
$CHECK "$TMP/f.json" || fail "check_trace rejects the export"

pycheck export_gen.flows "$TMP/manifest.json" "$TMP/f.json" ||
  fail "flows/lanes differ from the generator's ground truth"

# the same capture through gzip gives the same events
"$GPUIO" convert "$TMP/f.gpuio" -o "$TMP/f.json.gz" || fail "convert to .json.gz failed"
[ "$(head -c2 "$TMP/f.json.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ] || fail ".json.gz is not gzip"
cmp <(gzip -dc "$TMP/f.json.gz") "$TMP/f.json" || fail ".json.gz differs from .json"
echo "flows bound where the generator put them"
