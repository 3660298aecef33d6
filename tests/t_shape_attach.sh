#!/usr/bin/env bash
# t_shape_attach: `gpuio trace -p` on a training job already running: the
# DataLoader loop with 2 persistent workers (the shape of t_report_wait, here
# attached to instead of launched).
#
# tests/progs/torch_shapes.py loader (scenario shape_loader in
# tests/shapes_lib.sh): warm files, 25 ms of CPU per sample in the workers,
# 5 ms of compute per step, 12 s of steps. gpuio attaches 4 s after the
# program started, for 5 s (-d 5s). The truth is the program's own waits
# clipped to the trace window (the capture's first and last timestamps,
# `gpuio info --json`). Checked:
#   - the program's own numbers (the workers reported and are gone, it waited
#     > 30% of its loop, ran its 12 s, waits inside the window);
#   - both exports pass check_struct with the counts `gpuio convert` said;
#   - the report (shapes_truth.report attach): the loop found is the
#     training process's main thread (not a worker) and loops[0]; its
#     waiting_for_data within 10% + 20 ms of the program's waits inside the
#     window; woken by its workers.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/shapes_lib.sh"
need_torch

SHAPE_ATTACH_AT=4 SHAPE_ATTACH_FOR=5s shape_loader attach "$TMP/attach" 12
shape_own attach "$TMP/attach"
shape_exports "$TMP/attach"
shape_report attach "$TMP/attach" || fail "the report does not match the program (FAIL lines above)"
