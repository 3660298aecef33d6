#!/usr/bin/env bash
# gpuio merge puts several hosts' captures on one timeline through their
# REALTIME/MONOTONIC anchors. Two captures are recorded here one after the
# other (A, then B), and B is rewritten (gen_capture shift) as if it came
# from other hosts:
#  - B1: a host that booted 1000 s earlier (every MONOTONIC time + 1000 s,
#    same wall clock). Merged, B1's calls land exactly where B's were on A's
#    clock (merged ts == B's own ts + the few-µs difference between the two
#    captures' anchors, taken from the headers) - after all of A's calls, as
#    they happened - and the reported offset is -1000 s + that difference,
#    on stderr and in B1's "gpuio trace info" (clock_offset_ns).
#  - B2: a host whose wall clock is one hour behind: its calls land an hour
#    before A's (the order follows the wall clocks) and -3600 s is reported.
# Each host is its own group: pids + 10,000,000 x (index + 1), process names
# prefixed with the host. The JSON and protobuf merges carry the same trace.
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

for case in b1 b2; do
  "$GPUIO" merge "$TMP/a.gpuio" "$TMP/$case.gpuio" -o "$TMP/m-$case.pftrace" 2> "$TMP/m-$case.err" \
    || { cat "$TMP/m-$case.err"; fail "merge a $case failed"; }
  "$GPUIO" merge -q "$TMP/a.gpuio" "$TMP/$case.gpuio" -o "$TMP/m-$case.json" \
    || fail "merge a $case to JSON failed"
  cat "$TMP/m-$case.err"
  python3 "$GPUIO_SRC/tests/compare_exports.py" "$TMP/m-$case.json" "$TMP/m-$case.pftrace" \
    || fail "$case: the JSON and protobuf merges differ"
  $CHECK "$TMP/m-$case.json" > /dev/null || fail "$case: check_trace rejects the merged JSON"
  python3 - "$TMP/m-$case.pftrace" "$TMP/m-$case.err" "$TMP/b.json" "$case" "$GPUIO_SRC/tests" <<'EOF' \
    || fail "$case: events are not where the clocks put them"
import re, sys
sys.path.insert(0, sys.argv[5])
import check_trace as ct
import pftrace as pf
t = pf.load(sys.argv[1])
assert not t.errors, t.errors[:5]
case = sys.argv[4]
shift = {"b1": -1000 * 10**9, "b2": -3600 * 10**9}[case]
info = sorted((i["args"]["host_index"], i["args"]) for i in t.instants() if i["name"] == "gpuio trace info")
assert [h for h, _ in info] == [0, 1], info
a, b = info[0][1], info[1][1]
# the anchors' own difference: these captures came from one machine
d = (b["realtime_base_ns"] - b["monotonic_base_ns"]) - (a["realtime_base_ns"] - a["monotonic_base_ns"])
d -= shift if case == "b2" else -10**12   # undo the rewrite to get the true one
assert abs(d) < 5 * 10**6, "the two captures' anchors differ by %d ns" % d
want_off = shift + d
assert b["clock_offset_ns"] == want_off, (b["clock_offset_ns"], want_off)
assert a["clock_offset_ns"] == 0 and (a["pid_offset"], b["pid_offset"]) == (10**7, 2 * 10**7)
m = re.search(r"b[12]\.gpuio: host (\S+), pids \+ 20000000, clock offset \S+ s \(([+-]\d+) ns\)",
              open(sys.argv[2]).read())
assert m and int(m.group(2)) == want_off, open(sys.argv[2]).read()

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
# B's calls on A's clock: its own ts (JSON, relative to B's anchor) moved by the anchors
bj = ct.load(sys.argv[3])
binfo = ct.trace_info(bj)
bts = sorted(binfo["monotonic_base_ns"] + ct.ns(e["ts"]) for e in bj
             if e.get("name") == "pread64" and e["args"].get("path", "").endswith("/data"))
mts = sorted(s["ts"] for s in rb)
extra = 0 if case == "b1" else shift
assert all(x - y == d + extra for x, y in zip(mts, bts)), (mts[0] - bts[0], d + extra)
if case == "b1":
    assert max(s["ts"] + s["dur"] for s in ra) < min(s["ts"] for s in rb), "B1 before A"
    print("b1: B's calls after A's, exactly on B's own times (+%d ns anchors); offset %d ns" % (d, want_off))
else:
    assert max(s["ts"] + s["dur"] for s in rb) < min(s["ts"] for s in ra), "B2 not an hour early"
    print("b2: B's calls an hour before A's; offset %d ns" % want_off)
EOF
done
echo "merged captures land where their clocks say"
