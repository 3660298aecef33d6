#!/usr/bin/env bash
# t_shape_ranks: several training loops in one trace, one per rank, started
# by one launcher as torchrun starts one loop per GPU; ranks of different
# speeds (a straggler).
#
# tests/progs/torch_shapes.py rank under `python3 -m torch.distributed.run
# --standalone --nproc_per_node N` (scenario shape_ranks in
# tests/shapes_lib.sh; its own launcher where torchrun does not start ranks
# here): each rank a DataLoader with 2 workers over its own warm files,
# 200 us of CPU then a 2 ms vs 15 ms sleep per sample (3 ranks: 2, 8, 20 ms),
# 2.5 s of steps. Runs:
# 2 ranks traced from the launcher's start, 2 ranks attached to (the
# launcher's pid) once every rank's loop starts (1.5 s), 3 ranks traced from
# the start. Each run:
#   - the programs' own numbers (one process per rank, each with its own
#     files and workers, all gone at the end; the rank slowest per sample
#     waited the largest share of its loop);
#   - both exports pass check_struct with the counts `gpuio convert` said;
#   - the report (shapes_truth.report ranks): N loops, one on each rank's
#     main thread (none on a worker), each one's waiting_for_data within 10%
#     + 20 ms of that rank's own waits inside the window, less its own CPU
#     time inside next() (unpickling the batch: the loop on a CPU); each woken only by
#     its own rank's workers (no waker of another rank); "stragglers" one per
#     loop by waited_pct descending, stragglers[0] the rank that waited the
#     largest share by its own clock, each with its loop's numbers and cause
#     = its loop's largest part but on_cpu.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/shapes_lib.sh"
need_torch

# ranks of different speeds: a per-sample sleep in the workers, with little
# CPU. CPU-bound workers of several ranks on 2 cores would leave every loop
# mostly waiting for a CPU, preempted inside next(): time the program counts
# as waiting and the report as runnable (t_report_wait's CPU-shortage
# scenario is where that is checked).
runs=("launch 2 200 2000,15000" "attach 2 200 2000,15000" "launch 3 200 2000,8000,20000")
for run in "${runs[@]}"; do
  read -r mode n cpu sleep <<<"$run"
  shape_ranks "$mode" "$TMP/$mode$n" "$n" "$cpu" "$sleep"
  shape_own ranks "$TMP/$mode$n"
  shape_exports "$TMP/$mode$n"
done
bad=0
for run in "${runs[@]}"; do
  read -r mode n cpu sleep <<<"$run"
  shape_report ranks "$TMP/$mode$n" || bad=1
done
[ "$bad" -eq 0 ] || fail "the report does not match the programs (FAIL lines above)"
