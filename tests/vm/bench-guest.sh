# tests/vm/bench-guest.sh — the guest side of `make vmbench` (packed as the
# initramfs's /tests/guest-tests.sh by tests/vm/vm.mk; the host side, which
# boots it and computes the ratios, is tests/vm/bench-modes.sh).
#
# Workload: preadloop (tests/progs/preadloop.c), random 4 KiB pread()s of a
# 4 MiB file on /mnt/vda that is in the page cache.  Setups, interleaved
# round by round so drift hits every setup alike:
#
#   base            untraced
#   empty:HOOK      bench_hooks HOOK (tests/vm/bench_hooks.bpf.c): an empty
#                   pair on the hook, TGID lookup only; HOOK = fentry, kprobe,
#                   tp_btf, raw_tp, tp_syscall (syscalls:sys_enter/exit_pread64)
#   gpuio:MODE      gpuio trace --vfs-mode=MODE (fentry, kprobe, syscall)
#   nobatch:MODE    the same with --no-batch (one ring-buffer record per call)
#                   (both also by CPU time: the program's own and the tracer's
#                   while tracing, per call: what the guest's kernel threads
#                   do meanwhile, e.g. an earlier run's deferred frees, is
#                   left out of that figure, not out of the wall time)
#   untraced:MODE   the same mode tracing another, idle process (-p): the
#                   preads are an untraced caller's, which the programs run
#                   for and filter out (the bystander's cost); compared by
#                   the caller's own CPU time (cpu_per_call_ns), which leaves
#                   out the tracer's own work on the guest's one CPU
#   cutN:MODE       the same with the VFS path stopped after stage N (one
#                   round: the cost breakdown of the per-call path, see
#                   bench-modes.sh; a cut run does not batch)
#
# Each run prints one line the host parses:
#   VMBENCH round=R setup=S ns_per_call=N [mode=VFS_MODE]
# Knobs (kernel command line, via run-vm.sh --append): gpuio.bench_calls=N
# (default 20000), gpuio.bench_rounds=N (default 3).

# gpuio hands its links to a gpuio-detach child that closes them one RCU grace
# period at a time (seconds under TCG): the next setup waits for it to end,
# or its RCU work would land in that setup's instructions
# (by /proc: the initramfs's busybox has no pgrep)
detach_running() {
  for c in /proc/[0-9]*/comm; do
    [ "$(cat "$c" 2>/dev/null)" = gpuio-detach ] && return 0
  done
  return 1
}
reaped() {
  n=0
  while detach_running && [ $n -lt 600 ]; do sleep 1; n=$((n + 1)); done
}

vmbench() {
  need_bin gpuio preadloop bench_hooks capture_totals
  calls=20000 rounds=3
  for w in $(cat /proc/cmdline); do
    case "$w" in
      gpuio.bench_calls=*)  calls=${w#*=} ;;
      gpuio.bench_rounds=*) rounds=${w#*=} ;;
    esac
  done
  f=/mnt/vda/bench.dat
  dd if=/dev/urandom of=$f bs=64k count=64 2>/dev/null || fail "cannot write $f"
  cat $f > /dev/null
  preadloop $f 2000 > /dev/null || fail "preadloop does not run"
  echo "vmbench: $calls preads of 4 KiB per run, $rounds rounds, file $f (4 MiB, cached)"
  r=1
  while [ $r -le "$rounds" ]; do
    out=$(preadloop $f "$calls") || fail "preadloop failed"
    echo "VMBENCH round=$r setup=base $(echo "$out" | grep -o 'ns_per_call=[0-9]*') $(echo "$out" | grep -o 'cpu_per_call_ns=[0-9]*')"
    for h in fentry kprobe tp_btf raw_tp tp_syscall; do
      out=$(bench_hooks $h -- preadloop $f "$calls" 2>/tmp/bh.err) || { cat /tmp/bh.err; fail "bench_hooks $h failed"; }
      echo "VMBENCH round=$r setup=empty:$h $(echo "$out" | grep -o 'ns_per_call=[0-9]*') $(echo "$out" | grep -o 'cpu_per_call_ns=[0-9]*') $(grep -o 'hits=[0-9]*' /tmp/bh.err)"
    done
    for m in fentry kprobe syscall; do
      for b in gpuio nobatch; do
        opt=; [ $b = nobatch ] && opt=--no-batch
        gpuio trace -v --vfs-mode=$m $opt --no-export --capture /tmp/bench.gpuio -- preadloop $f "$calls" > /tmp/gb.out 2>&1 ||
          { cat /tmp/gb.out; fail "gpuio trace --vfs-mode=$m $opt failed"; }
        reaped
        tot=$(capture_totals /tmp/bench.gpuio) || fail "capture_totals failed"
        vm=$(echo "$tot" | sed -n 's/^header vfs_mode=\([^ ]*\).*/\1/p')
        ev=$(echo "$tot" | grep "^file $f " | tr ' ' '\n' | grep '^read_ops=')
        dr=$(echo "$tot" | sed -n 's/^stats .* drops=\([0-9]*\).*/ drops=\1/p')
        # by CPU time: the program's own plus the tracer's while tracing, per call
        pc=$(grep -o 'cpu_per_call_ns=[0-9]*' /tmp/gb.out | cut -d= -f2)
        tc=$(sed -n 's/.*tracer CPU while tracing: \([0-9]*\) ns.*/\1/p' /tmp/gb.out)
        [ -n "$pc" ] && [ -n "$tc" ] || { cat /tmp/gb.out; fail "no cpu_per_call_ns or tracer CPU line (gpuio trace -v)"; }
        cpu=$(( pc + tc / calls ))
        echo "VMBENCH round=$r setup=$b:$m $(grep -o 'ns_per_call=[0-9]*' /tmp/gb.out) cpu_per_call_ns=$cpu mode=$vm $ev$dr"
        # the start: gpuio's own "started in W ms (C ms CPU): parts" line
        grep -o 'started in .*' /tmp/gb.out | sed "s/^/VMSTART round=$r setup=$b:$m /"
      done
    done
    for m in fentry kprobe syscall; do
      sleep 1000 &
      idle=$!
      rm -f /tmp/gi.err       # not the last run's "tracing pid"
      gpuio trace --vfs-mode=$m --no-export --capture /tmp/idle.gpuio -p $idle > /tmp/gi.err 2>&1 &
      gp=$!
      i=0
      while ! grep -qs "tracing pid" /tmp/gi.err && [ $i -lt 300 ]; do sleep 1; i=$((i + 1)); done
      grep -q "tracing pid" /tmp/gi.err || { echo "after $i s:"; cat /tmp/gi.err; ps; fail "gpuio trace -p (untraced:$m) did not start"; }
      out=$(preadloop $f "$calls") || fail "preadloop failed"
      kill -INT $gp; wait $gp
      kill $idle; wait $idle 2>/dev/null
      reaped
      echo "VMBENCH round=$r setup=untraced:$m $(echo "$out" | grep -o 'ns_per_call=[0-9]*') $(echo "$out" | grep -o 'cpu_per_call_ns=[0-9]*')"
    done
    r=$((r + 1))
  done
  # Where the instructions go: the same runs stopped after each stage of the
  # VFS path (GPUIO_BENCH_CUT, bpf/trace/common.bpf.h). -icount repeats
  # exactly, so one round is enough.
  for cut in 1 2 3 4 5 6; do
    for m in fentry kprobe syscall; do
      GPUIO_BENCH_CUT=$cut gpuio trace -q --vfs-mode=$m --no-export --capture /tmp/bench.gpuio -- preadloop $f "$calls" > /tmp/gb.out 2>&1 ||
        { cat /tmp/gb.out; fail "gpuio trace --vfs-mode=$m (cut $cut) failed"; }
      reaped
      echo "VMBENCH round=1 setup=cut$cut:$m $(grep -o 'ns_per_call=[0-9]*' /tmp/gb.out)"
    done
  done
}
check vmbench vmbench
