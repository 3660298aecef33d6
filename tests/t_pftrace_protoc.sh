#!/usr/bin/env bash
# Debian's protoc decodes gpuio's .pftrace against our trimmed schema
# (user/export/proto/gpuio_trace.proto: Perfetto's field numbers) with no unknown
# fields, and the decoded packets hold, field by field, what gen_capture's
# "basic" capture holds: the clock snapshot (MONOTONIC + REALTIME from the
# header, MONOTONIC primary), sequence flags and defaults, the process,
# thread, disk, lane and counter track descriptors, the openat and pread64
# slices with their args (interned names and strings resolved), the block
# request with queue/service time, the flow from the pread64 to it, the
# counters and the info instant.
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"
command -v protoc > /dev/null || skip "protoc not installed (apt-get install protobuf-compiler)"
PROTO_DIR="$GPUIO_SRC/user/export/proto"

"$GEN" basic "$TMP/b.gpuio" > /dev/null || fail "gen_capture basic failed"
"$GPUIO" convert -q "$TMP/b.gpuio" -o "$TMP/b.pftrace" || fail "convert failed"
protoc --decode=gpuio.Trace -I"$PROTO_DIR" "$PROTO_DIR/gpuio_trace.proto" \
  < "$TMP/b.pftrace" > "$TMP/b.txt" 2> "$TMP/protoc.err" \
  || { cat "$TMP/protoc.err"; fail "protoc cannot decode the trace"; }
# fields protoc does not know are printed by number: there must be none
if grep -nE '^ *[0-9]+: |^ *[0-9]+ \{' "$TMP/b.txt" > "$TMP/unknown"; then
  head "$TMP/unknown"; fail "fields outside the schema"
fi

pycheck export_gen.protoc_basic "$TMP/b.txt" || fail "decoded fields differ from the capture"
echo "protoc decodes the protobuf export field by field"
