#!/usr/bin/env bash
# t_report_wait: `gpuio report` says how long a real PyTorch DataLoader loop
# waited for data and why, against the program's own measurements.
#
# tests/progs/torch_loader.py times every next() on its DataLoader with
# perf_counter and reads its own schedstat (tests/torch_lib.sh has the
# scenarios, each traced here with `gpuio trace --no-export --capture`):
#   - I/O-bound (cold files, device throttled to 4 MiB/s): the report's loop
#     thread is the program's (pid, main tid); its "waiting_for_data" is the
#     program's sum of waits within 10% + 20 ms; the processes that woke it are
#     exactly its workers; meanwhile they mostly (>= 50%) read files, the data
#     files named by the program's data directory, page-cache hit ratio < 20%;
#     the recommendation is about storage (data_storage); steps against the
#     program's own next() windows: >= 80% of them start inside one, >= 90% of
#     the program's waits >= 5 ms are found (a prefetched batch leaves no wait
#     to find a step by); no checkpoint found; the HTML page (headless
#     Chromium) shows the section and its step chart with no script error;
#   - CPU-bound (warm files, 25 ms of CPU per sample): the same match; the
#     workers' share of busy time on a CPU (vs waiting for one) is their
#     schedstat run / (run + run_delay) within 15 points, and the
#     recommendation follows it: the workers' computing (data_workers) when
#     they ran more than they waited, else a CPU shortage (a busy machine);
#   - CPU shortage (3 x nproc workers): the workers waited for a CPU (>= 20%
#     of their time while the loop waited), the recommendation says so
#     (data_cpu_shortage), and the loop's runnable time is its own schedstat
#     run_delay within 15% + 30 ms.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/torch_lib.sh"
need_torch

check() {  # SCENARIO CAPTURE PROGRAM_JSON REPORT_JSON
  python3 - "$@" <<'EOF'
import json, os, sys
scen, cap, pj, rj = sys.argv[1:]
t, r = json.load(open(pj)), json.load(open(rj))
w = r["wait"]
bad = []
if not w:
    sys.exit("FAIL %s: the report has no wait analysis" % scen)
print("%s: %s" % (scen, w["headline"]))
if (w["pid"], w["tid"]) != (t["pid"], t["main_tid"]):
    bad.append("loop thread %d/%d, the program's is %d/%d" % (w["pid"], w["tid"], t["pid"], t["main_tid"]))
got, want = w["loop_us"]["waiting_for_data"] / 1e6, t["total_wait_s"]
print("  waiting for data: report %.3f s, program %.3f s (%+.1f%%)" % (got, want, 100 * (got - want) / want))
act = w["wakers_meanwhile_us"]
tot = sum(act.values()) or 1
share = {k: v / tot for k, v in act.items()}
print("  workers meanwhile: " + ", ".join("%s %.0f%%" % (k, 100 * v) for k, v in share.items()))
kinds = [x["kind"] for x in r["recommendations"]]
print("  recommendations: %s; steps %d (program %d, %d waited >= 2 ms)" % (
    kinds, len(w["steps"]), len(t["steps"]), sum(1 for st in t["steps"] if st["wait_s"] >= 0.002)))
wakers = sorted(x["pid"] for x in w["wakers"])
if scen in ("io_bound", "cpu_bound"):
    if abs(got - want) > 0.10 * want + 0.020:
        bad.append("waiting for data %.3f s, the program measured %.3f s" % (got, want))
    if wakers != sorted(t["worker_pids"]):
        bad.append("woken by %s, the workers are %s" % (wakers, sorted(t["worker_pids"])))
    # steps against the program's own next() windows [t0, t1] (CLOCK_MONOTONIC):
    # a report step starts with a wait for data, so inside one of them; every
    # step that waited >= 5 ms is found (a prefetched batch leaves no wait)
    base = r["monotonic_base_ns"]
    starts = [base + int(round(s["start_us"] * 1000)) for s in w["steps"]]
    wins = [(s["t0_mono_ns"], s["t1_mono_ns"]) for s in t["steps"]]
    inside = sum(1 for x in starts if any(a <= x <= b for a, b in wins))
    long_w = [(a, b) for (a, b), s in zip(wins, t["steps"]) if s["wait_s"] >= 0.005]
    found = sum(1 for a, b in long_w if any(a <= x <= b for x in starts))
    print("  steps: %d of %d start inside a next(); %d of %d waits >= 5 ms found" %
          (inside, len(starts), found, len(long_w)))
    if not starts or inside < 0.8 * len(starts):
        bad.append("%d of %d steps start inside the program's next() calls" % (inside, len(starts)))
    if found < 0.9 * len(long_w):
        bad.append("%d of %d waits >= 5 ms found as steps" % (found, len(long_w)))
if scen == "io_bound":
    data_dir = os.path.dirname(t["argv"][t["argv"].index("--data") + 1] + "/")
    if share["reading_files"] < 0.5:
        bad.append("workers read only %.0f%% of the time" % (100 * share["reading_files"]))
    if not w["data_files"].startswith(data_dir + "/"):
        bad.append("data files %r are not the program's %s" % (w["data_files"], data_dir))
    if w["data_hit_ratio"] is None or w["data_hit_ratio"] >= 0.2:
        bad.append("cold data files with hit ratio %r" % w["data_hit_ratio"])
    if "data_storage" not in kinds:
        bad.append("no storage recommendation: %s" % kinds)
if scen == "cpu_bound":
    # the workers compute; how much of it they could do on a CPU, and how
    # much they waited for one, is the kernel's own account (schedstat of each
    # worker): on a quiet machine they run, on a busy one they wait, and the
    # report must say which
    run, delay = t["workers_run_ns"], t["workers_run_delay_ns"]
    want_cpu = run / (run + delay) if run + delay else 0
    busy = share["on_cpu"] + share["runnable"]
    got_cpu = share["on_cpu"] / busy if busy else 0
    print("  workers on CPU when busy: report %.0f%%, schedstat %.0f%% (run %.3f s, run_delay %.3f s)"
          % (100 * got_cpu, 100 * want_cpu, run / 1e9, delay / 1e9))
    if busy < 0.8:
        bad.append("workers on CPU or waiting for one only %.0f%% of the time" % (100 * busy))
    if abs(got_cpu - want_cpu) > 0.15:
        bad.append("workers on CPU %.0f%% of their busy time, schedstat says %.0f%%"
                   % (100 * got_cpu, 100 * want_cpu))
    want_kind = "data_workers" if run >= delay else "data_cpu_shortage"
    if want_kind not in kinds:
        bad.append("no %s recommendation (workers ran %.3f s, waited %.3f s for a CPU): %s"
                   % (want_kind, run / 1e9, delay / 1e9, kinds))
if scen == "cpu_shortage":
    # the loop's waits for a CPU: runnable, plus those right after data came
    run = (w["loop_us"]["runnable"] + w["data_then_runnable_us"]) / 1e6
    want_rd = t["main_run_delay_ns"] / 1e9
    print("  loop runnable: report %.3f s, its schedstat run_delay %.3f s" % (run, want_rd))
    if abs(run - want_rd) > 0.15 * want_rd + 0.030:
        bad.append("loop runnable %.3f s, schedstat run_delay %.3f s" % (run, want_rd))
    if share["runnable"] < 0.2:
        bad.append("workers waited for a CPU only %.0f%% of the time" % (100 * share["runnable"]))
    if "data_cpu_shortage" not in kinds:
        bad.append("no CPU-shortage recommendation: %s" % kinds)
if r.get("checkpoints"):
    bad.append("checkpoints found in a loader that writes none: %r" % r["checkpoints"][:2])
for b in bad:
    print("FAIL %s: %s" % (scen, b))
sys.exit(1 if bad else 0)
EOF
}

for scen in io_bound cpu_bound cpu_shortage; do
  cap="$TMP/$scen.gpuio"
  "torch_$scen" "$TMP/$scen.json" "$GPUIO" trace -q --no-export --capture "$cap" -- ||
    { cat "$TMP/$scen.json.log" 2>/dev/null | tail -20; fail "$scen: traced run failed"; }
  "$GPUIO" report --json "$cap" >"$TMP/$scen.report.json" || fail "$scen: report failed"
  check "$scen" "$cap" "$TMP/$scen.json" "$TMP/$scen.report.json" || fail "$scen: the report is wrong"
done

# the page: the section and its step chart, in headless Chromium
"$GPUIO" report --html "$TMP/io.html" "$TMP/io_bound.gpuio" || fail "report --html failed"
grep -q "<h2>Why the loop waited</h2>" "$TMP/io.html" || fail "no wait section in the page"
grep -q "steps: wait for data" "$TMP/io.html" || fail "no step chart in the page"
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ]; then
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$TMP/profile" --virtual-time-budget=3000 --dump-dom "file://$TMP/io.html" \
    >"$TMP/dom.html" 2>/dev/null || fail "chromium --dump-dom failed"
  grep -q 'data-charts="[1-9]' "$TMP/dom.html" || fail "page script did not run"
  grep -q 'data-js-errors="' "$TMP/dom.html" && fail "script errors in the page"
  echo "html: loads in Chromium, $(grep -o 'data-charts="[0-9]*"' "$TMP/dom.html")"
else
  echo "html: chromium not installed: the page was not loaded (apt-get install chromium)"
fi
