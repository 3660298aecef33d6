#!/usr/bin/env bash
# t_monitor_threads: `gpuio monitor`'s thread-time series
# (gpuio_thread_seconds_total{state}, gpuio_loop_wait_seconds_total{cause},
# gpuio_loop_seconds_total and their gpuio_process_ twins) against the
# kernel's own accounting, a real PyTorch loop's own clocks and `gpuio
# report` of the same run (checks: tests/checks/thread_time.py).
#
# One daemon (--window 0), two cgroup v2 children, scraped with curl and
# parsed strictly (and by promtool when installed):
#  (a) tests/progs/thread_states (3 threads: 6 x 60 ms of CPU each, on 2
#      CPUs so they also wait for one; then 6 x 40 ms asleep in nanosleep,
#      recv() on a socketpair, read() on a pipe), every thread left alive and
#      asleep: its process series' on_cpu and runnable equal the sums of
#      /proc/PID/task/*/schedstat (on-CPU, run delay) within 10% (on-CPU:
#      plus the node's steal time in the run above; a VM's vCPU taken by
#      the host is on a CPU by the clock, not by the task clock); network
#      equals its own recv() time within 10%; other_sleep holds nanosleep +
#      pipe; the cgroup series equals the process's; no loop series (no
#      producer woke it).
#  (b) tests/progs/torch_shapes.py loader (2 DataLoader workers sleeping
#      20 ms per sample: the loop waits for data most of its 4 s), launched
#      by `gpuio trace` (two BPF users at once) from the cgroup: the loop
#      series of comm="python3" equal `gpuio report`'s loop of the same run
#      within 10% (waiting_for_data, span), and are 80-105% of the
#      program's own next() time; the cgroup's on_cpu equals its cpu.stat
#      usage_usec increase within 25% (+ steal above; 18-19% seen, unexplained).
#  (c) the same loop on busy CPUs (2 workers computing 15 ms a sample, the
#      loop 5 ms a step, 2 CPUs), not traced: its loop wait (data: asleep
#      until a worker's batch, then waiting for a CPU) within 15% of the
#      program's own next() time.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/monitor_lib.sh"
source "$(dirname "$0")/torch_lib.sh"
need_torch
STATES="$GPUIO_TESTS/thread_states"
[ -x "$STATES" ] || fail "$STATES missing (make test-progs)"
SHAPES_PROG="$GPUIO_SRC/tests/progs/torch_shapes.py"

# the cgroups first: the daemon names a cgroup from its scan (at most every 2 s)
CG_A=$(mk_cgroup "gpuio-test-threads-$$")
CG_B=$(mk_cgroup "gpuio-test-loop-$$")
[ -r "$CG_B/cpu.stat" ] || skip "no cpu.stat in $CG_B"
mon_start --window 0 --listen 127.0.0.1:$MON_PORT --top-k 200
grep -q 'thread time: on' "$TMP/monitor.log" || { cat "$TMP/monitor.log"; fail "the daemon did not say thread time is on"; }

# (a) against schedstat
scrape "$TMP/a0.txt"
S0=$(node_steal_s)
start_in_cgroup "$CG_A" "$STATES" 6 60 40 >"$TMP/states.out"
poll -t 60 -i 0.1 grep -q '^ready' "$TMP/states.out" || { cat "$TMP/states.out"; fail "thread_states never got ready"; }
PID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["pid"])' "$TMP/states.out")
head -n 1 "$TMP/states.out" > "$TMP/states.json"
sleep 0.3                                  # every thread parked
cat /proc/"$PID"/task/*/schedstat > "$TMP/schedstat.txt"
S1=$(node_steal_s)
scrape "$TMP/a1.txt"
cat "$TMP/schedstat.txt"
pycheck thread_time.schedstat "$TMP/a0.txt.json" "$TMP/a1.txt.json" "$TMP/schedstat.txt" "$TMP/states.json" \
  "/${CG_A#"$CGV2"/}" thread_states "$(awk -v a="$S0" -v b="$S1" 'BEGIN { print b - a }')" || fail "the thread-time series disagree with schedstat (FAIL lines above)"
kill "$CGPID"; wait "$CGPID" 2>/dev/null || true; proc_unreg "$CGPID"

# (b) a real PyTorch loop, traced at the same time
torch_warm_data "$TMP/data" 32 65536
scrape "$TMP/b0.txt"
U0=$(awk '$1 == "usage_usec" { print $2 }' "$CG_B/cpu.stat"); S0=$(node_steal_s)
"$GPUIO" trace -q --no-export --capture "$TMP/loop.gpuio" -- \
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG_B" \
  "$TORCH_PY" "$SHAPES_PROG" loader --data "$TMP/data" --files 32 --workers 2 --batch 4 \
  --cpu-us 0 --sleep-us 20000 --step-cpu-us 5000 --seconds 4 --out "$TMP/loop.json" \
  >"$TMP/loop.log" 2>&1 || { tail -n 30 "$TMP/loop.log"; fail "gpuio trace -- torch_shapes.py loader failed"; }
tail -n 2 "$TMP/loop.log"
U1=$(awk '$1 == "usage_usec" { print $2 }' "$CG_B/cpu.stat"); S1=$(node_steal_s)
sleep 1.5                                  # a refresh after the exits
scrape "$TMP/b1.txt"
"$GPUIO" report --json "$TMP/loop.gpuio" > "$TMP/loop.report.json" 2>"$TMP/report.log" ||
  { cat "$TMP/report.log"; fail "gpuio report failed"; }
grep -E "^gpuio_(process_)?(thread|loop)_[a-z_]*\{cgroup=\"/${CG_B#"$CGV2"/}\"" "$TMP/b1.txt" | grep -v 'comm="sh"' || true
pycheck thread_time.torch "$TMP/b0.txt.json" "$TMP/b1.txt.json" "$TMP/loop.report.json" "$TMP/loop.json" \
  "/${CG_B#"$CGV2"/}" "$U0" "$U1" "$(awk -v a="$S0" -v b="$S1" 'BEGIN { print b - a }')" || fail "the loop series disagree with the report or the program (FAIL lines above)"

# (c) a busy loop: 2 workers computing 15 ms a sample on 2 CPUs, untraced
torch_warm_data "$TMP/busy" 32 65536
scrape "$TMP/c0.txt"
# its launcher holds it 2 s in the cgroup before the exec (as a batch
# system's step launcher might): not the program's loop time
start_in_cgroup "$CG_B" sh -c 'sleep 2; exec "$@"' sh "$TORCH_PY" "$SHAPES_PROG" loader --data "$TMP/busy" --files 32 --workers 2 \
  --batch 4 --cpu-us 15000 --sleep-us 0 --step-cpu-us 5000 --seconds 4 --out "$TMP/busy.json" \
  >"$TMP/busy.log" 2>&1
wait "$CGPID" || { tail -n 30 "$TMP/busy.log"; fail "torch_shapes.py loader (busy) failed"; }
proc_unreg "$CGPID"
sleep 1.5                                  # a refresh after the exits
scrape "$TMP/c1.txt"
pycheck thread_time.busy "$TMP/c0.txt.json" "$TMP/c1.txt.json" "$TMP/busy.json" "/${CG_B#"$CGV2"/}" ||
  fail "the busy loop's wait series is off the program's next() (FAIL lines above)"
mon_stop
echo "thread time and loop waits match schedstat, cpu.stat, the program and the report"
