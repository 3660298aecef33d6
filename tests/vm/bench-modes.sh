#!/usr/bin/env bash
# tests/vm/bench-modes.sh — `make vmbench`: the per-call cost of each gpuio VFS
# attach mode on the stock 6.1 kernel (QEMU/TCG), as a multiple of an empty
# program on the same hook.  Ratios only: TCG's absolute timings say nothing
# about real hardware (and TCG inflates BPF and trampolines unevenly).
#
#   tests/vm/bench-modes.sh [--initrd F] [--calls N] [--rounds N] [--log F]
#                           [--wall]
#
# By default QEMU runs with `-icount shift=0,sleep=off`: the guest clock
# advances 1 ns per emulated instruction, so "ns" are guest instructions and
# the numbers repeat to within a few per mille whatever else the host is
# doing (wall-clock TCG timings on this shared 2-core host drift by +-20%).
# The ratio is then one of instructions added per call: it leaves out cache
# and TLB effects, and says nothing about absolute cost.  --wall measures
# wall time instead (noisy; use more rounds).
#
# Boots build/vm/initramfs-bench.cpio (tests/vm/bench-guest.sh), then for each
# setup takes the median ns/call over the rounds:
#
#   added(X)  = median(X) - median(base)
#   ratio(M)  = added(gpuio:M) / added(empty:HOOK(M))
#
# with HOOK(fentry) = fentry, HOOK(kprobe) = kprobe and, for the syscall
# family, the hook gpuio actually used (raw_tp on 6.1, tp_btf on 6.2+).
# Markdown on stdout (and build/vm/bench.md); exit 1 when the VM run failed.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
initrd=$src/build/vm/initramfs-bench.cpio
calls=20000 rounds=3 log='' icount='-icount shift=0,sleep=off'
while [ $# -gt 0 ]; do
  case "$1" in
    --initrd) initrd=$2; shift ;;
    --calls)  calls=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --log)    log=$2; shift ;;
    --wall)   icount='' ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "bench-modes: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
out=$(mktemp "${TMPDIR:-/tmp}/gpuio-vmbench.XXXXXX")
trap 'rm -f "$out"' EXIT
echo "bench-modes: booting the bench VM ($calls calls x $rounds rounds; a few minutes under TCG)" >&2
GPUIO_VM_QEMU_ARGS="${GPUIO_VM_QEMU_ARGS:-} $icount" \
"$src/tests/vm/run-vm.sh" --initrd "$initrd" --timeout 1800 \
  --append "gpuio.bench_calls=$calls gpuio.bench_rounds=$rounds" >"$out" 2>&1
rc=$?
[ -n "$log" ] && cp "$out" "$log"
if [ $rc -ne 0 ]; then
  cat "$out" >&2
  echo "bench-modes: the VM run failed" >&2
  exit 1
fi

# "VMBENCH round=R setup=S ns_per_call=N ..." -> per-setup median, then ratios.
unit=$([ -n "$icount" ] && echo "-icount: 1 ns = 1 guest instruction" || echo "wall clock")
grep -o 'VMBENCH .*' "$out" | awk -v unit="$unit" '
  function cmedian(s,   n, i, j, t, v) {
    n = split(cvals[s], v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function median(s,   n, i, j, t, v) {
    n = split(vals[s], v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  {
    setup = ""; ns = ""; cpu = ""
    for (i = 2; i <= NF; i++) {
      split($i, kv, "=")
      if (kv[1] == "setup") setup = kv[2]
      else if (kv[1] == "ns_per_call") ns = kv[2]
      else if (kv[1] == "cpu_per_call_ns") cpu = kv[2]
      else if (kv[1] == "mode") mode[setup] = kv[2]
      else if (kv[1] == "read_ops") ops[setup] = ops[setup] " " kv[2]
      else if (kv[1] == "drops") drops[setup] = drops[setup] " " kv[2]
    }
    if (setup != "" && cpu != "") cvals[setup] = cvals[setup] " " cpu
    if (setup != "" && ns != "") { vals[setup] = vals[setup] " " ns; if (!(setup in seen)) { seen[setup] = 1; order[++n] = setup } }
  }
  END {
    if (!("base" in seen)) { print "bench-modes: no base runs in the log" > "/dev/stderr"; exit 1 }
    b = median("base")
    printf "## gpuio VFS modes in the 6.1 VM (QEMU/TCG, 1 vCPU, %s): added cost per pread, as a multiple of an empty program on the same hook\n\n", unit
    printf "| setup | median ns/call | added ns/call |\n|---|---:|---:|\n"
    for (i = 1; i <= n; i++) { s = order[i]; m[s] = median(s); printf "| %s%s | %.0f | %.0f |\n", s, (s in mode) ? " (" mode[s] ")" : "", m[s], m[s] - b }
    printf "\n| gpuio mode | hook used | empty program on it, added ns | gpuio added ns | ratio gpuio/empty |\n|---|---|---:|---:|---:|\n"
    split("fentry kprobe syscall", ms, " ")
    split("1.5 1.5 2.5", tg, " ")
    for (k = 1; k <= 3; k++) for (pf = 1; pf <= 2; pf++) {
      g = (pf == 1 ? "gpuio:" : "nobatch:") ms[k]
      if (!(g in seen)) continue
      h = ms[k]
      if (h == "syscall") h = (mode[g] ~ /^sys:each/) ? "tp_syscall" : (mode[g] == "sys:tp_btf") ? "tp_btf" : "raw_tp"
      e = "empty:" h
      ea = m[e] - b; ga = m[g] - b
      r = (ea > 0) ? sprintf("%.1f", ga / ea) : "n/a"
      printf "| %s%s | %s | %.0f | %.0f | %s (target %s) |\n", ms[k], pf == 1 ? "" : " --no-batch", mode[g], ea, ga, r, tg[k]
    }
    # the same by CPU time: the CPU of the program (the BPF programs run in
    # it) plus that of the tracer while tracing; other guest work left out
    if ("gpuio:fentry" in cvals || "gpuio:kprobe" in cvals || "gpuio:syscall" in cvals) {
      cb = cmedian("base")
      printf "\n### By CPU time (CPU of the traced program + CPU of the tracer while tracing, per call; the wall time above also holds other work of the guest)\n\n"
      printf "| gpuio mode | empty program, added | gpuio added | ratio | target |\n|---|---:|---:|---:|---|\n"
      for (k = 1; k <= 3; k++) for (pf = 1; pf <= 2; pf++) {
        g = (pf == 1 ? "gpuio:" : "nobatch:") ms[k]
        if (!(g in cvals)) continue
        h = ms[k]
        if (h == "syscall") h = (mode[g] ~ /^sys:each/) ? "tp_syscall" : (mode[g] == "sys:tp_btf") ? "tp_btf" : "raw_tp"
        ea = cmedian("empty:" h) - cb; ga = cmedian(g) - cb
        printf "| %s%s | %.0f | %.0f | %s | %s |\n", ms[k], pf == 1 ? "" : " --no-batch", ea, ga, (ea > 0) ? sprintf("%.1f", ga / ea) : "n/a", tg[k]
      }
    }
    # an untraced caller while gpuio traces another process: over the empty
    # program, by the callers own CPU time (the tracer work left out)
    if ("untraced:fentry" in seen || "untraced:kprobe" in seen || "untraced:syscall" in seen) {
      cb = cmedian("base")
      printf "\n### An untraced process (gpuio tracing another): what its preads pay, by its own CPU time, over an empty program on the same hook\n\n"
      printf "| gpuio mode | empty program, added | untraced caller under gpuio, added | over the empty program | target |\n|---|---:|---:|---:|---|\n"
      for (k = 1; k <= 3; k++) {
        u = "untraced:" ms[k]; g = "gpuio:" ms[k]
        if (!(u in seen)) continue
        h = ms[k]
        if (h == "syscall") h = (mode[g] ~ /^sys:each/) ? "tp_syscall" : (mode[g] == "sys:tp_btf") ? "tp_btf" : "raw_tp"
        e = "empty:" h
        printf "| %s | %.0f | %.0f | %+.0f | %s |\n", ms[k], cmedian(e) - cb, cmedian(u) - cb, cmedian(u) - cmedian(e), (ms[k] == "syscall") ? "-" : "<= 20 instructions"
      }
    }
    # the breakdown: the instructions each stage adds (cutN - cutN-1)
    if ("cut1:fentry" in seen) {
      printf "\n### Where the instructions go, one ring-buffer record per call (--no-batch; VFS path stopped after each stage; guest instructions per pread)\n\n"
      printf "| stage | fentry | kprobe | syscall |\n|---|---:|---:|---:|\n"
      split("dispatch + the empty program with its TGID filter|the gpuio filter (task storage, traced flag), over the empty program|fd -> file -> inode|per-thread call state (task storage create/update)|two clock reads|ring-buffer reserve + discard (incl. wake-up query)|record fill|submit, and the collector taking the record (the guest has one CPU)", st, "|")
      for (c = 0; c <= 7; c++) {
        printf "| %s |", st[c + 1]
        for (k = 1; k <= 3; k++) {
          h = ms[k]; g = "gpuio:" h
          if (h == "syscall") h = (mode[g] ~ /^sys:each/) ? "tp_syscall" : (mode[g] == "sys:tp_btf") ? "tp_btf" : "raw_tp"
          prev = (c == 0) ? b : (c == 1) ? m["empty:" h] : m["cut" (c - 1) ":" ms[k]]
          cur = (c == 0) ? m["empty:" h] : m["cut" c ":" ms[k]]
          if (c == 7) cur = ("nobatch:" ms[k] in seen) ? m["nobatch:" ms[k]] : m[g]
          printf " %.0f |", cur - prev
        }
        printf "\n"
      }
    }
    printf "\nRatios only: TCG timings are not comparable with native ones. Events per gpuio run (read_ops on the file):%s; drops:%s.\n", ops["gpuio:fentry"] ops["gpuio:kprobe"] ops["gpuio:syscall"], drops["gpuio:fentry"] drops["gpuio:kprobe"] drops["gpuio:syscall"]
    printf "Runs (ns/call per round):"
    for (i = 1; i <= n; i++) printf " %s:%s;", order[i], vals[order[i]]
    printf "\n"
  }' | tee "$src/build/vm/bench.md"

# "VMSTART round=R setup=gpuio:MODE started in W ms (C ms CPU): ..." -> the
# start of each mode on the stock kernel (issue 34: <= 300 ms, <= 150 ms CPU
# natively; in the guest the clock counts instructions, so these are the
# relative sizes of the parts, not a time to compare with a native one)
grep -o 'VMSTART .*' "$out" | awk -v unit="$unit" '
  { s = $3; sub(/^setup=/, "", s)
    match($0, /started in [0-9]+ ms \([0-9]+ ms CPU\)/); split(substr($0, RSTART, RLENGTH), a, /[ (]+/)
    match($0, /BPF load and attach \([^)]*\) [0-9]+ ms/); l = substr($0, RSTART, RLENGTH)
    split(l, b, /[()]/); sub(/ ms$/, "", l); sub(/.* /, "", l)
    w[s] = w[s] " " a[3]; c[s] = c[s] " " a[5]; ld[s] = ld[s] " " l; what[s] = b[2]; seen[s] = 1 }
  function med(str,   v, n, i, j, t) {
    n = split(str, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n ? v[int((n + 1) / 2)] : "n/a"
  }
  END {
    if (!length(seen)) exit
    printf "\n### Start: from gpuio trace to tracing, in the guest (%s)\n\n", unit
    printf "| setup | to tracing, ms | CPU ms | BPF load + attach, ms | programs, loads |\n|---|---:|---:|---:|---|\n"
    for (s in seen) printf "| %s | %s | %s | %s | %s |\n", s, med(w[s]), med(c[s]), med(ld[s]), what[s]
  }' | tee -a "$src/build/vm/bench.md"
