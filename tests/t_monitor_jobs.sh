#!/usr/bin/env bash
# t_monitor_jobs: the monitor labels every series with the job its cgroup
# path names (Slurm job/step, Kubernetes pod uid/QoS/container, systemd
# unit), and its VFS series with the filesystem's mount point and type, on
# the cgroup v2 hierarchy and (--cgroups memory) a cgroup v1 controller's.
#
# Cgroups are made with the path shapes slurmstepd and kubelet make; fio
# runs in each (moved in before exec) on an ext4 image on a loop device.
# Ground truth: fio's own JSON (bytes and calls per job), our mount point,
# the ids written into the paths. The daemon's own /proc and /sys reads are
# not in the cgroup series (pseudo filesystems are summed apart) unless
# --pseudo-fs.
source "$(dirname "$0")/lib.sh"
need_root
command -v fio >/dev/null || skip "fio not installed"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
source "$(dirname "$0")/monitor_lib.sh"
[ -n "$CGV2" ] || skip "no cgroup v2 mount"

truncate -s 64M "$TMP/fs.img"
mkfs.ext4 -q -F "$TMP/fs.img"
mkdir -p "$TMP/mnt"
LOOP=$(losetup -f --show "$TMP/fs.img") || skip "no loop device"
mount -o noatime "$LOOP" "$TMP/mnt"
DEV=$(basename "$LOOP")
V1MEM=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
on_exit 'umount "$TMP/mnt" 2>/dev/null; losetup -d "$LOOP" 2>/dev/null'

UID_K=0f3c2b1a-9e8d-4c7b-a6f5-e4d3c2b1a098
CID=4b825dc642cb6eb9a060e54bf8d69288fbee4904ac3c6f1a2b3c4d5e6f708192
SLURM_V2="system.slice/slurmstepd.scope/job_4242/step_0"
KUBE_V2="kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_K//-/_}.slice/cri-containerd-$CID.scope"
# nested cgroups: made top-down, removed bottom-up (CGROUPS is removed in order)
mk_nested() {  # ROOT REL: prints ROOT/REL
  local p="$1" part
  IFS=/ read -ra parts <<< "$2"
  for part in "${parts[@]}"; do p="$p/$part"; mkdir -p "$p" || skip "cannot create $p"; done
  echo "$1/$2"
}
rm_nested() {  # ROOT REL
  local p="$1/$2"
  while [ "$p" != "$1" ]; do rmdir "$p" 2>/dev/null || true; p=$(dirname "$p"); done
}
on_exit "rm_nested $CGV2 $SLURM_V2; rm_nested $CGV2 $KUBE_V2; ${V1MEM:+rm_nested $V1MEM slurm/uid_0/job_4343/step_batch}"

job_fio() {  # NAME RW BS: a job file on the ext4 image
  cat > "$TMP/$1.fio" <<JOB
[global]
directory=$TMP/mnt
size=2m
ioengine=psync
direct=1
[$1]
rw=$2
bs=$3
JOB
  fio "$TMP/$1.fio" --create_only=1 > /dev/null 2>&1 || fail "fio layout $1"
}
run_in() {  # CGROUP NAME: fio NAME inside CGROUP, to completion
  start_in_cgroup "$1" fio "$TMP/$2.fio" --output-format=json --output="$TMP/fio-$2.json"
  wait "$CGPID" || fail "fio $2 failed"
}

# ---- cgroup v2: a Slurm step (cgroup/v2 plugin) and a Kubernetes container (systemd driver)
job_fio slurm randread 4k
job_fio kube randwrite 16k
CG_SLURM=$(mk_nested "$CGV2" "$SLURM_V2")
CG_KUBE=$(mk_nested "$CGV2" "$KUBE_V2")
mon_start --listen 127.0.0.1:$MON_PORT --window 0
run_in "$CG_SLURM" slurm
run_in "$CG_KUBE" kube
sleep 1.2
scrape "$TMP/v2.txt"
pycheck monitor.jobs_v2 "$TMP/v2.txt.json" "$TMP" "$DEV" "$UID_K" "$CID" "/$SLURM_V2" "/$KUBE_V2" || fail "v2: job labels"
# the daemon's own /proc reads happen on every scrape: counted apart, not lost
grep -qE '^gpuio_pseudo_fs_vfs_ops_total\{op="read"\} [1-9]' "$TMP/v2.txt" || fail "the monitor's own /proc reads are not counted"
mon_stop

# --pseudo-fs keeps them: a series with fstype="proc" appears
mon_start --listen 127.0.0.1:$MON_PORT --window 0 --pseudo-fs
cat /proc/self/status > /dev/null; sleep 1.2; scrape "$TMP/p.txt"; sleep 1.2; scrape "$TMP/p.txt"
grep -q 'gpuio_cgroup_vfs_ops_total{.*fstype="proc"' "$TMP/p.txt" || fail "--pseudo-fs: no proc series"
mon_stop

# ---- cgroup v1: a Slurm step in the memory controller's hierarchy (cgroup/v1 plugin)
if [ -z "$V1MEM" ]; then
  echo "no cgroup v1 memory hierarchy here: the v1 path is not checked"
  exit 0
fi
job_fio v1 randread 8k
CG_V1=$(mk_nested "$V1MEM" slurm/uid_0/job_4343/step_batch)
mon_start --listen 127.0.0.1:$MON_PORT --window 0 --cgroups memory
grep -q "cgroups: memory ($V1MEM)" "$TMP/monitor.log" || { cat "$TMP/monitor.log"; fail "--cgroups memory: not said"; }
run_in "$CG_V1" v1
sleep 1.2
scrape "$TMP/v1.txt"
pycheck monitor.jobs_v1 "$TMP/v1.txt.json" "$TMP" "$DEV" || fail "v1: job labels"
# a controller that does not exist is refused, saying why
if "$GPUIO" monitor --run-dir "$TMP/run2" --cgroups nosuch --listen 127.0.0.1:$((MON_PORT + 1)) > "$TMP/bad.out" 2>&1; then
  fail "--cgroups nosuch accepted"
fi
grep -q "no such cgroup v1 controller" "$TMP/bad.out" || { cat "$TMP/bad.out"; fail "--cgroups nosuch: no reason"; }
echo "job identity labels match fio per job on v2 and v1"
