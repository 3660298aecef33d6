#!/usr/bin/env bash
# GPU collector end to end through `gpuio trace`, on this driverless machine:
#  A. launch: the command's (stand-in) driver loads libgpuio-cupti.so from
#     CUDA_INJECTION64_PATH at cuInit, as the real driver does; the collector
#     finds no usable CUPTI, says why once (gpuio's stderr and the capture),
#     and the command's output and exit code are untouched.
#  B. attach: a running process that loaded libcuda is injected by ptrace
#     while gpuio traces it; same outcome, marked as an attach.
#  C. --no-gpu-inject: no injection, the uprobes still see the calls.
#  D. hostile side files planted in CAPTURE.gpu/ (mode 01733: anyone may)
#     while tracing: a FIFO, a symlink, a hard link, a file with a forged VFS
#     record and a huge size field, a writer that never stops, and more names
#     than gpuio has fds. The trace ends on time and stays valid, only GPU
#     records get in (pid forced to the header's), the real collector's
#     record is still there.
# What needs a real GPU (kernels on the timeline) is checked by
# t_cupti_convert.sh with synthetic CUPTI buffers and t_export_gpu.sh.
source "$(dirname "$0")/lib.sh"
need_root
LIB="$(dirname "$GPUIO")/libgpuio-cupti.so"
[ -f "$LIB" ] || skip "libgpuio-cupti.so not built (no CUDA toolkit): $LIB"
FAKE="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
CALLS="$GPUIO_TESTS/fake_libcuda_calls"
[ -x "$CALLS" ] && [ -f "$FAKE" ] || fail "test programs missing: run make test-progs"

# info_records CAPTURE: "state how pid reason" per gpu_info record
info_records() { pycheck cupti_records.info_records "$1"; }
# api_names CAPTURE: names of CUDA API records, one per line
api_names() { pycheck cupti_records.api_names "$1"; }

expected_calls() {  # the CALL lines the program prints by itself, untraced
  "$CALLS" "$FAKE" | sed 's/ tid=[0-9]*//' | sort
}
expected_calls >"$TMP/want.calls"
[ "$(wc -l <"$TMP/want.calls")" -ge 10 ] || fail "untraced run printed too few calls"

# ---- A. launch ----
# the program dlopens the driver itself: the uprobes reach it at gpuio's next
# rescan (1 s), so it waits for $TMP/goA before calling; goA once gpuio says
# they are attached (a fixed 2 s raced gpuio's own start), at most 30 s
( for _ in $(seq 300); do
    grep -q 'cuda uprobes: .*libcuda.so.1: [0-9]* functions' "$TMP/a.err" 2>/dev/null && break
    sleep 0.1
  done; touch "$TMP/goA" ) &
proc_reg $! "goA toucher"
"$GPUIO" trace -o "$TMP/a.json" --capture "$TMP/a.gpuio" -- "$CALLS" "$FAKE" --wait "$TMP/goA" \
  --linger 200 >"$TMP/a.out" 2>"$TMP/a.err" || { cat "$TMP/a.err"; fail "launch trace failed"; }
cat "$TMP/a.err"
grep CALL "$TMP/a.out" | sed 's/ tid=[0-9]*//' | sort >"$TMP/a.calls"
diff "$TMP/want.calls" "$TMP/a.calls" || fail "A: the command's own output changed under the collector"
n=$(grep -c 'GPU collector off in pid [0-9]*: CUPTI unavailable: ' "$TMP/a.err" || true)
[ "$n" -eq 1 ] || fail "A: expected the collector's reason once on stderr, got $n"
info_records "$TMP/a.gpuio" >"$TMP/a.info"
cat "$TMP/a.info"
# state 2 = UNAVAILABLE, how 1 = LAUNCH; the pid is the command's
cpid=$(grep -m1 -o 'GPU collector off in pid [0-9]*' "$TMP/a.err" | grep -o '[0-9]*$')
grep -q "^2 1 $cpid CUPTI unavailable: " "$TMP/a.info" || fail "A: no UNAVAILABLE/launch info record for pid $cpid"
[ "$(grep -c '^2 ' "$TMP/a.info")" -eq 1 ] || fail "A: UNAVAILABLE said more than once in the capture"
[ ! -e "$TMP/a.gpuio.gpu" ] || fail "A: side-file directory left behind"
grep -q 'CUPTI unavailable' "$TMP/a.json" || fail "A: the reason is not in the trace metadata"
api_names "$TMP/a.gpuio" | grep -x cuMemcpyHtoD_v2 >/dev/null || fail "A: uprobes did not see cuMemcpyHtoD_v2"
check_struct "$TMP/a.json"

# ---- B. attach: inject into a process that already loaded libcuda ----
spawn -o "$TMP/b.out" -e "$TMP/b.perr" target "$CALLS" "$FAKE" --wait "$TMP/go" --linger 200
tpid=$SPAWNED
wait_lines "$TMP/b.out" 1
spawn -o "$TMP/b.trace.out" -e "$TMP/b.err" gpuio \
  "$GPUIO" trace -p "$tpid" -o "$TMP/b.json" --capture "$TMP/b.gpuio"
gpid=$SPAWNED
poll grep -q 'GPU collector injected into pid' "$TMP/b.err" || true
grep -q "GPU collector injected into pid $tpid" "$TMP/b.err" || { cat "$TMP/b.err"; fail "B: no injection"; }
touch "$TMP/go"
wait "$tpid" || fail "B: the injected process did not exit 0"
wait "$gpid" || { cat "$TMP/b.err"; fail "B: gpuio trace failed"; }
cat "$TMP/b.err"
grep CALL "$TMP/b.out" | sed 's/ tid=[0-9]*//' | sort >"$TMP/b.calls"
diff "$TMP/want.calls" "$TMP/b.calls" || fail "B: the injected process's output changed"
[ ! -s "$TMP/b.perr" ] || { cat "$TMP/b.perr"; fail "B: the injected process wrote to stderr"; }
info_records "$TMP/b.gpuio" >"$TMP/b.info"
cat "$TMP/b.info"
grep -q "^2 2 $tpid CUPTI unavailable: " "$TMP/b.info" || fail "B: no UNAVAILABLE/attach info record"
n=$(grep -c "GPU collector off in pid $tpid" "$TMP/b.err" || true)
[ "$n" -eq 1 ] || fail "B: expected the reason once on stderr, got $n"
api_names "$TMP/b.gpuio" | grep -x cuLaunchKernel >/dev/null || fail "B: uprobes did not see cuLaunchKernel"
check_struct "$TMP/b.json"

# ---- C. --no-gpu-inject ----
spawn -l "$TMP/c.out" target "$CALLS" "$FAKE" --wait "$TMP/go2" --linger 200
tpid=$SPAWNED
wait_lines "$TMP/c.out" 1
spawn -e "$TMP/c.err" gpuio "$GPUIO" trace --no-gpu-inject -p "$tpid" -o "$TMP/c.json" --capture "$TMP/c.gpuio"
gpid=$SPAWNED
wait_line -t 60 -m "C: gpuio never started tracing" "tracing" "$TMP/c.err"
sleep 2.5   # two gpu_watch periods: an injection would have happened by now
touch "$TMP/go2"
wait "$tpid" || fail "C: target failed"
wait "$gpid" || { cat "$TMP/c.err"; fail "C: gpuio trace failed"; }
! grep -q 'injected' "$TMP/c.err" || fail "C: injected despite --no-gpu-inject"
[ -z "$(info_records "$TMP/c.gpuio")" ] || fail "C: collector records without a collector"
api_names "$TMP/c.gpuio" | grep -x cuCtxSynchronize >/dev/null || fail "C: uprobes did not see cuCtxSynchronize"
# ---- D. the real collector by ptrace into a multi-threaded process (no CUDA) ----
# gpuio inject's default library is libgpuio-cupti.so and its call
# gpuio_cupti_attach(DIR): the collector must load, find no usable CUPTI,
# write one UNAVAILABLE record, and leave every thread's self-checks intact.
mkdir -p "$TMP/d.gpu"
mkfifo "$TMP/d.in"
spawn -i "$TMP/d.in" -l "$TMP/d.out" inject_target "$GPUIO_TESTS/inject_target" threads
tpid=$SPAWNED
exec 7>"$TMP/d.in"
wait_lines "$TMP/d.out" 1
"$GPUIO" inject -p "$tpid" --arg "$TMP/d.gpu" >"$TMP/d.inj" 2>&1 || { cat "$TMP/d.inj"; fail "D: gpuio inject failed"; }
cat "$TMP/d.inj"
grep -q "gpuio_cupti_attach returned" "$TMP/d.inj" || fail "D: the collector's entry point was not called"
printf 'hello' >&7
exec 7>&-
wait "$tpid" || fail "D: the injected process did not exit 0"
cat "$TMP/d.out"
grep -q '^threads ok' "$TMP/d.out" || fail "D: the injected process's threads were disturbed"
n=0
for f in "$TMP"/d.gpu/cupti.*.gpuio; do
  [ -f "$f" ] || continue
  info_records "$f" | has "^2 2 $tpid CUPTI unavailable: " && n=$((n + 1))
  [ "$(info_records "$f" | grep -c '^2 ')" -eq 1 ] || fail "D: UNAVAILABLE said more than once"
done
[ "$n" -eq 1 ] || fail "D: expected one side file with the attach-mode UNAVAILABLE record, found $n"

# ---- F. a process in its own pid namespace (a container) ----
# Its collector knows only its namespace's pid (1 here): gpuio must map it to
# the host pid it traces, or the GPU records land on the wrong process.
if command -v unshare >/dev/null && unshare --pid --fork --mount-proc true 2>/dev/null; then
  spawn -l "$TMP/f.out" unshare unshare --pid --fork --mount-proc "$CALLS" "$FAKE" --wait "$TMP/go4" --linger 200
  upid=$SPAWNED
  wait_lines "$TMP/f.out" 1
  grep -q '^ready 1$' "$TMP/f.out" || fail "F: the program is not pid 1 of its namespace: $(head -1 "$TMP/f.out")"
  hpid=$(pgrep -P "$upid" | head -1)
  [ -n "$hpid" ] || fail "F: no host pid for the namespaced program"
  spawn -e "$TMP/f.err" gpuio "$GPUIO" trace -p "$hpid" -o "$TMP/f.json" --capture "$TMP/f.gpuio"
  gpid=$SPAWNED
  poll grep -q 'GPU collector injected into pid' "$TMP/f.err" || true
  sleep 1.5   # one ingest tick after the injection
  touch "$TMP/go4"
  wait "$upid" || fail "F: the namespaced program failed"
  wait "$gpid" || { cat "$TMP/f.err"; fail "F: gpuio trace failed"; }
  cat "$TMP/f.err"
  grep -q "GPU collector of pid 1 in another pid namespace is pid $hpid here" "$TMP/f.err" ||
    fail "F: the namespace pid was not mapped to $hpid"
  info_records "$TMP/f.gpuio" | grep "^2 2 $hpid CUPTI unavailable: " >/dev/null ||
    fail "F: the collector's record is not on host pid $hpid"
else
  echo "note: F skipped: unshare --pid not available here"
fi

# ---- E. hostile side files ----
# cupti_records.plant DIR VICTIM: what any local user can drop in the world-writable dir
spawn -l "$TMP/e.out" target "$CALLS" "$FAKE" --wait "$TMP/goD" --linger 200
tpid=$SPAWNED
wait_lines "$TMP/e.out" 1
( ulimit -n 1024; exec timeout 60 "$GPUIO" trace -p "$tpid" -o "$TMP/e.json" --capture "$TMP/e.gpuio" ) \
  2>"$TMP/e.err" &
gpid=$!
proc_reg "$gpid" gpuio
wait_for -t 5 -m "E: no side-file directory" "$TMP/e.gpuio.gpu" test -d "$TMP/e.gpuio.gpu"
spawn -e /dev/null planter python3 "$GPUIO_SRC/tests/checks/run.py" cupti_records.plant "$TMP/e.gpuio.gpu" "$$"
ppid=$SPAWNED
sleep 3.5
touch "$TMP/goD"
wait "$tpid" || fail "E: target failed"
rc=0; wait "$gpid" || rc=$?
proc_stop "$ppid"
grep -v FLOOD "$TMP/e.err" | head -30
[ "$rc" -eq 0 ] || fail "E: gpuio trace failed or hung (rc $rc)"
grep -q "cupti.90001.gpuio ignored from here on: not a regular file" "$TMP/e.err" || fail "E: FIFO not refused"
grep -q "cupti.90004.gpuio ignored from here on: hard-linked" "$TMP/e.err" || fail "E: hard link not refused"
grep -q "cupti.90003.gpuio ignored from here on: corrupt record" "$TMP/e.err" || fail "E: huge size not refused"
grep -q "cupti.90006.gpuio ignored from here on: its pid belongs to another user" "$TMP/e.err" ||
  fail "E: another user's file was allowed to name a root process"
! grep -qi "too many open files" "$TMP/e.err" || fail "E: gpuio ran out of fds"
check_struct "$TMP/e.json"
pycheck cupti_records.hostile_capture "$TMP/e.gpuio" "$tpid" || fail "E: hostile records in the capture"
echo "ok: launch and attach collectors report why they are off, once; programs unharmed"
