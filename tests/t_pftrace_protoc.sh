#!/usr/bin/env bash
# Debian's protoc decodes gpuio's .pftrace against our trimmed schema
# (user/export/proto/gpuio_trace.proto: Perfetto's field numbers) with no unknown
# fields, and the decoded packets hold, field by field, what gen_capture's
# "basic" capture holds: the clock snapshot (MONOTONIC + REALTIME from the
# header, MONOTONIC primary), sequence flags and defaults, the process,
# thread, disk, lane and counter track descriptors, the openat and pread64
# slices with their args (interned names and strings resolved), the block
# request with queue/service time, the flow from the pread64 to it, the
# counters and the info instant. A Python program traced with --stacks
# --sample-hz: its CPU samples' sequences (ThreadDescriptor,
# StreamingProfilePacket, interned frames and callstacks) are in the schema
# too.
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

# the scheduler's events (gen_capture states) and process labels (a traced
# run: cgroup=...) are in the schema too: nothing decodes by number
"$GEN" states "$TMP/s.gpuio" > /dev/null || fail "gen_capture states failed"
"$GPUIO" convert -q "$TMP/s.gpuio" -o "$TMP/s.pftrace" || fail "convert states failed"
if [ "$(id -u)" -eq 0 ]; then
  "$GPUIO" trace -q --no-export --capture "$TMP/t.gpuio" -- /bin/true > /dev/null 2>&1 ||
    fail "tracing /bin/true failed"
  "$GPUIO" convert -q "$TMP/t.gpuio" -o "$TMP/t.pftrace" || fail "convert failed"
  if [ -x /usr/bin/python3.11 ]; then
    "$GPUIO" trace -q --stacks --sample-hz 499 --no-export --capture "$TMP/p.gpuio" -- \
      /usr/bin/python3.11 -c 'sum(i * i for i in range(3000000))' > /dev/null 2>&1 ||
      fail "tracing python3.11 with --stacks failed"
    "$GPUIO" convert -q "$TMP/p.gpuio" -o "$TMP/p.pftrace" || fail "convert failed"
  fi
fi
for f in "$TMP"/s.pftrace "$TMP"/t.pftrace "$TMP"/p.pftrace; do
  [ -e "$f" ] || continue
  protoc --decode=gpuio.Trace -I"$PROTO_DIR" "$PROTO_DIR/gpuio_trace.proto" \
    < "$f" > "$f.txt" 2> "$TMP/protoc.err" || { cat "$TMP/protoc.err"; fail "protoc: $f"; }
  if grep -nE '^ *[0-9]+: |^ *[0-9]+ \{' "$f.txt" > "$TMP/unknown"; then
    head "$TMP/unknown"; fail "fields outside the schema in $(basename "$f")"
  fi
done
grep -q 'sched_switch {' "$TMP/s.pftrace.txt" || fail "no sched_switch decoded from the states capture"
grep -q 'sched_waking {' "$TMP/s.pftrace.txt" || fail "no sched_waking decoded from the states capture"
[ ! -e "$TMP/t.pftrace.txt" ] || grep -q 'process_labels: "cgroup=' "$TMP/t.pftrace.txt" ||
  fail "no process_labels decoded from a traced run"
for m in 'thread_descriptor {' 'streaming_profile_packet {' 'callstacks {' 'frames {' 'mappings {'; do
  [ ! -e "$TMP/p.pftrace.txt" ] || grep -q "$m" "$TMP/p.pftrace.txt" ||
    fail "no $m decoded from a traced Python program's samples"
done
echo "protoc decodes the protobuf export field by field"
