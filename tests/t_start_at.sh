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
pycheck merge_truth.start_at "$TMP/h1.json" "$TMP/h2.json" "$start" || fail "the traces did not begin at TIME"

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
