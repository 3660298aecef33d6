#!/usr/bin/env bash
# gpuio trace --start-at TIME: two traces started apart (as on two hosts),
# both told @EPOCH, load, wait, and attach together: each capture's wall-clock
# anchor is at or after TIME and within 0.5 s of it, so both begin within
# 0.5 s of each other, and the launched commands' first reads come after
# TIME. HH:MM:SS (local time) works the same; a bad TIME is a usage error.
source "$(dirname "$0")/lib.sh"
need_root
head -c 1M /dev/urandom > "$TMP/data"

start=$(( $(date +%s) + 4 ))
for h in 1 2; do
  spawn -o /dev/null -e "$TMP/h$h.err" "gpuio $h" "$GPUIO" trace -q --start-at "@$start" -o "$TMP/h$h.json" -- \
    sh -c "cat '$TMP/data' > /dev/null"
  eval "p$h=\$SPAWNED"
  sleep 1
done
wait "$p1" || { cat "$TMP/h1.err"; fail "first trace failed"; }
wait "$p2" || { cat "$TMP/h2.err"; fail "second trace failed"; }
python3 - "$TMP/h1.json" "$TMP/h2.json" "$start" "$GPUIO_SRC/tests" <<'EOF' || fail "the traces did not begin at TIME"
import sys
sys.path.insert(0, sys.argv[4])
import check_trace as ct
start = int(sys.argv[3]) * 10**9
anchors = []
for path in sys.argv[1:3]:
    ev = ct.load(path)
    info = ct.trace_info(ev)
    real, mono = info["realtime_base_ns"], info["monotonic_base_ns"]
    assert start <= real < start + 5 * 10**8, (path, real - start)
    reads = [ct.ns(e["ts"]) for e in ev if e.get("name") == "read" and
             e["args"].get("path", "").endswith("/data")]
    assert reads, "no reads of the data file in %s" % path
    # the first read on the wall clock: anchor + (origin - anchor) + ts
    first = real + info["timeline_origin_ns"] - mono + min(reads)
    assert first >= start, (path, first - start)
    anchors.append(real)
    print("%s: attached %.3f s after TIME, first read %.3f s after" %
          (path.split("/")[-1], (real - start) / 1e9, (first - start) / 1e9))
assert abs(anchors[0] - anchors[1]) < 5 * 10**8, anchors
EOF

# HH:MM:SS: local time, the next occurrence
t=$(( $(date +%s) + 3 ))
hms=$(date -d "@$t" +%H:%M:%S)
t0=$(date +%s%N)
"$GPUIO" trace -q --start-at "$hms" -o "$TMP/c.json" -- true > /dev/null 2> "$TMP/c.err" \
  || { cat "$TMP/c.err"; fail "--start-at $hms failed"; }
waited=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$waited" -ge 1500 ] || fail "--start-at $hms returned after $waited ms"
echo "--start-at $hms: waited $waited ms"
rc=0
"$GPUIO" trace --start-at 25:99 -o "$TMP/d.json" -- true > /dev/null 2> "$TMP/d.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "start-at" "$TMP/d.err" || { cat "$TMP/d.err"; fail "bad TIME: rc $rc"; }
echo "traces begin together at --start-at"
