#!/usr/bin/env bash
# t_deploy_metrics: the Prometheus rules and the Grafana dashboard shipped in
# scripts/deploy/ query only what a live `gpuio monitor` serves.
#  (a) promtool check rules, and promtool test rules gpuio-rules.test.yml
#      (synthetic series: recording-rule values, alerts firing or not);
#  (b) the dashboard is JSON with a ${datasource} variable, its PromQL parses
#      (promtool, Grafana's variables filled in); every metric and
#      label named by a panel target, a template variable, a rule or an alert
#      annotation is extracted (recording-rule outputs, job:…/instance:…,
#      are resolved to the families their rules read);
#  (c) a live monitor (--window 0, stand-in NVML with one GPU process,
#      --cuda-uprobes with a stand-in libcuda) while dd writes and reads
#      (buffered, cache-dropped, O_DIRECT) an ext4 loop image from a Slurm
#      step's and a Kubernetes container's cgroup, each then a shell loop
#      waiting on its children's output (the loop series): every family referenced is
#      on /metrics (I/O families with samples), and every label selected or
#      grouped by is on a series of a family that expression reads. The
#      recorder's families (--window > 0, the default) come from a second,
#      short run of the monitor with a window.
# Without promtool, (b) and (c) still run and the test ends as skipped.
source "$(dirname "$0")/lib.sh"
need_root
source "$(dirname "$0")/monitor_lib.sh"
D="$GPUIO_SRC/scripts/deploy"
RULES="$D/prometheus/gpuio-rules.yml"; DASH="$D/grafana/gpuio-dashboard.json"

# (a)
NO_PROMTOOL=""
if command -v promtool >/dev/null; then
  promtool check rules "$RULES" || fail "promtool check rules $RULES"
  (cd "$D/prometheus" && promtool test rules gpuio-rules.test.yml) || fail "promtool test rules gpuio-rules.test.yml"
else
  NO_PROMTOOL="promtool not installed (Debian package prometheus): rules not checked by promtool"
  echo "note: $NO_PROMTOOL"
fi

# (c) the live page
[ -n "$CGV2" ] || skip "no cgroup v2 mount"
FAKE_NVML="$GPUIO_TESTS/fake_nvml.d"; FAKE_CUDA="$GPUIO_TESTS/fake_cuda/libcuda.so.1"
for f in "$FAKE_NVML/libnvidia-ml.so.1" "$FAKE_CUDA" "$GPUIO_TESTS/fake_libcuda_calls"; do
  [ -e "$f" ] || fail "$f missing (make test-progs)"
done
# block series need real disk I/O: an ext4 image on a loop device
truncate -s 64M "$TMP/fs.img"; mkfs.ext4 -q -F "$TMP/fs.img"; mkdir -p "$TMP/mnt"
LOOP=$(losetup -f --show "$TMP/fs.img") || skip "no loop device"
on_exit "umount $TMP/mnt 2>/dev/null; losetup -d $LOOP 2>/dev/null"
mount -o noatime "$LOOP" "$TMP/mnt"
# cgroups whose paths name a Slurm step and a Kubernetes container (the
# identity labels); only the directories made here are removed, deepest first
mkcg() {
  local p=$CGV2 part parts
  IFS=/ read -ra parts <<< "$1"
  for part in "${parts[@]}"; do
    p="$p/$part"
    [ -d "$p" ] || { mkdir "$p" || skip "cannot create cgroup $p"; CGROUPS=("$p" "${CGROUPS[@]}"); }
  done
}
SLURM=system.slice/slurmstepd.scope/job_$$/step_0
POD=0f3c2b1a_9e8d_4c7b_a6f5_$(printf %012x $$)
KUBE=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$POD.slice/cri-containerd-$(echo $$ | sha256sum | cut -c1-64).scope
mkcg "$SLURM"; mkcg "$KUBE"
# one process on the stand-in GPU (memory and SM utilisation series)
spawn gpu-process sleep 300; GPUPROC=$SPAWNED
printf 'gpus 1\nutil 0 40 10\nproc 0 %s 2147483648 30\n' "$GPUPROC" > "$TMP/nvml.txt"
LD_LIBRARY_PATH="$FAKE_NVML" FAKE_NVML_FILE="$TMP/nvml.txt" \
  mon_start --window 0 --listen 127.0.0.1:$MON_PORT --top-k 200 --cuda-uprobes

# each job: buffered write + fsync (VFS writes, dirtied pages, block writes),
# drop the file from the page cache (iflag=nocache count=0), a buffered read
# (page-cache misses), an O_DIRECT read (block reads); then a loop for the
# thread-time series: the shell reads each $(...) child's output, 8 sleeps
# ended by a descendant's write (a loop waiting for data)
IO='dd if=/dev/zero of="$1" bs=64k count=64 conv=fsync status=none &&
    dd if="$1" iflag=nocache count=0 status=none &&
    dd if="$1" of=/dev/null bs=64k status=none &&
    dd if="$1" of=/dev/null bs=64k iflag=direct status=none &&
    for i in 1 2 3 4 5 6 7 8; do x=$(sleep 0.05; echo "$i"); done'
for j in slurm:"$SLURM" kube:"$KUBE"; do
  start_in_cgroup "$CGV2/${j#*:}" sh -c "$IO" sh "$TMP/mnt/${j%%:*}"
  wait "$CGPID" || fail "dd in ${j#*:}"
done
# CUDA calls (stand-in libcuda.so.1) from both jobs: the daemon's /proc scan
# (every 10 s) probes the library, then each program makes its calls
for cg in "$SLURM" "$KUBE"; do
  rm -f "$TMP/go"
  spawn -l "$TMP/calls.out" fake_libcuda_calls sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CGV2/$cg" \
    "$GPUIO_TESTS/fake_libcuda_calls" "$FAKE_CUDA" --wait "$TMP/go"
  CALLS=$SPAWNED
  poll -t 30 -i 0.1 grep -qF "$(realpath "$FAKE_CUDA"): " "$TMP/monitor.log" || true
  grep -qF "$(realpath "$FAKE_CUDA"): " "$TMP/monitor.log" || { cat "$TMP/monitor.log"; fail "the CUDA library was not probed"; }
  touch "$TMP/go"; wait "$CALLS" || fail "fake_libcuda_calls in $cg failed"
done
sleep 2.5                                  # a refresh tick
scrape "$TMP/m.txt"
mon_stop
# the flight recorder's families exist only with a window (the default 60s)
mon_start --window 5s --listen 127.0.0.1:$MON_PORT
scrape "$TMP/rec.txt"
mon_stop

# (b) and the comparison
pycheck deploy.rules_vs_metrics "$TMP/m.txt" "$TMP/rec.txt" "$RULES" "$DASH" "$TMP/dash-rules.yml" ||
  fail "the rules or the dashboard query what /metrics does not have (FAIL lines above)"
if [ -z "$NO_PROMTOOL" ]; then   # every panel's and variable's PromQL parses
  promtool check rules "$TMP/dash-rules.yml" > "$TMP/dash-rules.out" 2>&1 ||
    { cat "$TMP/dash-rules.out"; fail "promtool rejects the dashboard's PromQL"; }
  echo "promtool: the dashboard's $(grep -o '[0-9]* rules' "$TMP/dash-rules.out") (panel targets, variables) parse"
fi
[ -z "$NO_PROMTOOL" ] || skip "$NO_PROMTOOL (the live checks passed)"
echo "rules and dashboard match the live /metrics"
