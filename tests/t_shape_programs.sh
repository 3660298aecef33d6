#!/usr/bin/env bash
# t_shape_programs: the job-shape programs (tests/progs/torch_shapes.py,
# scenarios in tests/shapes_lib.sh) run WITHOUT any tracer, their own numbers
# checked against the truth the test sets up (shapes_truth.own), so that the
# t_shape_* tests can trust them: 2 ranks under one launcher (each rank its
# own files and workers, the slowest waits the largest share), reader
# threads and no workers on cold throttled files (fincore, blkio, waits >=
# 50% of bytes / rate), memmap (mincore: cold before, every byte resident
# after, no read() in the workers), remote (requests and bytes equal the
# object store's log, each >= its latency), the persistent-worker loop with
# and without pin memory (ran its --seconds, waited > 30%, the pin-memory
# thread is another thread of the loop's process). Coarse timing only.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/shapes_lib.sh"
need_torch

shape_ranks plain "$TMP/ranks" 2 1000,15000
shape_own ranks "$TMP/ranks"
for s in threads noworkers memmap remote; do
  "shape_$s" plain "$TMP/$s"
  shape_own "$s" "$TMP/$s"
done
# the throttled setup is undone at the end as on exit
torch_io_cleanup
! losetup -l -n -O BACK-FILE | has -F "$TMP/shape.img" || fail "the loop device is still attached"
! ls -d "/sys/fs/cgroup/blkio/gpuio-shape-$$" 2>/dev/null || fail "the blkio group is still there"
shape_loader plain "$TMP/loader" 2
shape_own loader "$TMP/loader"
shape_loader plain "$TMP/pin" 2 --pin-memory
shape_own pin_memory "$TMP/pin"
echo "PASS: the job-shape programs' own numbers agree with the scenarios"
