#!/usr/bin/env bash
# t_shape_pin_memory: DataLoader(pin_memory=True): the loop is fed by the
# pin-memory thread of its own process, which is fed by the worker processes
# (loop <- pin-memory thread <- workers).
#
# tests/progs/torch_shapes.py loader --pin-memory (scenario shape_loader in
# tests/shapes_lib.sh): 2 persistent workers, warm files, 25 ms of CPU per
# sample. Without CUDA DataLoader's own pin-memory thread still runs (its
# _pin_memory_loop) with a stand-in for the copy to pinned memory (the
# program's docstring). Traced from its start (launch, 3 s of steps) and
# attached to once its loop starts (attach, 1.5 s of a 4 s loop). Each run:
#   - the program's own numbers (the pin-memory thread is a thread of the
#     loop's process, not the loop; workers reported and gone; it waited
#     > 30% of its loop);
#   - both exports pass check_struct with the counts `gpuio convert` said;
#   - the report (shapes_truth.report pin_memory): the loop is the program's
#     main thread and loops[0], waiting_for_data within 10% + 20 ms of its
#     own waits inside the window; the waker with the most wait is the
#     pin-memory thread (kind "thread", the program's pid).
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/shapes_lib.sh"
need_torch

shape_loader launch "$TMP/launch" 3 --pin-memory
shape_loader attach "$TMP/attach" 4 --pin-memory
for mode in launch attach; do
  shape_own pin_memory "$TMP/$mode"
  shape_exports "$TMP/$mode"
done
bad=0
for mode in launch attach; do shape_report pin_memory "$TMP/$mode" || bad=1; done
[ "$bad" -eq 0 ] || fail "the report does not match the program (FAIL lines above)"
