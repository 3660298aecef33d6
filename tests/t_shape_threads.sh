#!/usr/bin/env bash
# t_shape_threads: a loop fed by reader THREADS of its own process (the
# tf.data / DALI / webdataset shape), not by DataLoader worker processes.
#
# tests/progs/torch_shapes.py threads (scenario shape_threads in
# tests/shapes_lib.sh): 2 reader threads read cold files (ext4 on a loop
# device, throttled to 4 MiB/s by blkio) and hand batches to the loop through
# a queue.Queue; the loop times its queue.get(). Run traced from its start
# (launch) and attached to once its loop starts (attach, 1.5 s). Each run:
#   - the program's own numbers against the scenario (cold per fincore, blkio
#     counted the bytes, waits >= 50% of bytes / rate and >= 5x compute,
#     every file read once by a reader thread);
#   - both exports (.json, .pftrace) pass check_struct with the counts
#     `gpuio convert` said it wrote;
#   - the report (shapes_truth.report threads): the loop is the program's
#     main thread and loops[0]; its waiting_for_data is the program's own
#     queue.get() time inside the trace window within 10% + 20 ms; its wakers
#     are reader threads (kind "thread", the program's pid), every reader that
#     handed a batch to the waiting loop among them; meanwhile they mostly
#     read files (reading_files the largest share, >= 50%).
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/shapes_lib.sh"
need_torch

for mode in launch attach; do
  shape_threads "$mode" "$TMP/$mode"
  shape_own threads "$TMP/$mode"
  shape_exports "$TMP/$mode"
done
bad=0
for mode in launch attach; do shape_report threads "$TMP/$mode" || bad=1; done
[ "$bad" -eq 0 ] || fail "the report does not match the program (FAIL lines above)"
