#!/usr/bin/env bash
# t_sched_states: thread states against the kernel's own account of them.
#
# build/tests/sched_truth runs 3 workers on 2 CPUs (so they also wait for
# one), 20 rounds of 20 ms of CPU and 10 ms asleep, then each blocks in a
# pipe read; with all of them off the CPU the main thread reads every
# worker's /proc/self/task/TID/schedstat (on-CPU ns, run-queue wait ns) and
# the CLOCK_MONOTONIC time of that read, then writes one byte to each worker's
# its own pipe. Checks:
#   - Perfetto's importer (trace_processor_shell) takes the .pftrace with no
#     error stat; in its thread_state table, per worker, the Running time up
#     to the read is the schedstat on-CPU time within 1%, and the Runnable
#     time (R and R+) the schedstat run-queue wait within 3% + 2 ms (5% and
#     15% for a thread with a switch-in the trace did not see: "sched_gaps",
#     its Running start assumed; at least one thread must be exact);
#   - the JSON's state slices say the same (within 1% / 3% + 2 ms), and
#     every one of them is Perfetto's (compare_exports.py);
#   - each worker's last sleep (the pipe read) was ended by a wake-up from
#     the main thread, in both formats (Perfetto: thread_state.waker_utid);
#   - no switch or wake-up was lost (the trace info's drop counter);
#   - with --no-sched there are no thread states at all.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/sched_truth"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"
TP="${TRACE_PROCESSOR:-$GPUIO_SRC/../shared/tools/trace_processor_shell}"

# one traced run and its checks; returns 3 when every worker had a switch-in
# the trace did not see (then there is nothing to compare exactly: run again)
run_and_check() {
"$GPUIO" trace -o "$TMP/s.pftrace" -- "$PROG" 3 20 20 10 >"$TMP/truth.json" 2>"$TMP/trace.err" ||
  { cat "$TMP/trace.err"; fail "trace failed"; }
tail -n1 "$TMP/trace.err"
grep -q " sched)" "$TMP/trace.err" || fail "no scheduler events counted: $(tail -n1 "$TMP/trace.err")"
"$GPUIO" convert "$TMP/s.gpuio" -o "$TMP/s.json" 2>/dev/null || fail "convert to JSON failed"
# switches the kernel made that were not recorded are counted (and, in the
# .pftrace, bridged so every CPU's switches still chain)
# gpuio info counts the scheduler records the trace said it wrote
said=$(grep -o '[0-9]* sched)' "$TMP/trace.err" | tail -n1 | cut -d' ' -f1)
got=$("$GPUIO" info --json "$TMP/s.gpuio" | python3 -c 'import json, sys; print(json.load(sys.stdin)["record_counts"]["sched"])')
[ "$said" = "$got" ] || fail "gpuio info counts $got scheduler records, the trace wrote $said"
gaps=$(grep -o '"sched_gaps":[0-9]*' "$TMP/s.json" | cut -d: -f2)
[ -n "$gaps" ] || fail "the trace info does not count sched_gaps"
echo "sched_gaps: $gaps"
check_struct "$TMP/s.json"
tp_check "$TMP/s.pftrace"
python3 "$GPUIO_SRC/tests/compare_exports.py" "$TMP/s.json" "$TMP/s.pftrace" || fail "JSON and protobuf thread states differ"

python3 - "$TMP/truth.json" "$TMP/s.json" "$TMP/s.pftrace" "$TP" <<'EOF'
import json, os, subprocess, sys, tempfile
sys.path.insert(0, os.environ["GPUIO_SRC"] + "/tests")
import check_trace as ct
truth, jpath, ppath, tp = sys.argv[1:]
t = json.load(open(truth))
rt, main = t["read_mono_ns"], t["pid"]
bad = []

def close(what, tid, got, want, rel, abs_ns):
    ok = abs(got - want) <= rel * want + abs_ns
    print("%-9s tid %d %-8s %10.3f ms, schedstat %10.3f ms (%+.3f%%)%s" % (
        what, tid, "", got / 1e6, want / 1e6, 100.0 * (got - want) / want if want else 0,
        "" if ok else "  <-- off"))
    if not ok:
        bad.append("%s tid %d: %d ns vs schedstat %d ns" % (what, tid, got, want))

# JSON: state slices up to the read (ts + origin = CLOCK_MONOTONIC)
ev = ct.load(jpath)
info = ct.trace_info(ev)
origin = int(info["timeline_origin_ns"])
js = {}
last_sleep = {}
assumed = set()     # threads with a Running whose switch-in the trace missed (sched_gaps)
for e in ev:
    if e.get("ph") != "X" or e.get("cat") != "sched":
        continue
    tid, ts = e["args"]["tid"], ct.ns(e["ts"]) + origin
    d = ct.ns(e["dur"]) + 1         # the JSON slice is 1 ns short of the state
    if ts + d <= rt:
        js[(tid, e["name"])] = js.get((tid, e["name"]), 0) + d
    if e["args"].get("start_assumed") is True and ts < rt:
        assumed.add(tid)
    if e["name"] == "Sleeping" and ts < rt and ts + d > rt:
        last_sleep[tid] = e["args"]
dropped = int(info.get("drops", {}).get("rb_drop_sched", 0)) if isinstance(info.get("drops"), dict) else 0
if dropped:
    bad.append("%d scheduler events dropped" % dropped)

# Perfetto: its own thread_state
with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
    f.write("select t.tid as tid, s.state as state, sum(s.dur) as d from thread_state s join thread t "
            "using (utid) where s.dur >= 0 and s.ts + s.dur <= %d group by t.tid, s.state;\n" % rt)
    f.write("select t.tid as tid, w.tid as waker from thread_state s join thread t using (utid) "
            "left join thread w on w.utid = s.waker_utid where s.state = 'R' and s.ts > %d "
            "and s.ts < %d + 1000000000;\n" % (rt, rt))
r = subprocess.run([tp, "-q", f.name, ppath], capture_output=True, text=True)
os.unlink(f.name)
ps, wakers = {}, {}
for line in r.stdout.splitlines():
    p = [x.strip('"') for x in line.split(",")]
    if len(p) == 3 and p[0].isdigit():
        ps[(int(p[0]), p[1])] = int(p[2])
    elif len(p) == 2 and p[0].isdigit():
        wakers.setdefault(int(p[0]), p[1])
exact = [w for w in t["threads"] if w["tid"] not in assumed]
no_exact = not exact
for w in t["threads"]:
    tid = w["tid"]
    # a switch-in the trace missed is placed by assumption: 5% there, 1% elsewhere
    rel, rrel = (0.05, 0.15) if tid in assumed else (0.01, 0.03)
    if tid in assumed:
        print("tid %d: a switch-in was not recorded (start_assumed): 5%% / 15%%" % tid)
    close("Perfetto", tid, ps.get((tid, "Running"), 0), w["run_ns"], rel, 0)
    close("  R+R+", tid, ps.get((tid, "R"), 0) + ps.get((tid, "R+"), 0), w["wait_ns"], rrel, 2000000)
    close("JSON", tid, js.get((tid, "Running"), 0), w["run_ns"], rel, 0)
    close("  R+R+", tid, js.get((tid, "Runnable"), 0) + js.get((tid, "Runnable (Preempted)"), 0),
          w["wait_ns"], rrel, 2000000)
    # the pipe read: the main thread's write woke it
    a = last_sleep.get(tid)
    if not a or a.get("waker_tid") != main or a.get("waker_traced") is not True:
        bad.append("JSON: tid %d's pipe wait not ended by the main thread %d: %r" % (tid, main, a))
    if wakers.get(tid) != str(main):
        bad.append("Perfetto: tid %d woken by %r after the read, not the main thread %d" %
                   (tid, wakers.get(tid), main))
for b in bad:
    print("FAIL:", b)
if no_exact and not bad:
    print("every worker had a switch-in the trace missed: nothing to compare exactly")
    sys.exit(3)
sys.exit(1 if bad else 0)
EOF
}
rc=3
for attempt in 1 2 3; do
  set +e; run_and_check; rc=$?; set -e
  [ "$rc" = 3 ] || break
  echo "attempt $attempt: no exact worker, running again"
done
[ "$rc" = 0 ] || fail "thread states disagree with schedstat$([ "$rc" = 3 ] && echo ': no worker without a missed switch-in in 3 runs')"

# --no-sched: the layer is off
"$GPUIO" trace --no-sched -o "$TMP/n.json" -- "$PROG" 2 2 5 5 >/dev/null 2>"$TMP/n.err" || fail "--no-sched trace failed"
grep -q " sched)" "$TMP/n.err" && fail "--no-sched still counted scheduler events"
grep -q '"cat":"sched"' "$TMP/n.json" && fail "--no-sched trace has thread states"
echo "--no-sched: no thread states"
