#!/usr/bin/env bash
# tests/bench/bystander.sh — what gpuio costs the processes it does NOT
# trace: an untraced loop of getppid() syscalls (build/bench/bystander_loop)
# and `perf bench sched pipe`, with no tracer, then while `gpuio trace -p`
# follows another, idle process: in the default VFS mode (on a kernel
# without fentry, sys:each: a tracepoint pair per decoded call, so a
# bystander's other syscalls run no program) and with --vfs-mode=syscall
# (sys:tp_btf: one program pair on every syscall of the node). Rounds
# interleaved; per round the ratio to the
# untraced run of that round; the median ratio and its range printed beside
# the target. The getppid loop runs pinned to one CPU, median of 3 per
# setup. A benchmark: nothing asserted.
#
# Knobs: BUILD=dir, BYSTANDER_RUNS (5), BYSTANDER_CALLS (2000000),
# BYSTANDER_PIPE_OPS (100000).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
GPUIO=$BUILD/gpuio
LOOP=$BUILD/bench/bystander_loop
RUNS=${BYSTANDER_RUNS:-5}
CALLS=${BYSTANDER_CALLS:-2000000}
OPS=${BYSTANDER_PIPE_OPS:-100000}
T=$(mktemp -d /tmp/gpuio-bystander.XXXXXX)
IDLE=
cleanup() { [ -n "$IDLE" ] && kill "$IDLE" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { echo "bystander bench: n/a (needs root)"; exit 0; }
[ -x "$LOOP" ] || { echo "bystander bench: n/a ($LOOP missing: make bench-progs)"; exit 0; }
have_perf=1
command -v perf >/dev/null || have_perf=0

sleep 100000 & IDLE=$!
# the kernel's own run time per program (bpf_stats) while the default mode traces
STATS=
if command -v bpftool >/dev/null && [ -w /proc/sys/kernel/bpf_stats_enabled ]; then
  STATS=$(cat /proc/sys/kernel/bpf_stats_enabled)
  echo 1 >/proc/sys/kernel/bpf_stats_enabled
  trap 'cleanup; echo "$STATS" >/proc/sys/kernel/bpf_stats_enabled' EXIT
fi

# the loop pinned to the last CPU, the median of 3 runs: a whole-node
# comparison is noisy enough without the scheduler moving it
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c "$(( $(nproc) - 1 ))")
# one measurement of a setup: "getppid_ns pipe_ns"
measure() {
  local g p=n/a
  g=$(for i in 1 2 3; do "${PIN[@]}" "$LOOP" "$CALLS" | sed -n 's/^ns_per_call=//p'; done | sort -n | sed -n 2p)
  [ $have_perf -eq 1 ] && p=$(perf bench sched pipe -l "$OPS" 2>/dev/null | awk '/usecs\/op/ { printf "%.0f", $1 * 1000 }')
  echo "$g ${p:-n/a}"
}
# the tracer on the idle process while measuring; its mode as the header says
traced() {  # NAME [gpuio trace args...]
  local name=$1 gp i
  shift
  "$GPUIO" trace --no-export --capture "$T/c.$name.gpuio" -p "$IDLE" "$@" 2>"$T/err" &
  gp=$!
  for i in $(seq 200); do grep -q "tracing pid" "$T/err" && break; sleep 0.05; done
  [ -n "$STATS" ] && bpftool -j prog show >"$T/progs0.$name" 2>/dev/null
  measure
  [ -n "$STATS" ] && bpftool -j prog show >"$T/progs1.$name" 2>/dev/null
  kill -INT $gp; wait $gp 2>/dev/null
  # the links it left to its gpuio-detach child: gone before the next setup
  for i in $(seq 300); do pgrep -x gpuio-detach >/dev/null || break; sleep 0.1; done
  "$GPUIO" info "$T/c.$name.gpuio" 2>/dev/null | sed -n 's/.*attach modes vfs=\([^ ]*\).*/\1/p' >"$T/mode.$name"
}

for r in $(seq "$RUNS"); do
  # each setup to its end (the tracer gone) before the next: no process substitution
  measure >"$T/m0"
  traced default >"$T/m1"
  traced syscall --vfs-mode=syscall >"$T/m2"
  read -r g0 p0 <"$T/m0"
  read -r g1 p1 <"$T/m1"
  read -r g2 p2 <"$T/m2"
  echo "$r $g0 $p0 $g1 $p1 $g2 $p2" >>"$T/rounds"
  echo "bystander bench: round $r getppid $g0 / $g1 / $g2 ns, sched pipe $p0 / $p1 / $p2 ns (off / default / syscall)" >&2
done

mode=$(cat "$T/mode.default" 2>/dev/null)
mode2=$(cat "$T/mode.syscall" 2>/dev/null)
echo "## Bystanders: an untraced process's syscalls while gpuio traces another"
echo
echo "$RUNS interleaved rounds; each ratio is that round's traced / untraced, median (min-max)."
echo "getppid loop: $CALLS calls; perf bench sched pipe: $OPS ops."
echo
awk -v mode="${mode:-?}" -v mode2="${mode2:-?}" -v pipe=$have_perf '
  function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  function mn(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
  function mx(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
  { n++; g0[n] = $2; g1[n] = $4 / $2; g2[n] = $6 / $2; p0[n] = $3; p1[n] = ($3 > 0) ? $5 / $3 : 0; p2[n] = ($3 > 0) ? $7 / $3 : 0 }
  END {
    printf "| bystander | untraced, ns | gpuio default VFS mode (%s) | gpuio --vfs-mode=syscall (%s) | target |\n|---|---:|---:|---:|---|\n", mode, mode2
    printf "| getppid() | %.0f | %.2fx (%.2f-%.2f) | %.2fx (%.2f-%.2f) | <= 1.35x by default |\n", med(g0, n), med(g1, n), mn(g1, n), mx(g1, n), med(g2, n), mn(g2, n), mx(g2, n)
    if (pipe) printf "| sched pipe, per op | %.0f | %.2fx (%.2f-%.2f) | %.2fx (%.2f-%.2f) | within noise |\n", med(p0, n), med(p1, n), mn(p1, n), mx(p1, n), med(p2, n), mn(p2, n), mx(p2, n)
    else print "| sched pipe | n/a (perf not installed) | | | |"
  }' "$T/rounds"
for name in default syscall; do
  [ -n "$STATS" ] && [ -s "$T/progs1.$name" ] || continue
  echo
  echo "bpf_stats while the $name mode traced in the last round (the kernel's run count and time"
  echo "per program; the traced process was idle, so these are the bystanders' runs):"
  echo
  python3 - "$T/progs0.$name" "$T/progs1.$name" <<'PY'
import json, sys
a = {p["id"]: p for p in json.load(open(sys.argv[1]))}
b = json.load(open(sys.argv[2]))
print("| program | runs | ns per run |\n|---|---:|---:|")
for p in b:
    q = a.get(p["id"], {})
    n = p.get("run_cnt", 0) - q.get("run_cnt", 0)
    t = p.get("run_time_ns", 0) - q.get("run_time_ns", 0)
    if n > 0 and p.get("name", "").startswith(("sched_", "vfs_", "proc_", "fault_")):
        print("| %s | %d | %.0f |" % (p["name"], n, t / n))
PY
done
echo
echo "sys:each (per_syscall): the per-syscall tracepoints run nothing for a call gpuio does not decode;"
echo "every syscall still takes the kernel's tracing path (TIF_SYSCALL_TRACEPOINT)"
echo "while any syscall tracepoint is on. sched pipe: the scheduler layer's"
echo "programs run on every context switch of the node and return for untraced tasks."
