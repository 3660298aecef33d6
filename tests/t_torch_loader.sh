#!/usr/bin/env bash
# t_torch_loader: the self-measuring PyTorch DataLoader workloads
# (tests/progs/torch_loader.py, scenarios in tests/torch_lib.sh) run WITHOUT
# any tracer, their own numbers checked against ground truth the test gets
# elsewhere, so that tracer tests can trust them:
#   - every scenario: the loop received every file once, bytes = files x
#     file size, also as counted per worker; steps = ceil(files / batch);
#     t0 <= t1 <= t2 <= next t0 on CLOCK_MONOTONIC inside the schedstat
#     readings; every worker pid reported its end and is gone;
#   - I/O-bound: fincore says the files were cold; the blkio group counted
#     at least those bytes read from the loop device; the loop's total wait
#     is >= 50% of bytes / throttle rate and >= 5x its compute;
#   - CPU-bound: fincore says the files were warm; the workers' CPU loops
#     took >= 50% of files x --cpu-us on the kernel's thread CPU clock; the
#     loop waited > 30% of its time;
#   - CPU shortage: more workers than CPUs; the workers' run_delay (schedstat
#     field 2, read by each worker at its exit) is nonzero and larger than in
#     the CPU-bound run;
#   - the modes: --epochs 2 forks new workers per epoch (one gap between
#     epochs), --steps with --persistent stops mid-epoch and still joins its
#     workers, --until-usr1 runs whole epochs past --epochs until SIGUSR1
#     and ends after the step under way, its workers joined.
# Only those coarse timing checks: machines are noisy.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/torch_lib.sh"
need_torch

torch_io_bound "$TMP/io.json"
# torch_io_bound undid its setup
! losetup -l -n -O BACK-FILE | has -F "$TMP/torch-io.img" || fail "the loop device is still attached"
[ ! -e "$TMP/torch-io.img" ] || fail "the image is still there"
! mountpoint -q "$TMP/torch-io.mnt" || fail "$TMP/torch-io.mnt still mounted"
! ls -d /sys/fs/cgroup/blkio/gpuio-torch-$$ 2>/dev/null || fail "the blkio group is still there"
torch_cpu_bound "$TMP/cpu.json"
torch_cpu_shortage "$TMP/short.json"

# the modes, on the CPU scenario's warm files
"$TORCH_PY" "$TORCH_PROG" --data "$TMP/torch-cpu" --files 10 --batch 4 --workers 2 --epochs 2 \
  --out "$TMP/epochs.json" || fail "torch_loader.py --epochs 2 failed"
"$TORCH_PY" "$TORCH_PROG" --data "$TMP/torch-cpu" --files 40 --batch 2 --workers 3 --steps 5 \
  --persistent --cpu-us 1000 --out "$TMP/steps.json" || fail "torch_loader.py --steps 5 --persistent failed"
# --until-usr1 (the loader bench's long run): epochs until the signal, then a clean end
"$TORCH_PY" "$TORCH_PROG" --data "$TMP/torch-cpu" --files 10 --batch 4 --workers 2 --persistent \
  --until-usr1 --out "$TMP/usr1.json" 2> "$TMP/usr1.err" &
lp=$!
# signalled once the third epoch starts: two whole epochs done, on any machine's speed
wait_line -t 300 -m "torch_loader.py --until-usr1 never reached its third epoch" \
  "torch_loader: epoch 2" "$TMP/usr1.err"
kill -USR1 $lp
wait $lp || fail "torch_loader.py --until-usr1 did not end cleanly on SIGUSR1"

pycheck torch_truth.loader_truth "$TMP" || fail "a workload's own numbers disagree with the ground truth"
echo "PASS: the DataLoader workloads' own numbers agree with fincore, blkio, the throttle and schedstat"
