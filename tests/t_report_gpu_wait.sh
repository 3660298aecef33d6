#!/usr/bin/env bash
# t_report_gpu_wait: each GPU idle gap explained by the launching thread's
# state during it, through the same thread-state chain as "why the loop
# waited"; the loop's steps from its NVTX step ranges.
#
# gen_capture gpuwait (tests/gen_capture.c) writes a trainer whose thread 300
# launches six kernels (thread 301 launches once; 302, like PyTorch's autograd
# thread, launches eight inside the busy periods: the most, but no gap ends
# with its launch, so every gap is 300's state), leaving
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
# missing, steps fall back to none (no thread states, no loop). Both exports
# draw the same steps and GPU idle gaps (tests/checks/findings_truth.py).
source "$(dirname "$0")/lib.sh"
GEN="$GPUIO_TESTS/gen_capture"
[ -x "$GEN" ] || fail "missing $GEN (run: make test-progs)"

"$GEN" gpuwait "$TMP/w.gpuio" >"$TMP/w.manifest" || fail "gen_capture gpuwait failed"
"$GPUIO" report --json "$TMP/w.gpuio" >"$TMP/w.json" 2>"$TMP/err" || { cat "$TMP/err"; fail "report --json failed"; }
"$GPUIO" report "$TMP/w.gpuio" >"$TMP/w.txt" 2>"$TMP/err" || { cat "$TMP/err"; fail "report failed"; }
pycheck report_truth.gpu_wait "$TMP/w.manifest" "$TMP/w.json" ||
  fail "launcher states or steps differ from the generator's"
grep -q "its launching thread 300$" "$TMP/w.txt" ||
  { cat "$TMP/w.txt"; fail "the text report's largest gaps do not name the thread that ended them"; }
grep -q "launching thread (most launches) 302, launches 8$" "$TMP/w.txt" &&
  grep -q "the launching threads during the idle gaps (each gap: the thread whose launch ended it): " "$TMP/w.txt" ||
  { cat "$TMP/w.txt"; fail "the text report does not name the launching thread"; }
grep -qE 'the launching threads during the idle gaps .* waiting_for_data 15\.50 ms \(15\.5%\)' "$TMP/w.txt" ||
  { cat "$TMP/w.txt"; fail "the text report's launcher split"; }
grep -q 'STEPS (4: the loop'"'"'s NVTX range "train_step"' "$TMP/w.txt" ||
  { cat "$TMP/w.txt"; fail "the text report's steps are not the NVTX ranges"; }

# the same answer on the timeline: both exports draw the steps and the GPU
# idle gaps with the generator's numbers (and the report's), and import
for ext in json pftrace; do
  "$GPUIO" convert -q "$TMP/w.gpuio" -o "$TMP/w.trace.$ext" || fail "convert to .$ext failed"
  check_struct "$TMP/w.trace.$ext"
done
pycheck findings_truth.gen "$TMP/w.manifest" "$TMP/w.trace.json" "$TMP/w.trace.pftrace" ||
  fail "the exports' steps or GPU idle slices differ from the generator's"
pycheck findings_truth.report "$TMP/w.json" "$TMP/w.trace.json" "$TMP/w.trace.pftrace" ||
  fail "the exports' steps or GPU idle slices differ from the report's JSON"
"$GPUIO" convert -q --no-findings "$TMP/w.gpuio" -o "$TMP/w.none.json" || fail "convert --no-findings failed"
! grep -q '"gpuio_step"\|"gpuio_gap"' "$TMP/w.none.json" || fail "--no-findings still drew findings"

# with Python stacks: where the launching thread was in each gap
"$GEN" gpuwait "$TMP/s.gpuio" stacks >"$TMP/s.manifest" || fail "gen_capture gpuwait stacks failed"
"$GPUIO" report --json "$TMP/s.gpuio" >"$TMP/s.json" || fail "report --json (stacks) failed"
pycheck report_truth.gpu_gap_sites "$TMP/s.manifest" "$TMP/s.json" || fail "the gaps' launcher sites"
"$GPUIO" report "$TMP/s.gpuio" | has "at the line /job/train.py:33 train_step$" ||
  fail "the text report does not say where the launcher was"

# collectives: an NCCL all-reduce runs from the step's last kernel (100 ms)
# to 112 ms while the loop sleeps in cudaStreamSynchronize (102-117.5 ms):
# 10 ms of it is waiting for the other ranks, 5.5 ms for the GPU, and the
# last gap starts at 112 ms (gen_capture gpuwait collective's manifest)
"$GEN" gpuwait "$TMP/c.gpuio" collective >"$TMP/c.manifest" || fail "gen_capture gpuwait collective failed"
"$GPUIO" report --json "$TMP/c.gpuio" >"$TMP/c.json" || fail "report --json (collective) failed"
pycheck report_truth.gpu_wait "$TMP/c.manifest" "$TMP/c.json" ||
  fail "a sync during a collective is not the wait for the other ranks"
"$GPUIO" report "$TMP/c.gpuio" >"$TMP/c.txt" || fail "report (collective) failed"
grep -q "waiting_for_ranks 10.00 ms" "$TMP/c.txt" ||
  { cat "$TMP/c.txt"; fail "the text report does not show the wait for the other ranks"; }

# without thread states: named, not explained, and said so
"$GEN" gpuwait "$TMP/n.gpuio" nosched >/dev/null || fail "gen_capture gpuwait nosched failed"
"$GPUIO" report --json "$TMP/n.gpuio" >"$TMP/n.json" || fail "report --json (nosched) failed"
"$GPUIO" report "$TMP/n.gpuio" >"$TMP/n.txt" || fail "report (nosched) failed"
pycheck report_truth.gpu_wait_nosched "$TMP/n.json" || fail "without thread states"
grep -q "no thread states in this capture" "$TMP/n.txt" || { cat "$TMP/n.txt"; fail "nosched: not said"; }
echo "PASS: every GPU gap split by the launching thread's state to the ns; steps from NVTX"
