#!/usr/bin/env bash
# t_report_hosts: `gpuio report --hosts` over one job's ranks traced apart
# (a capture per rank, as per host in a multi-node job) names the straggler,
# its cause, and what the other ranks did during its waits.
#
# tests/progs/torch_shapes.py rank --allreduce: each rank a DataLoader with 2
# workers over its own warm files, a gloo all_reduce after each step (the
# faster ranks wait in it for the slowest), 40 steps; each rank under its own
# `gpuio trace`. Runs: 2 ranks whose workers sleep 2 ms and 15 ms per sample
# (rank 1 the straggler), 3 ranks at 15, 2 and 2 ms (rank 0). Checks
# (tests/checks/hosts_truth.py), against the ranks' own CLOCK_MONOTONIC, thread
# CPU and schedstat (inside next(), inside all_reduce, and over the rank's
# life: torch_shapes.py reads it last and exits at once):
#   - the straggler is the rank that waited for data the largest share of its
#     run by its own clock (its sleep inside next(): its wait less its CPU and
#     run delay there, up to that plus the run delay, 10% + 20 ms); where the
#     ranks' bounds overlap (a busy machine, a slow rendezvous), any of them,
#     and the output says the clocks cannot tell;
#   - its cause (its largest part but on_cpu, over its whole life, import
#     torch included: 3 ranks on 2 CPUs wait for a CPU there) is the one its
#     bounds on waiting for data, runnable and the rest of its off-CPU time
#     put first; where they overlap the output says it is not checked;
#   - its waits within 10% + 20 ms of its own sleep inside next();
#   - every other rank's main thread is a loop, blocked during the
#     straggler's waits for as long as its all_reduce overlapped them:
#     between that overlap less the straggler's CPU and run delay inside
#     next() and its own in all_reduce, and the overlap (10% + 20 ms); busy
#     with futex, socket or poll (the collective) where that surely took
#     half the waits (else said);
#   - one machine: the captures' clocks meet with no shift;
#   - the text names the straggler's capture; --hosts with --html is refused.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/torch_lib.sh"
need_torch
SHAPES_PROG="$GPUIO_SRC/tests/progs/torch_shapes.py"

run_job() {  # run_job NAME N SLEEPS: N ranks, each traced apart
  local name=$1 n=$2 sleeps=$3 r pids=() port=$((29600 + RANDOM % 300))
  for ((r = 0; r < n; r++)); do
    torch_warm_data "$TMP/d/rank-$r" 8 65536
  done
  for ((r = 0; r < n; r++)); do
    env RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port OMP_NUM_THREADS=1 \
      "$GPUIO" trace -q --no-export --capture "$TMP/$name.r$r.gpuio" -- "$TORCH_PY" "$SHAPES_PROG" rank \
      --data "$TMP/d" --files 8 --workers 2 --batch 4 --cpu-us 200 --sleep-us "$sleeps" \
      --step-cpu-us 2000 --steps 40 --allreduce --out "$TMP/$name.r$r.json" >"$TMP/$name.r$r.log" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < n; r++)); do
    wait "${pids[$r]}" || { tail -n 20 "$TMP/$name.r$r.log"; fail "$name: rank $r failed"; }
  done
  local caps=() outs=()
  for ((r = 0; r < n; r++)); do caps+=("$TMP/$name.r$r.gpuio"); outs+=("$TMP/$name.r$r.json"); done
  "$GPUIO" report --hosts --json "${caps[@]}" >"$TMP/$name.json" 2>"$TMP/$name.err" ||
    { cat "$TMP/$name.err"; fail "$name: report --hosts --json failed"; }
  "$GPUIO" report --hosts "${caps[@]}" >"$TMP/$name.txt" 2>"$TMP/$name.err" ||
    { cat "$TMP/$name.err"; fail "$name: report --hosts failed"; }
  sed -n '1,12p' "$TMP/$name.txt"
  pycheck hosts_truth.hosts "$TMP/$name.json" "${outs[@]}" || fail "$name: the report across hosts disagrees with the ranks' clocks"
  local slow
  slow=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["across_hosts"]["straggler"]["capture"])' "$TMP/$name.json")
  grep -q "^ *straggler: .* ($slow), loop pid" "$TMP/$name.txt" || fail "$name: the text does not name the straggler's capture"
}

run_job two 2 2000,15000
run_job three 3 15000,2000,2000

"$GPUIO" report --hosts --html "$TMP/x.html" "$TMP/two.r0.gpuio" "$TMP/two.r1.gpuio" 2>"$TMP/err" &&
  fail "--hosts with --html accepted"
grep -q "exclusive" "$TMP/err" || { cat "$TMP/err"; fail "--hosts --html: no reason given"; }
echo "PASS: the straggler, its cause and the others' collective waits, by the ranks' own clocks"
