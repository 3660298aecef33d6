#!/usr/bin/env bash
# t_node_load: `gpuio trace -a --stream --rotate` on a node under moderate
# load loses nothing at the default settings (issue #38).
#
# The load: 3 PyTorch DataLoader loops (2 workers each, 5 ms of sleep a
# sample, 5 ms of compute a step) and, while they run, fio with 2 jobs of
# 4 KiB random preads (psync) of a cached file, each job the whole file once.
# The whole node is traced for 10 s, streamed into files rotated every 4 s.
# Checked:
#   - nothing lost: the summary line and the capture's final stats say 0;
#   - fio's own count: the trace holds exactly fio's total_ios preads of
#     its file, with its io_bytes;
#   - while tracing, the kernel runs gpuio's drain (its main thread) at
#     SCHED_FIFO 1, and the stream's thread at SCHED_OTHER (/proc's own
#     policy field; at SCHED_FIFO 1 only if gpuio says the stream caught up
#     so); a command gpuio launches runs at SCHED_OTHER (reset on
#     fork) under --drain-priority 1, a process tree's drain is at
#     SCHED_OTHER by default, and -a --drain-priority 0 leaves it there;
#   - each rotated file holds its own 4 s of the trace's time and imports
#     into trace_processor_shell with no error.
# Kept, lost, the stream's lag, the exit after the end and the tracer's
# memory are printed (not judged: a shared machine's timing varies).
source "$(dirname "$0")/lib.sh"
source "$GPUIO_SRC/tests/torch_lib.sh"
need_root
need_torch
command -v fio >/dev/null || skip "fio not installed"

D=$TMP/load
mkdir -p "$D/out"
head -c 64M /dev/urandom > "$D/fio.dat"
cat "$D/fio.dat" > /dev/null
torch_warm_data "$D/data" 32 65536

# the policy of every thread of PID: "TID POLICY" (stat field 41: 0 OTHER, 1 FIFO)
policies() {
  local t
  for t in /proc/"$1"/task/*; do
    awk -v t="${t##*/}" '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print t, f[39], f[38] }' "$t/stat" 2>/dev/null
  done
}

# a launched command runs as usual under a real-time drain (SCHED_RESET_ON_FORK);
# a process tree's drain is at the usual priority by default: the command
# reads its own policy and its parent's (gpuio, at that moment in its loop)
cat > "$D/pol.sh" <<'EOF2'
#!/bin/sh
sleep 0.5
for p in $$ $PPID; do
  awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); printf "%s ", f[39] }' /proc/$p/stat
done
echo
EOF2
chmod +x "$D/pol.sh"
"$GPUIO" trace -q --drain-priority 1 --no-export --capture "$D/launch.gpuio" -- "$D/pol.sh" \
  > "$D/launch.out" 2> "$D/launch.err" || { cat "$D/launch.err"; fail "gpuio trace --drain-priority 1 -- sh"; }
echo "launched under --drain-priority 1: command, gpuio policies $(cat "$D/launch.out")"
[ "$(cat "$D/launch.out")" = "0 1 " ] || fail "not (command SCHED_OTHER, gpuio SCHED_FIFO): $(cat "$D/launch.out")"
"$GPUIO" trace -q --no-export --capture "$D/launch.gpuio" -- "$D/pol.sh" \
  > "$D/launch.out" 2> "$D/launch.err" || { cat "$D/launch.err"; fail "gpuio trace -- sh"; }
[ "$(cat "$D/launch.out")" = "0 0 " ] || fail "a process tree's drain is not at SCHED_OTHER by default: $(cat "$D/launch.out")"
"$GPUIO" trace -q -a -d 3s --drain-priority 0 --no-export --capture "$D/p0.gpuio" 2> "$D/p0.err" &
P0=$!
proc_reg "$P0" "gpuio trace --drain-priority 0"
sleep 2
policies "$P0" > "$D/p0.pol"
wait "$P0" || { cat "$D/p0.err"; fail "gpuio trace --drain-priority 0"; }
proc_unreg "$P0"
awk -v p="$P0" '$1 == p' "$D/p0.pol" | grep -q " 0 " || fail "--drain-priority 0: the drain is not at SCHED_OTHER: $(cat "$D/p0.pol")"

for i in 1 2 3; do
  spawn -l "$D/loop$i.log" "loop $i" "$TORCH_PY" "$GPUIO_SRC/tests/progs/torch_shapes.py" loader \
    --data "$D/data" --files 32 --workers 2 --batch 4 --cpu-us 0 --sleep-us 5000 \
    --step-cpu-us 5000 --seconds 25
done
sleep 3
spawn -e "$D/trace.err" "gpuio trace -a" /usr/bin/time -f "tracer: %e s wall, %M KiB peak" \
  "$GPUIO" trace -a -d 10s --stream --rotate 4s -o "$D/out/t.pftrace" --capture "$D/all.gpuio"
TRACE=$SPAWNED
sleep 3
GP=$(pgrep -P "$TRACE" -x gpuio) || fail "no gpuio under time"
policies "$GP" > "$D/all.pol"
fio --name=r --filename="$D/fio.dat" --rw=randread --bs=4k --numjobs=2 --ioengine=psync \
  --size=64M --output-format=json --output="$D/fio.json" > /dev/null 2>&1 ||
  fail "fio failed"
wait "$TRACE" || { cat "$D/trace.err"; fail "gpuio trace -a under load"; }
proc_unreg "$TRACE"
cat "$D/trace.err"
echo "threads of gpuio (tid policy priority): $(tr '\n' ';' < "$D/all.pol")"
awk -v p="$GP" '$1 == p && $2 == 1 && $3 == 1' "$D/all.pol" | grep -q . ||
  fail "the drain (gpuio's main thread $GP) was not at SCHED_FIFO 1"
# the stream's thread takes the drain's priority only to catch up (more
# than 2 s behind), and gpuio then says so
if ! grep -q -- "--stream: caught up at SCHED_FIFO 1 " "$D/trace.err"; then
  [ "$(awk -v p="$GP" '$1 != p && $2 != 0' "$D/all.pol" | wc -l)" = 0 ] ||
    fail "another thread of gpuio ran at a real-time policy: $(cat "$D/all.pol")"
else
  [ "$(awk -v p="$GP" '$1 != p && !($2 == 0 || ($2 == 1 && $3 == 1))' "$D/all.pol" | wc -l)" = 0 ] ||
    fail "a thread of gpuio ran at a real-time policy other than the drain's: $(cat "$D/all.pol")"
fi
grep -q ", 0 dropped ->" "$D/trace.err" || fail "records were lost under moderate load"
"$GPUIO" info --json "$D/all.gpuio" > "$D/info.json" || fail "gpuio info"
"$GPUIO" report --json --files all "$D/all.gpuio" > "$D/report.json" 2> "$D/report.err" ||
  { cat "$D/report.err"; fail "gpuio report"; }
pycheck node_load.whole "$D/info.json" "$D/report.json" "$D/fio.json" "$D/fio.dat" ||
  fail "the trace under load is not whole (FAIL lines above)"
ANCHOR=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["monotonic_ns"])' "$D/info.json")
pycheck stream.rotated_time "$D/out" 4 "$ANCHOR" any || fail "the rotated files do not hold their windows"
for f in "$D"/out/t.*.pftrace; do tp_check --part "$f"; done
echo "moderate load: nothing lost, fio's preads all there, the drain first, the files in their windows"
