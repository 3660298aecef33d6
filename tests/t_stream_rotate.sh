#!/usr/bin/env bash
# gpuio trace --stream --rotate: long runs cut into self-contained files.
#  - by size, gzip: --rotate 400K --keep 3 -o r.pftrace.gz over ~300,000
#    preads makes r.0001.pftrace.gz, r.0002...; exactly the newest 3 remain
#    (the highest numbers, r.0001 is gone), each at most the limit plus one
#    pump's worth, each decodes on its own: its own ClockSnapshot and
#    SEQ_INCREMENTAL_STATE_CLEARED first, descriptors for every track it uses,
#    every interned name defined in it, its own "gpuio trace info" at the end;
#    together they hold the last preads of the run, in order, without gaps
#    between files.
#  - by time, plain: --rotate 1s over a 3.5 s workload gives >= 3 files, each
#    decoding on its own, with the workload's reads spread over them; each
#    holds its window of the trace's time (the capture's start + k seconds):
#    no call in it starts after its window.
source "$(dirname "$0")/lib.sh"
need_root
PREAD="$GPUIO_TESTS/preadloop"
[ -x "$PREAD" ] || fail "missing $PREAD (run: make test-progs)"

head -c 8M /dev/urandom > "$TMP/data"
"$GPUIO" trace -q --stream --rotate 400K --keep 3 -o "$TMP/r.pftrace.gz" -- \
  "$PREAD" --size 1 "$TMP/data" 300000 5 > /dev/null 2> "$TMP/r.err" \
  || { cat "$TMP/r.err"; fail "trace --rotate failed"; }
ls "$TMP" | grep -E '^r\.[0-9]{4}\.pftrace\.gz$' | sort > "$TMP/files"
echo "size rotation kept: $(tr '\n' ' ' < "$TMP/files")"
[ "$(wc -l < "$TMP/files")" -eq 3 ] || fail "--keep 3 left $(wc -l < "$TMP/files") files"
[ ! -e "$TMP/r.0001.pftrace.gz" ] || fail "--keep 3 did not delete the oldest file"
[ ! -e "$TMP/r.pftrace.gz" ] || fail "rotation also wrote the unrotated name"
for f in $(cat "$TMP/files"); do tp_check --part "$TMP/$f"; done

pycheck stream.rotated_size "$TMP" $(cat "$TMP/files") || fail "rotated files do not stand alone"

# --- by time, plain files
cat > "$TMP/slow.sh" <<EOF
#!/bin/sh
for i in 1 2 3 4 5 6 7; do cat "$TMP/data" > /dev/null; sleep 0.5; done
EOF
chmod +x "$TMP/slow.sh"
"$GPUIO" trace -q --stream --rotate 1s -o "$TMP/t.pftrace" --capture "$TMP/t.gpuio" -- "$TMP/slow.sh" 2> "$TMP/t.err" \
  || { cat "$TMP/t.err"; fail "trace --rotate 1s failed"; }
ANCHOR=$("$GPUIO" info --json "$TMP/t.gpuio" | python3 -c 'import json,sys; print(json.load(sys.stdin)["monotonic_ns"])') ||
  fail "gpuio info of the rotated trace's capture"
n=$(ls "$TMP" | grep -cE '^t\.[0-9]{4}\.pftrace$' || true)   # none: the check below says so
[ "$n" -ge 3 ] || fail "--rotate 1s over 3.5 s made $n files"
pycheck stream.rotated_time "$TMP" 1 "$ANCHOR" || fail "time-rotated files do not stand alone"
echo "rotated files stand alone and --keep keeps the newest"
