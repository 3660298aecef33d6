#!/usr/bin/env bash
# t_report_gpu_wait: each GPU idle gap explained by the launching thread's
# state during it, through the same thread-state chain as "why the loop
# waited"; the loop's steps from its NVTX step ranges.
#
# gen_capture gpuwait (tests/gen_capture.c) writes a trainer whose thread 300
# launches six kernels (thread 301 launches once: not the launcher), leaving
# five 20 ms gaps: before the thread's first state (no_state 20 ms); asleep
# until its DataLoader-like child woke it (waiting_for_data 15.5 ms incl. the
# 0.5 ms runnable after the wake-up, on_cpu 4.5); on CPU then preempted
# (on_cpu 18, runnable 2); asleep inside its own pread (file_io 11.5, on_cpu
# 8.4, runnable 0.1); asleep inside cudaStreamSynchronize (gpu_sync 15.5,
# on_cpu 4.4, runnable 0.1). NVTX: four depth-0 "train_step" ranges with
# eight nested "forward" ones (more of them, but nested) and three
# "io_step" ranges of the other thread: the steps are the four train_steps,
# the first waiting 15.5 ms for data. The worker exits 3 ms after its last
# hand-over, having slept since (still data); a helper child's exit wakes the
# loop later (a join: other sleep 9 ms, not data): the loop's whole time is
# exact too. The data recommendation says what its
# waits cost the GPU (15.5 ms, 16% of its idle). Every number is checked to the ns
# against the generator's manifest; then the same capture without scheduler
# records: the launcher is still named, its states are null and said to be
# missing, steps fall back to none (no thread states, no loop).
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"

"$GEN" gpuwait "$TMP/w.gpuio" >"$TMP/w.manifest" || fail "gen_capture gpuwait failed"
"$GPUIO" report --json "$TMP/w.gpuio" >"$TMP/w.json" 2>"$TMP/err" || { cat "$TMP/err"; fail "report --json failed"; }
"$GPUIO" report "$TMP/w.gpuio" >"$TMP/w.txt" 2>"$TMP/err" || { cat "$TMP/err"; fail "report failed"; }
python3 - "$TMP/w.manifest" "$TMP/w.json" <<'PYEOF' || fail "launcher states or steps differ from the generator's"
import json, sys
from decimal import Decimal
m = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]), parse_float=Decimal)
ns = lambda us: int(Decimal(us) * 1000)
STATES = ["on_cpu", "runnable", "file_io", "gpu_sync", "waiting_for_data", "other_sleep", "no_state"]
bad = []
g = r["gpu"]
dev = [d for d in g["devices"] if d["pid"] == m["pid"]]
assert len(dev) == 1, "one GPU of the trainer"
ln = dev[0]["launcher"]
if ln is None or ln["tid"] != m["launcher"] or ln["launches"] != m["launches"]:
    bad.append("launcher: %r, want tid %d with %d launches" % (ln, m["launcher"], m["launches"]))
# gaps: report ts are µs after the anchor; the manifest's are ms after t0
gaps = {ns(x["start_ts_us"]): x for x in g["largest_gaps"]}
t0 = min(gaps) + 20 * 1000000          # the first gap starts 20 ms before t0
total = {k: 0 for k in STATES}
for want in m["gaps"]:
    at = t0 + want["start_ms"] * 1000000
    x = gaps.get(at)
    if x is None:
        bad.append("no gap at %d ms (report has %s)" % (want["start_ms"], sorted(gaps)))
        continue
    for k in STATES:
        w = want["us"].get(k, 0) * 1000
        total[k] += w
        got = ns(x["launcher_state_us"][k])
        if got != w:
            bad.append("gap at %d ms: %s %d ns, want %d" % (want["start_ms"], k, got, w))
for k in STATES:
    for where, d in (("device", ln["idle_by_state_us"] if ln else {}), ("total", g["idle_by_launcher_state_us"])):
        if ns(d.get(k, -1)) != total[k]:
            bad.append("%s %s: %s, want %d ns" % (where, k, d.get(k), total[k]))
w = r["wait"]
if w["steps_from"] != "nvtx" or w["step_range"] != m["step_range"]:
    bad.append("steps from %r %r, want nvtx %r" % (w["steps_from"], w["step_range"], m["step_range"]))
got = [(ns(s["start_us"]) - t0, ns(s["wait_us"]), ns(s["rest_us"])) for s in w["steps"]]
want = [(s["start_ms"] * 1000000, s["wait_us"] * 1000, s["rest_us"] * 1000) for s in m["steps"]]
if got != want:
    bad.append("steps %r, want %r" % (got, want))
got = {k: ns(v) for k, v in w["loop_us"].items()}
want = {k: v * 1000 for k, v in m["loop_us"].items()}
if got != want:
    bad.append("the loop's time %r, want %r (ns)" % (got, want))
if sorted(x["pid"] for x in w["wakers"]) != m["wakers"]:
    bad.append("woken with data by %r, want %r (a child's exit is a join)" % (w["wakers"], m["wakers"]))
ev = [x["evidence"] for x in r["recommendations"] if x["kind"].startswith("data_")]
if not ev or "its GPU(s) sat idle 15.50 ms while it waited for data (16% of their idle time)" not in ev[0]:
    bad.append("the data recommendation's evidence lacks the GPU time its waits cost: %r" % ev)
print("launcher tid %d: idle %s" % (ln["tid"], {k: float(v) for k, v in ln["idle_by_state_us"].items()}))
print("steps:", got)
if bad:
    print("\n".join(bad))
    sys.exit(1)
PYEOF
grep -q "its launching thread (tid 300, 6 launches) during the idle gaps:" "$TMP/w.txt" ||
  { cat "$TMP/w.txt"; fail "the text report does not name the launching thread"; }
grep -qE 'waiting_for_data +15\.50 ms +15\.5% of idle' "$TMP/w.txt" ||
  { cat "$TMP/w.txt"; fail "the text report's launcher split"; }
grep -q 'STEPS (4: the loop'"'"'s NVTX range "train_step"' "$TMP/w.txt" ||
  { cat "$TMP/w.txt"; fail "the text report's steps are not the NVTX ranges"; }

# without thread states: named, not explained, and said so
"$GEN" gpuwait "$TMP/n.gpuio" nosched >/dev/null || fail "gen_capture gpuwait nosched failed"
"$GPUIO" report --json "$TMP/n.gpuio" >"$TMP/n.json" || fail "report --json (nosched) failed"
"$GPUIO" report "$TMP/n.gpuio" >"$TMP/n.txt" || fail "report (nosched) failed"
python3 - "$TMP/n.json" <<'PYEOF' || fail "without thread states"
import json, sys
r = json.load(open(sys.argv[1]))
g = r["gpu"]
ln = g["devices"][0]["launcher"]
assert ln and ln["tid"] == 300 and ln["idle_by_state_us"] is None, ln
assert g["idle_by_launcher_state_us"] is None
assert all(x["launcher_state_us"] is None for x in g["largest_gaps"])
assert r["wait"] is None
print("nosched: launcher", ln)
PYEOF
grep -q "no thread states in this capture" "$TMP/n.txt" || { cat "$TMP/n.txt"; fail "nosched: not said"; }
echo "PASS: every GPU gap split by the launching thread's state to the ns; steps from NVTX"
