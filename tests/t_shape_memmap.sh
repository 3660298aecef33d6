#!/usr/bin/env bash
# t_shape_memmap: memory-mapped data (numpy.memmap) read by DataLoader workers
# only through page faults, never read().
#
# tests/progs/torch_shapes.py memmap (scenario shape_memmap in
# tests/shapes_lib.sh): 3 files of 16 MiB, cold on ext4 on a loop device
# throttled to 16 MiB/s (blkio), mapped by the Dataset in the main process;
# 2 workers copy 256 KiB samples out of the mappings (every byte once); the
# main process asks mincore what was resident before and after. Run traced
# from its start (launch) and attached to once its loop starts (attach,
# 1.5 s). Each run:
#   - the program's own numbers against the scenario (cold per fincore and
#     mincore, every byte touched and resident after, no read() by the
#     workers, blkio counted the bytes, waits >= 50% of bytes / rate);
#   - both exports pass check_struct with the counts `gpuio convert` said;
#   - the report (shapes_truth.report memmap): the loop is the program's
#     main thread and loops[0], waiting_for_data within 10% + 20 ms of its
#     own waits inside the window; woken by its workers (kind "process");
#     meanwhile they mostly take page faults (page_faults the largest share);
#     the report's rows of the 3 files: read_bytes >= the bytes the samples
#     touched, == the bytes mincore saw come in (launch; attach: between the
#     bytes of the samples copied inside the window and that).
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/shapes_lib.sh"
need_torch

for mode in launch attach; do
  shape_memmap "$mode" "$TMP/$mode"
  shape_own memmap "$TMP/$mode"
  shape_exports "$TMP/$mode"
done
bad=0
for mode in launch attach; do shape_report memmap "$TMP/$mode" || bad=1; done
[ "$bad" -eq 0 ] || fail "the report does not match the program (FAIL lines above)"
