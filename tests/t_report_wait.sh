#!/usr/bin/env bash
# t_report_wait: `gpuio report` says how long a real PyTorch DataLoader loop
# waited for data and why, against the program's own measurements.
#
# tests/progs/torch_loader.py times every next() on its DataLoader with
# perf_counter, its thread CPU and its schedstat run delay around it, and
# reads its own schedstat (tests/torch_lib.sh has the scenarios, each traced
# here with `gpuio trace --no-export --capture`):
#   - I/O-bound (cold files, device throttled to 4 MiB/s): the report's loop
#     thread is the program's (pid, main tid); its sleep waiting for data
#     (waiting_for_data less data_then_runnable) is what the program slept
#     inside next() (its wall time there less its CPU and run delay there,
#     which the report counts as on_cpu and runnable) within 10% + 20 ms, or
#     between that sleep and it plus data_then_runnable (schedstat's run
#     delay starts at the enqueue, the report's at the wake-up: an IPI
#     later); the processes that woke it are
#     exactly its workers; meanwhile they mostly (>= 50%) read files, the data
#     files named by the program's data directory, page-cache hit ratio < 20%;
#     the recommendation is about storage (data_storage); steps against the
#     program's own next() windows: >= 80% of them start inside one, >= 90% of
#     the program's waits >= 5 ms are found (a prefetched batch leaves no wait
#     to find a step by); no checkpoint found; the HTML page (headless
#     Chromium) shows the section and its step chart with no script error;
#   - CPU-bound (warm files, 25 ms of CPU per sample): the same match; the
#     workers' share of busy time on a CPU (vs waiting for one) is their
#     schedstat run / (run + run_delay) within 15 points; the recommendation
#     is the one the report's shares call for, and, where schedstat's share
#     is more than those 15 points from the 50% where the advice turns, the
#     one schedstat calls for: the workers' computing (data_workers) when
#     they ran more than they waited, else a CPU shortage (a busy machine);
#     nearer, the output says the advice was not checked against schedstat;
#   - CPU shortage (3 x nproc workers): the workers waited for a CPU (>= 20%
#     of their time while the loop waited), the recommendation says so
#     (data_cpu_shortage), and the loop's runnable time over its life (the
#     trace's first state to its exit) is its own schedstat run_delay since
#     it started, read right before it writes its output, within 15% + 30 ms
#     (up to the wall time left from that read to its exit).
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/torch_lib.sh"
need_torch

check() {  # SCENARIO CAPTURE PROGRAM_JSON REPORT_JSON
  pycheck report_truth.loader_wait "$@"
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
grep -q "<figcaption>STEPS (" "$TMP/io.html" && grep -q "<title>1: wait " "$TMP/io.html" || fail "no step chart in the page"
page_loads "$TMP/io.html"
