#!/usr/bin/env bash
# t_shape_noworkers: a DataLoader with num_workers=0, the loop thread reading
# its own data (no worker process to wait for: it blocks in its own reads).
#
# tests/progs/torch_shapes.py noworkers (scenario shape_noworkers in
# tests/shapes_lib.sh): 64 cold files of 128 KiB on ext4 on a loop device
# throttled to 4 MiB/s (blkio), read by the Dataset inside next(), which the
# program times (open + read + close per sample). Run traced from its start
# (launch) and attached to once its loop starts (attach, 1.5 s). Each run:
#   - the program's own numbers against the scenario (cold per fincore, blkio
#     counted the bytes, its read time >= 50% of bytes / rate and inside its
#     next() time, all reads on the loop thread, no worker);
#   - both exports pass check_struct with the counts `gpuio convert` said;
#   - the report (shapes_truth.report noworkers): the loop is the program's
#     main thread and loops[0]; its loop_us.file_io is the program's own
#     open+read+close time inside the trace window within 10% + 20 ms; a
#     "no_workers" recommendation (with numbers: the time workers would hide).
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/shapes_lib.sh"
need_torch

for mode in launch attach; do
  shape_noworkers "$mode" "$TMP/$mode"
  shape_own noworkers "$TMP/$mode"
  shape_exports "$TMP/$mode"
done
bad=0
for mode in launch attach; do shape_report noworkers "$TMP/$mode" || bad=1; done
[ "$bad" -eq 0 ] || fail "the report does not match the program (FAIL lines above)"
