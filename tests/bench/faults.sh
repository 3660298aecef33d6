#!/usr/bin/env bash
# tests/bench/faults.sh — cost of the fault layer per page fault
# (build/bench/fault_bench: faults in a loop, timing itself):
#   file  a warm file (in the page cache) mapped and read page by page:
#         file-backed minor faults, each settled and counted per file;
#   anon  anonymous memory written page by page: faults the layer looks at
#         and ignores (not a file);
# each untraced, under an empty program on the same hook (empty_run -f: the
# TGID filter only), traced with --no-faults (the other layers), traced, and
# traced in the older kernels' mode (GPUIO_FAULT_MODE=tp_btf:vma: the
# mapping looked up at each fault's entry);
# and the anonymous toucher as a bystander: untraced while gpuio traces
# another process (the hook runs for every fault on the node). Ratios are
# (added over untraced) / (the empty program's). Median of
# FAULT_BENCH_RUNS interleaved runs. A benchmark: nothing asserted.
#
# Output: a Markdown table on stdout. Knobs: BUILD=dir, FAULT_BENCH_RUNS (3),
# FAULT_BENCH_FILE (/var/tmp/gpuio-fault-bench.dat, 64 MiB, kept),
# FAULT_BENCH_ROUNDS (file: 400), FAULT_BENCH_ANON_ROUNDS (32).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
GPUIO=$BUILD/gpuio
FB=$BUILD/bench/fault_bench
EMPTY=$BUILD/bench/empty_run
RUNS=${FAULT_BENCH_RUNS:-7}
FILE=${FAULT_BENCH_FILE:-/var/tmp/gpuio-fault-bench.dat}
ROUNDS=${FAULT_BENCH_ROUNDS:-400}
AROUNDS=${FAULT_BENCH_ANON_ROUNDS:-32}
T=$(mktemp -d /tmp/gpuio-fault-bench.XXXXXX)
BG=""
trap '[ -n "$BG" ] && kill -INT "$BG" 2>/dev/null; rm -rf "$T"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "fault bench: n/a (needs root)"; exit 0; }
make -C "$SRC" --no-print-directory bench-progs >&2 || { echo "fault bench: n/a (cannot build)"; exit 0; }
if [ "$(stat -c %s "$FILE" 2>/dev/null || echo 0)" != $((64 << 20)) ]; then
  dd if=/dev/urandom of="$FILE.tmp" bs=1M count=64 status=none conv=fsync && mv "$FILE.tmp" "$FILE" ||
    { echo "fault bench: n/a (cannot write $FILE)"; exit 0; }
fi
cat "$FILE" >/dev/null

median() { sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : "n/a")}'; }
val() { grep -oE "$1=[0-9]+" "$2" | cut -d= -f2; }

# bystander: gpuio tracing a sleeping process, attached before the loops run
bystander_start() {
  "$GPUIO" trace --no-export --capture "$T/by.gpuio" -- sleep 100000 >/dev/null 2>"$T/by.err" &
  BG=$!
  for _ in $(seq 100); do grep -q "Ctrl-C to stop" "$T/by.err" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
bystander_stop() { kill -INT "$BG" 2>/dev/null; wait "$BG" 2>/dev/null; BG=""; }

declare -A V F
run() {  # WORKLOAD SETUP
  local w=$1 s=$2 cmd
  if [ "$w" = file ]; then cmd=("$FB" file "$FILE" "$ROUNDS"); else cmd=("$FB" anon 64 "$AROUNDS"); fi
  case $s in
    untraced)  "${cmd[@]}" ;;
    empty)     "$EMPTY" -f -- "${cmd[@]}" ;;
    nofaults)  "$GPUIO" trace -q --no-faults --no-export --capture "$T/n.gpuio" -- "${cmd[@]}" ;;
    gpuio)     "$GPUIO" trace -q --no-export --capture "$T/g.gpuio" -- "${cmd[@]}" ;;
    vma)       GPUIO_FAULT_MODE=tp_btf:vma \
               "$GPUIO" trace -q --no-export --capture "$T/v.gpuio" -- "${cmd[@]}" ;;
    bystander) bystander_start && "${cmd[@]}"; bystander_stop ;;
  esac >"$T/out" 2>"$T/err"
  V[$w.$s]="${V[$w.$s]:-} $(val ns_per_fault "$T/out")"
  F[$w]=$(val faults "$T/out")
  echo "fault bench: run $r $w $s $(val ns_per_fault "$T/out") ns/fault" >&2
}

for r in $(seq "$RUNS"); do
  for s in untraced empty nofaults gpuio vma; do run file $s; done
  for s in untraced empty nofaults gpuio vma bystander; do run anon $s; done
done

row() {  # WORKLOAD SETUP LABEL
  local u e v
  u=$(printf '%s\n' ${V[$1.untraced]} | median)
  e=$(printf '%s\n' ${V[$1.empty]} | median)
  v=$(printf '%s\n' ${V[$1.$2]} | median)
  awk -v u="$u" -v e="$e" -v v="$v" -v l="$3" 'BEGIN {
    r = (e - u) > 0 ? sprintf("%.1f×", (v - u) / (e - u)) : "n/a"
    printf "| %s | %d | %+d | %s |\n", l, v, v - u, r }'
}
echo "Page faults in a loop (build/bench/fault_bench), median of $RUNS interleaved runs;"
echo "file: a warm 64 MiB file mapped and read page by page, ${F[file]} faults a run (fault-around"
echo "maps 16 pages a fault); anon: 64 MiB of anonymous memory written, ${F[anon]} faults a run."
echo
echo "| setup | ns/fault | added | ratio to the empty program |"
echo "|---|---:|---:|---:|"
row file untraced "file: untraced"
row file empty "file: empty program on page_fault_user (TGID filter)"
row file nofaults "file: gpuio trace --no-faults"
row file gpuio "file: **gpuio trace** (fault layer on, tp_btf)"
row file vma "file: gpuio trace, tp_btf:vma (lookup at entry: older kernels)"
row anon untraced "anon: untraced"
row anon empty "anon: empty program on page_fault_user"
row anon nofaults "anon: gpuio trace --no-faults"
row anon gpuio "anon: **gpuio trace** (no filemap event: ignored)"
row anon vma "anon: gpuio trace, tp_btf:vma (looked up, ignored)"
row anon bystander "anon: untraced, while gpuio traces another process"

# the programs' own time (kernel.bpf_stats_enabled), steadier than the wall
# clock on a shared VM: snapshot from inside the traced command
if command -v bpftool >/dev/null; then
  old=$(sysctl -n kernel.bpf_stats_enabled)
  sysctl -qw kernel.bpf_stats_enabled=1
  echo
  echo "BPF programs' own time per run (kernel.bpf_stats_enabled; ~20 ns of it the accounting's"
  echo "clock reads). The fault hooks run for every fault on the node while the command runs:"
  echo "the runs of other processes, filtered at the first lookup, are in the mean."
  echo
  echo "| workload, mode | program | runs | ns per run |"
  echo "|---|---|---:|---:|"
  for w in file anon; do
    for mode in tp_btf tp_btf:vma; do
      if [ "$w" = file ]; then a="file $FILE $ROUNDS"; else a="anon 64 $AROUNDS"; fi
      GPUIO_FAULT_MODE=$mode "$GPUIO" trace -q --no-export --capture "$T/p.gpuio" -- \
        sh -c "'$FB' $a >'$T/pout' && bpftool prog show --json >'$T/progs.json'" 2>/dev/null ||
        continue
      python3 - "$T/progs.json" "$w, $mode" fault_flush <<'PY'
import json, sys
progs, label, mark = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
# this gpuio's object (another tracer may run beside it): the newest one
# loaded, told by its BTF id
ours = max((p for p in progs if p.get("name") == mark), key=lambda p: p["id"])
for p in sorted(progs, key=lambda p: p.get("name", "")):
    n, cnt, ns = p.get("name", ""), p.get("run_cnt", 0), p.get("run_time_ns", 0)
    if p.get("btf_id") == ours.get("btf_id") and cnt and (
            n.startswith("fault_") or n.startswith("pc_add") or n.startswith("sched_switch") or
            n == "bench_fault"):
        print("| %s | %s | %d | %.0f |" % (label, n, cnt, ns / cnt))
PY
    done
    "$EMPTY" -f -- sh -c "'$FB' $a >'$T/pout' && bpftool prog show --json >'$T/progs.json'" \
      2>/dev/null && python3 - "$T/progs.json" "$w, empty program" bench_fault <<'PY'
import json, sys
progs, label, mark = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
p = max((p for p in progs if p.get("name") == mark), key=lambda p: p["id"])
print("| %s | %s | %d | %.0f |" % (label, mark, p.get("run_cnt", 0),
                                    p.get("run_time_ns", 0) / max(p.get("run_cnt", 0), 1)))
PY
  done
  sysctl -qw kernel.bpf_stats_enabled="$old"
fi
