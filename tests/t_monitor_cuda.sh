#!/usr/bin/env bash
# t_monitor_cuda: `gpuio monitor`'s per-process and per-cgroup CUDA API call
# counts equal the calls a program says it made.
#
# fake_libcuda_calls dlopens the stand-in libcuda.so.1 (tests/progs/
# fake_libcuda.c) in its own cgroup, prints "ready PID" and waits for a file
# while the daemon's /proc scan (every 10 s) finds and probes the library;
# then it makes its calls, printing "CALL name ..." for each. Ground truth:
# those lines, each name mapped to its kind by the driver table in
# user/cuda/cuda_lib.c (the table the monitor probes from). Checked on pages
# scraped with curl and parsed strictly, while the process lives and after
# it exited (its entry folded), in both attach flavours (uprobe.multi and
# classic uprobes); the library's own internal cuMemcpy call is not counted.
# Also: idle, with no CUDA library mapped on the node, nothing is attached;
# By default (opt-in: --cuda-uprobes) nothing is probed, even with a CUDA
# library mapped through a whole scan period: available 0, no CUDA series.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/monitor_lib.sh"
FAKE_CALLS="$GPUIO_TESTS/fake_libcuda_calls"
FAKE_LIB="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
for f in "$FAKE_CALLS" "$FAKE_LIB"; do
  [ -e "$f" ] || fail "$f missing (make test-progs)"
done
chmod 0755 "$TMP"
LIB_REAL=$(realpath "$FAKE_LIB")
SRC=${GPUIO_SRC:-$(cd "$(dirname "$0")/.." && pwd)}

# kinds of the driver functions, from the table the monitor probes from
pycheck monitor.cuda_kinds "$SRC/user/cuda/cuda_lib.c" > "$TMP/kinds.json" || fail "cannot read the driver table"

# processes mapping a CUDA library right now (other tests may run meanwhile)
cuda_mapped() { { grep -lsE '/libcuda(rt)?\.so' /proc/[0-9]*/maps 2>/dev/null || true; } | head -3; }
mon_links() { bpftool link show 2>/dev/null | grep -cE 'mon_cuda' || true; }
no_links() { [ "$(mon_links)" = 0 ]; }
calls_made() { [ "$(grep -c '^CALL' "$1")" = 11 ]; }   # FILE: the program printed its 11 CALL lines

# ---- idle: no CUDA library mapped anywhere -> nothing attached
before=$(cuda_mapped)
mon_start --window 0 --listen 127.0.0.1:$MON_PORT --top-k 200 --cuda-uprobes
sleep 0.5
scrape "$TMP/idle.txt"
after=$(cuda_mapped)
grep -q '^gpuio_gpu_cuda_uprobes_available 1' "$TMP/idle.txt" || fail "CUDA call counts not available"
if [ -z "$before" ] && [ -z "$after" ]; then
  grep -q '^gpuio_gpu_cuda_libraries_probed 0' "$TMP/idle.txt" ||
    fail "libraries probed while no process maps a CUDA library"
  if command -v bpftool >/dev/null; then
    [ "$(mon_links)" = 0 ] || { bpftool link show; fail "uprobe links while idle"; }
  fi
  echo "ok   idle: no CUDA library mapped, no library probed, no uprobe link"
else
  echo "note: idle check skipped: a CUDA library is mapped elsewhere ($before $after)"
fi
mon_stop

run_calls() {   # run_calls TAG MODE: one daemon, one program in its cgroup, two scrapes
  local tag=$1 mode=$2 cg pid
  cg=$(mk_cgroup "gpuio-cuda-$tag-$$")
  GPUIO_MONITOR_CUDA_MODE=$mode mon_start --window 0 --listen 127.0.0.1:$MON_PORT --top-k 200 --cuda-uprobes
  grep -q "CUDA call counts: $mode" "$TMP/monitor.log" ||
    { cat "$TMP/monitor.log"; fail "$tag: not in $mode mode"; }
  rm -f "$TMP/go"
  spawn -l "$TMP/calls-$tag.out" fake_libcuda_calls sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
    "$FAKE_CALLS" "$FAKE_LIB" --wait "$TMP/go" --linger 3000
  pid=$SPAWNED
  wait_line -t 10 -i 0.1 -m "$tag: the program never got ready" '^ready' "$TMP/calls-$tag.out"
  # the next scan (<= 10 s) finds the library through /proc/PID/maps
  poll -t 30 -i 0.1 grep -qF "$LIB_REAL: " "$TMP/monitor.log" || true
  grep -qF "$LIB_REAL: 11 functions" "$TMP/monitor.log" ||
    { cat "$TMP/monitor.log"; fail "$tag: the library was not probed (11 functions)"; }
  comm=$(cat "/proc/$pid/comm")
  touch "$TMP/go"
  poll -t 10 -i 0.1 calls_made "$TMP/calls-$tag.out" || true
  sleep 0.3
  scrape "$TMP/$tag-live.txt"                  # the process is still there (--linger)
  wait "$pid" || fail "$tag: fake_libcuda_calls failed"
  proc_unreg "$pid"
  sleep 1.5                                    # a refresh tick folds the exited process
  scrape "$TMP/$tag-exit.txt"
  pycheck monitor.cuda_counts "$TMP/kinds.json" "$TMP/calls-$tag.out" "/${cg#$CGV2/}" "$comm" \
      "$TMP/$tag-live.txt.json" "$TMP/$tag-exit.txt.json" "$tag" || fail "$tag: CUDA call counts differ from the calls made"
  mon_stop
  if command -v bpftool >/dev/null; then
    poll -t 10 -i 0.1 no_links || true
    [ "$(mon_links)" = 0 ] || fail "$tag: CUDA uprobe links left after SIGTERM"
  fi
}
run_calls multi uprobe.multi
run_calls classic uprobe

# ---- by default (and with --no-cuda-uprobes): off, said so, no CUDA series, and a
# process that maps a CUDA library gets no uprobe through a whole /proc scan period
rm -f "$TMP/go"
spawn -l "$TMP/calls-off.out" holder "$FAKE_CALLS" "$FAKE_LIB" --wait "$TMP/go"
hold=$SPAWNED
poll -t 10 -i 0.1 grep -q '^ready' "$TMP/calls-off.out" || true
for flag in "" --no-cuda-uprobes; do
  mon_start --window 0 --listen 127.0.0.1:$MON_PORT $flag
  sleep 11                                     # longer than the 10 s library scan
  scrape "$TMP/off.txt"
  grep -q '^gpuio_gpu_cuda_uprobes_available 0' "$TMP/off.txt" || fail "default ${flag}: available is not 0"
  grep -q 'cuda_calls_total' "$TMP/off.txt" && fail "default ${flag}: CUDA series exported"
  grep -q 'CUDA call counts: off (--cuda-uprobes counts them)' "$TMP/monitor.log" ||
    { cat "$TMP/monitor.log"; fail "default ${flag}: the off state is not said"; }
  grep -qF "$LIB_REAL" "$TMP/monitor.log" && fail "default ${flag}: the library was probed"
  if command -v bpftool >/dev/null; then
    [ "$(mon_links)" = 0 ] || { bpftool link show; fail "default ${flag}: CUDA uprobe links exist"; }
  fi
  mon_stop
done
touch "$TMP/go"
wait "$hold" || fail "the holder process failed"
echo "PASS: per-process and per-cgroup CUDA call counts equal the calls made with --cuda-uprobes (uprobe.multi and classic; live and folded); idle attaches nothing; by default no CUDA uprobe at all"
