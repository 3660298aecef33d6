#!/usr/bin/env bash
# tests/bench/sockets.sh — what tracing socket I/O costs (on by default),
# next to --no-sockets and --all-fds, for the traced program and for an
# untraced bystander. A benchmark: nothing asserted.
#
# Workloads (build/tests/sock_pingpong, tests/progs/sock_pingpong.c):
#   self   one thread sends 64 bytes into a unix socketpair and receives
#          them from the other end (2 calls an op, never blocks): the
#          calls' own cost, the least noisy figure
#   tcp    round trips of 64 bytes over TCP on 127.0.0.1 between the
#          program and its forked server, both traced, both on CPU 0
#          (taskset: the same switches every run; 4 calls an op)
#   fetch  16-byte requests answered with 256 KiB (a loopback object fetch
#          loop), both on CPU 0
# Setups, in interleaved rounds (median of SOCK_BENCH_RUNS):
#   untraced; gpuio trace --no-sockets; gpuio trace (the default);
#   gpuio trace --all-fds; and a bystander: the workload untraced while
#   gpuio traces a `sleep` (default, then --no-sockets): what every other
#   process's socket calls pay for the default.
#
# Output: a Markdown table on stdout. Knobs: BUILD=dir, SOCK_BENCH_RUNS (5),
# SOCK_BENCH_SELF (200000 ops), SOCK_BENCH_OPS (10000 round trips),
# SOCK_BENCH_FETCHES (500).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
GPUIO=$BUILD/gpuio
PP=$BUILD/tests/sock_pingpong
RUNS=${SOCK_BENCH_RUNS:-5}
SELF=${SOCK_BENCH_SELF:-200000}
OPS=${SOCK_BENCH_OPS:-10000}
FETCHES=${SOCK_BENCH_FETCHES:-500}
T=$(mktemp -d /tmp/gpuio-sock-bench.XXXXXX)
BG=
SLP=
cleanup() {
  [ -n "$BG" ] && kill -INT "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
  [ -n "$SLP" ] && kill "$SLP" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { echo "sockets bench: n/a (needs root)"; exit 0; }
[ -x "$PP" ] || make -C "$SRC" --no-print-directory bench-progs >&2 ||
  { echo "sockets bench: n/a ($PP not built)"; exit 0; }

median() { sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : "n/a")}'; }
field() { grep -ohE "$1=[0-9.]+" "$2" | head -n1 | cut -d= -f2; }
WORKLOADS=(self tcp fetch)
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c 0)
args_of() {  # WORKLOAD: the command (sock_pingpong's arguments)
  case $1 in
    self)  echo "$PP self $SELF 64" ;;
    tcp)   echo "${PIN[*]} $PP tcp $OPS 64" ;;
    fetch) echo "${PIN[*]} $PP fetch $FETCHES 262144" ;;
  esac
}
# bystander_start OPTS...: gpuio tracing a sleep (-p), until it says it traces
bystander_start() {
  sleep 600 & SLP=$!
  "$GPUIO" trace --no-export --capture "$T/by.gpuio" "$@" -p "$SLP" 2>"$T/by.err" &
  BG=$!
  for _ in $(seq 200); do grep -q tracing "$T/by.err" 2>/dev/null && return 0; sleep 0.05; done
  echo "sockets bench: the bystander's gpuio did not start: $(tail -n1 "$T/by.err")" >&2
}
bystander_stop() { kill -INT "$BG" 2>/dev/null; wait "$BG" 2>/dev/null; BG=; kill "$SLP"; wait "$SLP" 2>/dev/null; }

SETUPS=(untraced nosock default allfds by_default by_nosock)
declare -A V EV CALLS
for r in $(seq "$RUNS"); do
  for w in "${WORKLOADS[@]}"; do
    # shellcheck disable=SC2046 # the workload's command
    for s in "${SETUPS[@]}"; do
      out=$T/$w.$s.out
      case $s in
        untraced)   $(args_of "$w") >"$out" 2>&1 ;;
        nosock)     "$GPUIO" trace -q --no-sockets --no-export --capture "$T/x.gpuio" -- \
                      $(args_of "$w") >"$out" 2>&1 ;;
        default)    "$GPUIO" trace --no-export --capture "$T/x.gpuio" -- \
                      $(args_of "$w") >"$out" 2>&1 ;;
        allfds)     "$GPUIO" trace -q --all-fds --no-export --capture "$T/x.gpuio" -- \
                      $(args_of "$w") >"$out" 2>&1 ;;
        by_default) bystander_start; $(args_of "$w") >"$out" 2>&1; bystander_stop ;;
        by_nosock)  bystander_start --no-sockets; $(args_of "$w") >"$out" 2>&1; bystander_stop ;;
      esac
      v=$(field ns_per_op "$out")
      V[$w.$s]="${V[$w.$s]:-} ${v:-}"
      if [ "$s" = default ]; then
        EV[$w]="${EV[$w]:-} $(grep -oE '[0-9]+ vfs' "$out" | cut -d' ' -f1)"
        CALLS[$w]=$(( $(field client_calls "$out") + $(field server_calls "$out") ))
      fi
      echo "sockets bench: run $r $w $s ${v:-?} ns/op" >&2
    done
  done
done

echo "sock_pingpong (tests/progs), median of $RUNS interleaved runs; ns per op (a send and"
echo "a receive, a round trip, a 256 KiB fetch) and what each setup adds over untraced:"
echo
echo "| workload | untraced | --no-sockets | default (sockets) | --all-fds | bystander, default | bystander, --no-sockets | socket calls/op | ns per traced socket call |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for w in "${WORKLOADS[@]}"; do
  declare -A M=()
  for s in "${SETUPS[@]}"; do
    # shellcheck disable=SC2086
    M[$s]=$(printf '%s\n' ${V[$w.$s]} | median)
  done
  n=$(args_of "$w" | awk '{ print $(NF - 1) }')
  per_op=$(awk -v c="${CALLS[$w]:-0}" -v n="$n" 'BEGIN { printf "%.1f", c / n }')
  ev=$(printf '%s\n' ${EV[$w]} | median)
  cell() { awk -v a="$1" -v u="${M[untraced]}" 'BEGIN { if (a == "n/a" || u == "n/a") print "n/a";
           else printf "%d (+%d, %.2fx)", a, a - u, a / u }'; }
  per_call=$(awk -v d="${M[default]}" -v s="${M[nosock]}" -v p="$per_op" \
             'BEGIN { if (p > 0) printf "%.0f", (d - s) / p; else print "n/a" }')
  echo "| $w ($(args_of "$w" | awk '{ print $(NF - 1) " x " $NF " B" }')) | ${M[untraced]} | $(cell "${M[nosock]}") | $(cell "${M[default]}") | $(cell "${M[allfds]}") | $(cell "${M[by_default]}") | $(cell "${M[by_nosock]}") | $per_op | $per_call |"
  echo "sockets bench: $w: VFS events per default run: ${EV[$w]}" >&2
done
echo
echo "ns per traced socket call = (default − --no-sockets) / socket calls per op: the"
echo "record of one call (entry, exit, ring buffer), its peer named once per socket."

# ---- the kernel's own accounting (kernel.bpf_stats_enabled): steadier ------
# gpuio's sys_enter + sys_exit programs' ns per syscall during `self`, traced
# and as a bystander's. Programs told apart from other tracers' by their ids:
# the ones that were not loaded before this gpuio started.
command -v bpftool >/dev/null || { echo; echo "bpf_stats: n/a (no bpftool)"; exit 0; }
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
# vfs_ns BEFORE.json [START.json] END.json: ns per run of the new vfs_sys_* programs
vfs_ns() {
  python3 - "$@" <<'EOF2'
import json, sys
ids = {p["id"] for p in json.load(open(sys.argv[1]))}
def runs(path):
    return {p["id"]: (p.get("run_cnt", 0), p.get("run_time_ns", 0)) for p in json.load(open(path))
            if p["id"] not in ids and p["name"].startswith("vfs_sys_")}
end = runs(sys.argv[-1])
start = runs(sys.argv[2]) if len(sys.argv) > 3 else {}
cnt = ns = 0
for i, (c, t) in end.items():
    c0, t0 = start.get(i, (0, 0))
    cnt, ns = max(cnt, c - c0), ns + t - t0
print("%.0f" % (ns / cnt) if cnt else "n/a")
EOF2
}
declare -A B
for r in $(seq "$RUNS"); do
  for s in default nosock by_default by_nosock; do
    opt=()
    case $s in nosock|by_nosock) opt=(--no-sockets) ;; esac
    bpftool prog show --json >"$T/before.json"
    case $s in
      default|nosock)
        "$GPUIO" trace -q "${opt[@]}" --no-export --capture "$T/x.gpuio" -- sh -c \
          "$PP self $SELF 64 >'$T/b.out' && bpftool prog show --json >'$T/end.json'" 2>/dev/null
        v=$(vfs_ns "$T/before.json" "$T/end.json") ;;
      by_*)
        bystander_start "${opt[@]}"
        bpftool prog show --json >"$T/start.json"
        $PP self "$SELF" 64 >"$T/b.out"
        bpftool prog show --json >"$T/end.json"
        bystander_stop
        v=$(vfs_ns "$T/before.json" "$T/start.json" "$T/end.json") ;;
    esac
    B[$s]="${B[$s]:-} $v"
    echo "sockets bench: bpf_stats run $r $s $v ns per syscall" >&2
  done
done
sysctl -qw kernel.bpf_stats_enabled="$old_stats"
echo
echo "gpuio's sys_enter + sys_exit programs, ns per syscall (kernel.bpf_stats_enabled;"
echo "includes ~20 ns of the accounting's own clock reads), during \`self\` (2 socket"
echo "calls an op), median of $RUNS:"
echo
echo "| setup | ns per socket call in gpuio's programs |"
echo "|---|---:|"
for s in default nosock by_default by_nosock; do
  case $s in
    default)    l="traced (default: recorded)" ;;
    nosock)     l="traced --no-sockets (filtered by syscall number)" ;;
    by_default) l="untraced bystander, gpuio running (default)" ;;
    by_nosock)  l="untraced bystander, gpuio running --no-sockets" ;;
  esac
  # shellcheck disable=SC2086
  echo "| $l | $(printf '%s\n' ${B[$s]} | median) |"
done
