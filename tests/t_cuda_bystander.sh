#!/usr/bin/env bash
# t_cuda_bystander: CUDA API uprobes are put only in the traced process.
#
# Ground truth is the code itself: a uprobe is a breakpoint byte (int3, 0xcc
# on x86) written into the probed function in each process the kernel
# installs it for. Two copies of cuda_calls (the real libcudart.so.13) wait;
# gpuio traces one (-p). The first byte of cudaMalloc, read from each
# process's memory (/proc/PID/mem), must be 0xcc in the traced one and the
# library file's own byte in the bystander, in both attach flavours
# (uprobe.multi and classic perf uprobes), before and after both make their
# calls; the traced one's calls are in the capture, the bystander's are not.
# With -a (every process traced) the bystander's byte is 0xcc too: the
# check can tell the two apart.
source "$(dirname "$0")/lib.sh"
need_root
CALLS="$GPUIO_TESTS/cuda_calls"
[ -x "$CALLS" ] || fail "$CALLS missing (make test-progs)"
[ "$(uname -m)" = x86_64 ] || skip "the breakpoint byte checked here is x86's int3"
"$CALLS" > /dev/null 2>&1 || { [ $? -eq 77 ] && skip "cuda_calls built without libcudart (no CUDA toolkit)"; }

chmod 0755 "$TMP"

# byte_of PID: "file=XX mem=XX": cudaMalloc's first byte in the process's libcudart file and memory
byte_of() { pycheck cuda_calls.breakpoint_byte "$1" cudaMalloc || fail "cannot read cudaMalloc in pid $1"; }
file_of() { local x=${1#file=}; echo "${x%% *}"; }
mem_of() { echo "${1#*mem=}"; }

# run_case LABEL ALL(0|1) [env...]: trace one waiting cuda_calls, a second one waits beside it
run_case() {
  local label=$1 all=$2 go="$TMP/$1.go"
  shift 2
  rm -f "$go"
  spawn -l "$TMP/$label.t.out" traced "$CALLS" --wait "$go" --linger 2000
  local tpid=$SPAWNED
  spawn -l "$TMP/$label.y.out" bystander "$CALLS" --wait "$go" --linger 2000
  local ypid=$SPAWNED
  wait_lines "$TMP/$label.t.out" 1
  wait_lines "$TMP/$label.y.out" 1
  local target=(-p "$tpid")
  [ "$all" = 1 ] && target=(-a)
  spawn -e "$TMP/$label.err" gpuio env "$@" "$GPUIO" trace -v "${target[@]}" -d 20s -o "$TMP/$label.json"
  local gpid=$SPAWNED
  poll -t 15 grep -q "cuda uprobes: .*libcudart" "$TMP/$label.err" || true
  # -a finds libraries at its first rescan; -p at start
  poll -t 3 grep -q tracing "$TMP/$label.err" || true
  sleep 1.5
  local t y
  t=$(byte_of "$tpid")
  y=$(byte_of "$ypid")
  echo "$label: traced pid $tpid: $t; bystander pid $ypid: $y"
  [ "$(mem_of "$t")" = cc ] || { cat "$TMP/$label.err"; fail "$label: no breakpoint in the traced process ($t)"; }
  [ "$(file_of "$t")" != cc ] || fail "$label: the library file itself starts cudaMalloc with 0xcc?"
  if [ "$all" = 1 ]; then
    [ "$(mem_of "$y")" = cc ] || fail "$label: -a traces every process, yet no breakpoint in pid $ypid ($y)"
  else
    [ "$(mem_of "$y")" = "$(file_of "$y")" ] || fail "$label: bystander pid $ypid has a breakpoint ($y)"
  fi
  touch "$go"
  sleep 0.2
  if [ "$all" != 1 ]; then
    y=$(byte_of "$ypid")
    [ "$(mem_of "$y")" = "$(file_of "$y")" ] ||
      fail "$label: bystander pid $ypid has a breakpoint after its calls ($y)"
  fi
  wait "$tpid" || fail "$label: traced cuda_calls failed"
  wait "$ypid" || fail "$label: bystander cuda_calls failed"
  kill -INT "$gpid"
  wait "$gpid" || { cat "$TMP/$label.err"; fail "$label: gpuio trace failed"; }
  # the traced process's calls are in the capture, the bystander's are not
  pycheck cuda_calls.by_pid "$TMP/$label.gpuio" "$tpid" "$ypid" "$all" || fail "$label: CUDA records by pid"
  echo "ok   $label"
}

run_case multi 0
run_case classic 0 GPUIO_CUDA_UPROBE_MODE=uprobe
run_case every 1
echo "PASS: t_cuda_bystander"
