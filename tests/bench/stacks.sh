#!/usr/bin/env bash
# tests/bench/stacks.sh — part of `make bench`: what Python stacks cost
# (docs/overhead.md, issue 33's rule: on by default only where a traced
# pread costs at most 25% more with them and sampling at most 1% of a CPU).
#
#  1. ns per os.pread() of 4 KiB (cached file, tests/bench/py_work.py) at
#     two stack depths (~5 and ~25 frames): untraced, gpuio --no-stacks,
#     gpuio (the default: stacks at sleeps, 99 Hz samples), gpuio
#     --stacks --no-native-frames (a Python stack on every call) and gpuio
#     --stacks (with the native frames before it: libc's pread64 here);
#     rounds interleaved, medians;
#  2. sampling: one Python thread busy for 3 s, traced with the default:
#     the sampler's BPF time per sample and per second of run from the
#     kernel's own accounting (kernel.bpf_stats_enabled), as % of one CPU;
#     and gpuio's own CPU time (user + sys, /proc) meanwhile, with and
#     without samples (its start, ~20 ms more to verify the stack walk, is
#     left out: a cost once per trace, not per second).
#  3. switch-outs: two Python threads passing a byte through pipes (each
#     sleeps in os.read(), ~5 and ~25 frames deep), traced with the
#     default (a stack at each sleep, native frames first),
#     --no-native-frames and --no-stacks: the switch hook's ns per run
#     (bpf_stats) and the round trip's wall time.
# Markdown on stdout; "n/a (why)" where a part cannot run. Needs root.
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GPUIO=${GPUIO:-$SRC/build/gpuio}
WORK=$SRC/tests/bench/py_work.py
PY=${BENCH_PY:-/usr/bin/python3}
FILE=${BENCH_FILE:-/var/tmp/gpuio-bench.dat}
CALLS=${BENCH_PY_CALLS:-300000}
RUNS=${BENCH_RUNS:-3}

echo "## Python stacks: cost per traced call, and of sampling"
echo
[ "$(id -u)" -eq 0 ] || { echo "n/a (needs root)"; exit 0; }
[ -x "$PY" ] || { echo "n/a ($PY not installed)"; exit 0; }
if [ ! -s "$FILE" ] || [ "$(stat -c %s "$FILE")" -lt $((256 << 20)) ]; then
  dd if=/dev/urandom of="$FILE" bs=1M count=256 status=none || { echo "n/a (cannot write $FILE)"; exit 0; }
fi
cat "$FILE" >/dev/null
T=$(mktemp -d /var/tmp/gpuio-stacks.XXXXXX) || exit 0
chmod 0755 "$T"
old=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$old; rm -rf "$T"' EXIT
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# ---- 1. per call
declare -A V=()
SETUPS=(untraced nostacks default pyonly stacks)
declare -A OPT=([nostacks]="--no-stacks" [default]="" [pyonly]="--stacks --no-native-frames"
                [stacks]="--stacks")
for depth in 0 20; do
  for ((r = 1; r <= RUNS; r++)); do
    for s in "${SETUPS[@]}"; do
      echo "bench: stacks: depth $depth, round $r/$RUNS: $s" >&2
      if [ "$s" = untraced ]; then
        out=$("$PY" "$WORK" pread "$FILE" "$CALLS" "$depth" 2>"$T/err")
      else
        # shellcheck disable=SC2086
        out=$("$GPUIO" trace -q --no-export --capture "$T/c.gpuio" ${OPT[$s]} -- \
              "$PY" "$WORK" pread "$FILE" "$CALLS" "$depth" 2>"$T/err")
      fi
      v=$(grep -o 'ns_per_call=[0-9]*' <<<"$out" | cut -d= -f2)
      [ -n "$v" ] && V[$s.$depth]="${V[$s.$depth]:-} $v"
    done
  done
done
echo "### ns per 4 KiB os.pread() of a cached file ($CALLS calls, median of $RUNS)"
echo
echo "| Python frames | untraced | gpuio --no-stacks | gpuio (default) | --stacks --no-native-frames | gpuio --stacks | --stacks over --no-stacks |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for depth in 0 20; do
  row="| ~$((depth + 5))"
  for s in "${SETUPS[@]}"; do
    # shellcheck disable=SC2086
    m=$(median ${V[$s.$depth]:-})
    row="$row | ${m:-n/a}"
    eval "M_$s=${m:-0}"
  done
  # shellcheck disable=SC2154
  if [ "${M_nostacks:-0}" -gt 0 ] && [ "${M_stacks:-0}" -gt 0 ]; then
    row="$row | +$(awk -v a="$M_stacks" -v b="$M_nostacks" 'BEGIN { printf "%.0f%%", (a / b - 1) * 100 }') |"
  else
    row="$row | n/a |"
  fi
  echo "$row"
done
echo

# ---- 2. sampling
echo "### sampling one busy Python thread at the default 99 Hz (3 s)"
echo
# gpuio's own CPU (its pid is the command's parent): user + sys ticks, in s
cpu_of='awk -v hz=$(getconf CLK_TCK) "{ printf \"%.3f\", (\$14 + \$15) / hz }" /proc/$PPID/stat'
sysctl -qw kernel.bpf_stats_enabled=1
for s in default nostacks; do
  # shellcheck disable=SC2086
  "$GPUIO" trace -q --no-export --capture "$T/s.gpuio" ${OPT[$s]} -- sh -c \
    "$cpu_of >'$T/cpu0.$s'; '$PY' '$WORK' spin 3 >'$T/spin.$s'; $cpu_of >'$T/cpu1.$s'; bpftool prog show --json >'$T/progs.$s' 2>/dev/null" \
    2>"$T/err.$s" || { echo "n/a (trace failed: $(tail -n1 "$T/err.$s"))"; exit 0; }
done
python3 - "$T" <<'EOF'
import json, os, sys
t = sys.argv[1]
def read(name):
    try:
        return open(os.path.join(t, name)).read().strip()
    except OSError:
        return ""
try:
    progs = json.loads(read("progs.default") or "[]")
except ValueError:
    progs = []
smp = [p for p in progs if p.get("name") == "py_sample"]
def cpu(s):
    try:
        return float(read("cpu1." + s)) - float(read("cpu0." + s))
    except ValueError:
        return None
cpu_d, cpu_n = cpu("default"), cpu("nostacks")
if smp and smp[0].get("run_cnt"):
    n, ns = smp[0]["run_cnt"], smp[0]["run_time_ns"]
    print("- the sampler (BPF program py_sample): %d samples, %.2f us each, %.3f%% of one CPU "
          "over the 3 s run" % (n, ns / n / 1e3, ns / 3e9 * 100))
else:
    print("- the sampler's BPF time: n/a (bpftool missing, or no samples)")
if cpu_d is not None and cpu_n is not None:
    print("- gpuio's own CPU time while the 3 s run ran (its start left out): %.2f s with samples "
          "(%.1f%% of a CPU), %.2f s with --no-stacks (%.1f%%)" % (cpu_d, cpu_d / 3 * 100, cpu_n, cpu_n / 3 * 100))
EOF
echo

# ---- 3. switch-outs
echo "### a traced Python thread's switch-out: the stack at each sleep (pipe ping-pong, ${PINGS:=20000} round trips)"
echo
echo "| Python frames | setup | switch hook, ns per run (bpf_stats) | runs | us per round trip |"
echo "|---:|---|---:|---:|---:|"
sysctl -qw kernel.bpf_stats_enabled=1
declare -A SW=([default]="" [nonative]="--no-native-frames" [nostacks]="--no-stacks")
for depth in 0 20; do
  u=$("$PY" "$WORK" pingpong "$PINGS" "$depth" | grep -o 'us_per_round_trip=[0-9.]*' | cut -d= -f2)
  echo "| ~$((depth + 5)) | untraced | — | — | ${u:-n/a} |"
  for s in default nonative nostacks; do
    # shellcheck disable=SC2086
    "$GPUIO" trace -q --no-export --capture "$T/p.gpuio" ${SW[$s]} -- sh -c \
      "'$PY' '$WORK' pingpong $PINGS $depth >'$T/pp.$s'; bpftool prog show --json >'$T/pprogs.$s' 2>/dev/null" \
      2>"$T/err.$s" || { echo "| ~$((depth + 5)) | $s | n/a (trace failed) | | |"; continue; }
    python3 - "$T/pprogs.$s" "$T/pp.$s" "$((depth + 5))" "${SW[$s]:-the default}" <<'EOF'
import json, sys
try:
    progs = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    progs = []
sw = [p for p in progs if p.get("name", "").startswith("sched_switch") and p.get("run_cnt")]
rt = open(sys.argv[2]).read().split("us_per_round_trip=")
rt = rt[1].strip() if len(rt) > 1 else "n/a"
if sw:
    n, ns = sw[0]["run_cnt"], sw[0]["run_time_ns"]
    print("| ~%s | %s | %.0f | %d | %s |" % (sys.argv[3], sys.argv[4], ns / n, n, rt))
else:
    print("| ~%s | %s | n/a (bpftool missing, or no switch hook) | | %s |" % (sys.argv[3], sys.argv[4], rt))
EOF
  done
done
echo
