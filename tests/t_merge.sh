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
  local tp="$GPUIO_SRC/../shared/tools/trace_processor_shell"
  [ -x "$tp" ] || { echo "machines: trace_processor_shell absent, not checked"; return 0; }
  printf '%s\n' "select m.raw_id, m.name, p.pid from process p join machine m on p.machine_id = m.id where p.name like 'preadloop%' order by m.raw_id;" \
    "select t.machine_id, count(*) from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid) where s.name = 'pread64' and s.arg_set_id in (select arg_set_id from args where key = 'debug.path' and string_value like '%/data') group by t.machine_id order by 1;" \
    "select count(*) from machine;" > "$TMP/mq.sql"
  "$tp" -q "$TMP/mq.sql" "$1" > "$TMP/mq.out" 2> "$TMP/mq.err" || { cat "$TMP/mq.err"; fail "trace_processor failed on $1"; }
  python3 - "$TMP/mq.out" "$2" "$3" "$GPUIO_SRC/tests" <<'EOF' || { cat "$TMP/mq.out"; fail "Perfetto does not see the hosts as machines"; }
import csv, io, sys
sys.path.insert(0, sys.argv[4])
import check_trace as ct
blocks = [list(csv.reader(io.StringIO(b))) for b in open(sys.argv[1]).read().strip().split("\n\n")]
procs, reads, nm = blocks[0][1:], blocks[1][1:], blocks[2][1:]
want = []
for k, path in enumerate(sys.argv[2:4]):
    j = ct.load(path)
    host = ct.trace_info(j)["hostname"]
    pid = [e["pid"] for e in j if e.get("name") == "process_name" and e["args"]["name"].startswith("preadloop")]
    want.append([str(k), host, str(pid[0])])
assert procs == want, ("machine, host, pid", procs, want)
assert reads == [["0", "2000"], ["1", "2000"]], reads
assert nm == [["2"]], nm
print("machines (raw_id, name, pid):", procs, "reads per machine:", reads)
EOF
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
  python3 - "$TMP/m-$case.pftrace" "$TMP/m-$case.err" "$TMP/b.json" "$case" "$GPUIO_SRC/tests" <<'EOF' \
    || fail "$case: events are not where the clocks put them"
import re, sys
sys.path.insert(0, sys.argv[5])
import check_trace as ct
import pftrace as pf
import compare_exports as ce
t = pf.load(sys.argv[1])
assert not t.errors, t.errors[:5]
# the hosts as machines: one SystemInfo each, their own pids (< 10,000,000)
assert sorted(t.machines) == [0, 1], t.machines
assert all(tr.pid < 10**7 for tr in t.tracks.values() if tr.kind == "process"), \
    [(tr.pid, tr.name) for tr in t.tracks.values() if tr.kind == "process"]
ce.as_json_merge(t)      # the rest in the JSON's host-by-pid form
case = sys.argv[4]
shift = {"b1": -1000 * 10**9, "b2": -3600 * 10**9}[case]
info = sorted((i["args"]["host_index"], i["args"]) for i in t.instants() if i["name"] == "gpuio trace info")
assert [h for h, _ in info] == [0, 1], info
a, b = info[0][1], info[1][1]
# the anchors' own difference: these captures came from one machine
d = (b["realtime_base_ns"] - b["monotonic_base_ns"]) - (a["realtime_base_ns"] - a["monotonic_base_ns"])
d -= shift if case == "b2" else -10**12   # undo the rewrite to get the true one
assert abs(d) < 5 * 10**6, "the two captures' anchors differ by %d ns" % d
want_rel = shift + d                       # B's offset minus A's
off_a, off_b = a["clock_offset_ns"], b["clock_offset_ns"]
assert min(off_a, off_b) == 0 and off_b - off_a == want_rel, (off_a, off_b, want_rel)
assert (a["pid_offset"], b["pid_offset"]) == (10**7, 2 * 10**7)
m = re.search(r"b[12]\.gpuio: host (\S+), machine 1, clock offset \S+ s \(([+-]\d+) ns\)",
              open(sys.argv[2]).read())
assert m and int(m.group(2)) == off_b, open(sys.argv[2]).read()

reads = {}
for s in t.slices():
    tr = t.tracks[s["track"]]
    if s["name"] == "pread64" and s["args"].get("path", "").endswith("/data"):
        reads.setdefault(tr.pid // 10**7, []).append(s)
ra, rb = reads.get(1, []), reads.get(2, [])
assert len(ra) == len(rb) == 2000, (len(ra), len(rb))
procs = {tr.pid: tr.name for tr in t.tracks.values() if tr.kind == "process"}
assert all(n.startswith("vm#") or ": " in n for n in procs.values()), procs
hosts = {pid // 10**7: n.split(": ")[0] for pid, n in procs.items()}
assert hosts[1] != hosts[2], hosts
# B's calls on the merged clock: their own MONOTONIC times (the rewritten
# capture's: + 1000 s for B1) moved by B's offset
bj = ct.load(sys.argv[3])
binfo = ct.trace_info(bj)
t0 = [e["ts"] for e in bj if e.get("name") == "gpuio trace info"][0]
bts = sorted(binfo["monotonic_base_ns"] + ct.ns(e["ts"]) - ct.ns(t0) for e in bj
             if e.get("name") == "pread64" and e["args"].get("path", "").endswith("/data"))
mts = sorted(s["ts"] for s in rb)
mono = 10**12 if case == "b1" else 0
assert all(x - y == mono + off_b for x, y in zip(mts, bts)), (mts[0] - bts[0], mono + off_b)
if case == "b1":
    assert max(s["ts"] + s["dur"] for s in ra) < min(s["ts"] for s in rb), "B1 before A"
    print("b1: B's calls after A's, exactly on B's own times; offsets A %+d B %+d ns" % (off_a, off_b))
else:
    assert max(s["ts"] + s["dur"] for s in rb) < min(s["ts"] for s in ra), "B2 not an hour early"
    print("b2: B's calls an hour before A's; offsets A %+d B %+d ns" % (off_a, off_b))
EOF
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
  python3 - "$TMP/m.json" "$TMP/m.pftrace" "$1" "$2" "$GPUIO_SRC/tests" <<'EOF' || fail "skew $sk"
import sys
sys.path.insert(0, sys.argv[5])
import check_trace as ct
import pftrace as pf
j, t = ct.load(sys.argv[1]), pf.load(sys.argv[2])
mono, real = int(sys.argv[3]), int(sys.argv[4])
neg = [e for e in j if "ts" in e and e["ts"] < 0]
assert not neg, "negative JSON ts: %s" % neg[:2]
big = [s for s in t.slices() if s["ts"] >= 2**63 or s["ts"] + s["dur"] >= 2**63]
assert not big and not t.errors, (big[:2], t.errors[:3])
info = sorted((i["args"]["host_index"], i["args"]) for i in t.instants() if i["name"] == "gpuio trace info")
off = [x["clock_offset_ns"] for _, x in info]
assert min(off) == 0, off
# B - A: the wall-clock skew minus the boot difference, within the anchors' few ms
rel = off[1] - off[0] - (real - mono)
assert abs(rel) < 5 * 10**6, (off, real, mono)
n = sum(1 for e in j if e.get("name") == "pread64" and e["args"].get("path", "").endswith("/data"))
assert n == 4000, n
print("skew mono %+d real %+d s: offsets %s, ts >= 0, %d reads" % (mono // 10**9, real // 10**9, off, n))
EOF
done
echo "merged captures land where their clocks say"
