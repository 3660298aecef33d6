#!/usr/bin/env bash
# t_shape_remote: DataLoader workers that fetch their samples over HTTP from
# an object store (remote data: the loop waits on the network, not on files).
#
# tests/progs/object_store.py on 127.0.0.1 (40 ms per request, 96 objects of
# 256 KiB, its own log of every request on CLOCK_MONOTONIC) and
# tests/progs/torch_shapes.py remote (scenario shape_remote in
# tests/shapes_lib.sh): 2 workers, one HTTP connection each. Traced with
# --all-fds (sockets) from its start (launch) and attached to once its loop
# starts (attach, 1.5 s). Each run:
#   - the program's own numbers against the store's log (requests and bytes
#     equal, each request >= the latency, waits >= 50% of requests x latency
#     / workers);
#   - both exports pass check_struct with the counts `gpuio convert` said;
#   - the report (shapes_truth.report remote): the loop is the program's main
#     thread and loops[0], waiting_for_data within 10% + 20 ms of its own
#     waits inside the window; woken by its workers; meanwhile they mostly
#     wait on the network (network the largest share); its peers hold
#     127.0.0.1:PORT with bytes >= what the store sent for the traced
#     requests and requests = the store's count (attach: between the
#     requests wholly inside the window and those overlapping it); a
#     "remote_data" recommendation.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/shapes_lib.sh"
need_torch

for mode in launch attach; do
  shape_remote "$mode" "$TMP/$mode"
  shape_own remote "$TMP/$mode"
  shape_exports "$TMP/$mode"
done
bad=0
for mode in launch attach; do shape_report remote "$TMP/$mode" || bad=1; done
[ "$bad" -eq 0 ] || fail "the report does not match the program (FAIL lines above)"
