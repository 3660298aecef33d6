#!/usr/bin/env bash
# t_monitor_nvml: the monitor's default GPU view, through NVML. A stand-in
# libnvidia-ml.so.1 (tests/progs/fake_nvml.c) answers from a file this test
# writes: two GPUs, their utilisation, and three (gpu, process) entries for
# two live processes. Ground truth is that file and the processes' own
# /proc/PID/comm: every per-GPU and per-process series on /metrics (scraped
# with curl, parsed strictly) must carry exactly those values; a process
# that leaves the GPU leaves the series at the next tick; with 40 processes
# on one GPU the 32 largest are kept and the rest counted as dropped.
# Without NVML: said once in the log, gpuio_gpu_nvml_available 0, no series.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/monitor_lib.sh"
FAKE="$GPUIO_TESTS/fake_nvml.d"
[ -e "$FAKE/libnvidia-ml.so.1" ] || fail "$FAKE/libnvidia-ml.so.1 missing (make test-progs)"

spawn gpu-process-a sleep 300; A=$SPAWNED
spawn gpu-process-b sleep 300; B=$SPAWNED
NV="$TMP/nvml.txt"
cat > "$NV" <<EOF
gpus 2
util 0 37 12
util 1 5 1
proc 0 $A 1073741824 55
proc 0 $B 536870912 -1
proc 1 $B 268435456 20
EOF

LD_LIBRARY_PATH="$FAKE" FAKE_NVML_FILE="$NV" mon_start --window 0 --listen 127.0.0.1:$MON_PORT
sleep 2.5   # a tick samples NVML every second
scrape "$TMP/m1.txt"
check_page() {  # check_page PAGE.json EXPECT (python literal of series -> value)
  pycheck monitor.nvml_page "$1" "$2"
}
ca=$(cat /proc/$A/comm)
cb=$(cat /proc/$B/comm)
check_page "$TMP/m1.txt.json" "{
 'gpuio_gpu_nvml_available{}': 1,
 'gpuio_gpu_utilization_ratio{gpu=\"0\",name=\"Stand-in GPU 0\"}': 0.37,
 'gpuio_gpu_utilization_ratio{gpu=\"1\",name=\"Stand-in GPU 1\"}': 0.05,
 'gpuio_gpu_memory_utilization_ratio{gpu=\"0\",name=\"Stand-in GPU 0\"}': 0.12,
 'gpuio_gpu_memory_utilization_ratio{gpu=\"1\",name=\"Stand-in GPU 1\"}': 0.01,
 'gpuio_gpu_process_memory_bytes{comm=\"$ca\",gpu=\"0\",pid=\"$A\"}': 1073741824,
 'gpuio_gpu_process_memory_bytes{comm=\"$cb\",gpu=\"0\",pid=\"$B\"}': 536870912,
 'gpuio_gpu_process_memory_bytes{comm=\"$cb\",gpu=\"1\",pid=\"$B\"}': 268435456,
 'gpuio_gpu_process_sm_utilization_ratio{comm=\"$ca\",gpu=\"0\",pid=\"$A\"}': 0.55,
 'gpuio_gpu_process_sm_utilization_ratio{comm=\"$cb\",gpu=\"1\",pid=\"$B\"}': 0.2,
}" || fail "per-GPU and per-process NVML series differ from what NVML said"
grep -q "NVML: 2 GPU(s); exporting utilisation, per-process memory and SM utilisation" "$TMP/monitor.log" ||
  { cat "$TMP/monitor.log"; fail "the monitor does not say what NVML gives"; }

# A leaves the GPUs: its series go at the next tick
grep -v " $A " "$NV" > "$NV.new" && mv "$NV.new" "$NV"
sleep 2.5
scrape "$TMP/m2.txt"
grep -q "pid=\"$A\"" "$TMP/m2.txt" && fail "pid $A still has GPU series after leaving the GPU"
grep -q "gpuio_gpu_process_memory_bytes{gpu=\"1\",pid=\"$B\"" "$TMP/m2.txt" || fail "pid $B lost its series"
echo "ok   a process that leaves the GPU leaves the series"

# 40 processes on GPU 0 (memory 1..40 MiB): the 32 largest are kept, 8 counted as dropped
{ echo "gpus 1"; echo "util 0 90 40"; for i in $(seq 40); do echo "proc 0 $((1000000 + i)) $((i << 20)) -1"; done; } > "$NV.new"
mv "$NV.new" "$NV"
sleep 2.5
scrape "$TMP/m3.txt"
pycheck monitor.nvml_bounded "$TMP/m3.txt.json" || fail "bounded per-process series"
mon_stop

# no NVML: said once, available 0, no GPU series
mon_start --window 0 --listen 127.0.0.1:$MON_PORT
sleep 2.5
scrape "$TMP/m4.txt"
grep -q '^gpuio_gpu_nvml_available 0' "$TMP/m4.txt" || fail "without NVML: available is not 0"
grep -qE '^gpuio_gpu_(process_|utilization)' "$TMP/m4.txt" && fail "without NVML: GPU series exported"
[ "$(grep -c 'NVML not available' "$TMP/monitor.log")" = 1 ] ||
  { cat "$TMP/monitor.log"; fail "without NVML: not said exactly once"; }
mon_stop
echo "PASS: t_monitor_nvml"
