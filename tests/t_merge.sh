#!/usr/bin/env bash
# gpuio merge puts several hosts' captures on one timeline through their
# REALTIME/MONOTONIC anchors. Two captures are recorded here one after the
# other (A, then B), and B is rewritten (gen_capture shift) as if it came
# from other hosts:
#  - B1: a host that booted 1000 s earlier (every MONOTONIC time + 1000 s,
#    same wall clock). It is the reference clock (booted first): offset 0,
#    and A's offset is +1000 s - the few-us difference between the two
#    captures' anchors (from the headers). B1's calls land exactly on their
#    own MONOTONIC times, after all of A's calls, as they happened.
#  - B2: a host whose wall clock is one hour behind: its calls land an hour
#    before A's (the order follows the wall clocks), B2 - A = -3600 s.
# The offsets are reported on stderr and in each host's "gpuio trace info"
# (clock_offset_ns); none is negative. In the protobuf each host is a
# Perfetto machine (machine_id, its own SystemInfo and clock snapshot) with
# its own pids and names: trace_processor's `machine` table has one row per
# host, each host's process under it with the pid it had. In JSON (no
# machines) each host is its own group: pids + 10,000,000 x (index + 1),
# process names prefixed with the host. Both merges carry the same trace.
# Then skews of +-1 h, +-2 days and +-1 year of B's wall clock, and a B that
# booted a year before A: the merge is on a timeline that starts at >= 0
# (no JSON ts < 0, no protobuf timestamp past 2^63), B - A is the skew, every
# call is there, and Perfetto's importer takes both files with no error.
source "$(dirname "$0")/lib.sh"
need_root
GEN="$GPUIO_TESTS/gen_capture"
PREAD="$GPUIO_TESTS/preadloop"
[ -x "$GEN" ] && [ -x "$PREAD" ] || fail "missing test programs (run: make test-progs)"

head -c 1M /dev/urandom > "$TMP/data"
for c in a b; do
  "$GPUIO" trace -q --no-export -o "$TMP/$c.json" -- "$PREAD" "$TMP/data" 2000 1 \
    > /dev/null 2> "$TMP/$c.err" || { cat "$TMP/$c.err"; fail "trace $c failed"; }
done
"$GEN" shift "$TMP/b1.gpuio" "$TMP/b.gpuio" 1000000000000 0 > /dev/null || fail "shift b1"
"$GEN" shift "$TMP/b2.gpuio" "$TMP/b.gpuio" 0 -3600000000000 > /dev/null || fail "shift b2"
"$GPUIO" convert -q "$TMP/b.gpuio" -o "$TMP/b.json" || fail "convert b"
"$GPUIO" convert -q "$TMP/a.gpuio" -o "$TMP/a.json" || fail "convert a"

# machines_check PFTRACE JSON_A JSON_B: Perfetto's own importer sees two
# machines named after the hosts, each holding its host's preadloop process
# with the pid that host's own export (not merged) gives it, and its 2000 reads
machines_check() {
  local tp
  tp=$(tp_path) || { tp_note "machines (Perfetto's machine table)"; return 0; }
  printf '%s\n' "select m.raw_id, m.name, p.pid from process p join machine m on p.machine_id = m.id where p.name like 'preadloop%' order by m.raw_id;" \
    "select t.machine_id, count(*) from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid) where s.name = 'pread64' and s.arg_set_id in (select arg_set_id from args where key = 'debug.path' and string_value like '%/data') group by t.machine_id order by 1;" \
    "select count(*) from machine;" > "$TMP/mq.sql"
  "$tp" -q "$TMP/mq.sql" "$1" > "$TMP/mq.out" 2> "$TMP/mq.err" || { cat "$TMP/mq.err"; fail "trace_processor failed on $1"; }
  pycheck merge_truth.machines "$TMP/mq.out" "$2" "$3" ||
    { cat "$TMP/mq.out"; fail "Perfetto does not see the hosts as machines"; }
}

for case in b1 b2; do
  "$GPUIO" merge "$TMP/a.gpuio" "$TMP/$case.gpuio" -o "$TMP/m-$case.pftrace" 2> "$TMP/m-$case.err" \
    || { cat "$TMP/m-$case.err"; fail "merge a $case failed"; }
  "$GPUIO" merge "$TMP/a.gpuio" "$TMP/$case.gpuio" -o "$TMP/m-$case.json" 2> "$TMP/m-$case.json.err" \
    || { cat "$TMP/m-$case.json.err"; fail "merge a $case to JSON failed"; }
  cat "$TMP/m-$case.err"
  python3 "$GPUIO_SRC/tests/compare_exports.py" --machines "$TMP/m-$case.json" "$TMP/m-$case.pftrace" \
    || fail "$case: the JSON and protobuf merges differ"
  $CHECK "$TMP/m-$case.json" > /dev/null || fail "$case: check_trace rejects the merged JSON"
  grep -q "JSON has no machines" "$TMP/m-$case.json.err" || fail "the JSON merge does not say how it tells hosts apart"
  machines_check "$TMP/m-$case.pftrace" "$TMP/a.json" "$TMP/b.json"
  pycheck merge_truth.clocks "$TMP/m-$case.pftrace" "$TMP/m-$case.err" "$TMP/b.json" "$case" ||
    fail "$case: events are not where the clocks put them"
done
# Skews: B's wall clock off by +-1 h, +-2 days, +-1 year; B booted a year before A.
H=3600000000000; D=$((48 * H)); Y=$((8766 * H))
for sk in "0 $H" "0 -$H" "0 $D" "0 -$D" "0 $Y" "0 -$Y" "$Y 0"; do
  set -- $sk
  "$GEN" shift "$TMP/s.gpuio" "$TMP/b.gpuio" "$1" "$2" > /dev/null || fail "shift $sk"
  for out in m.json m.pftrace; do
    "$GPUIO" merge -q "$TMP/a.gpuio" "$TMP/s.gpuio" -o "$TMP/$out" || fail "merge ($sk) -> $out failed"
    tp_check "$TMP/$out"
  done
  pycheck merge_truth.skew "$TMP/m.json" "$TMP/m.pftrace" "$1" "$2" || fail "skew $sk"
done
echo "merged captures land where their clocks say"
