# tests/torch_lib.sh — sourced by tests (after lib.sh): real PyTorch DataLoader
# training loops that measure themselves (tests/progs/torch_loader.py, flags
# and JSON fields in its docstring), in three scenarios whose cause of waiting
# is known:
#
#   torch_io_bound OUTJSON [WRAPPER...]
#       I/O-bound: 64 files of 256 KiB on ext4 on a loop device, read cold
#       (created, then the filesystem unmounted and mounted again, noatime:
#       its page cache is gone — checked with fincore, 0 pages resident),
#       the device throttled to 4 MiB/s for reads by a cgroup v1 blkio group
#       (blkio.throttle.read_bps_device "MAJ:MIN BPS") that the command runs
#       in. 2 workers, batch 4, no per-sample CPU, 2 ms of compute per step:
#       the loop waits ~16 MiB / 4 MiB/s = ~4 s for data, its workers
#       blocked in reads (D state in the throttle), and computes ~32 ms.
#       Needs root, the blkio controller, a loop device and mkfs.ext4 (else
#       skip). Cleaned up on return and on exit (unmount, losetup -d, rmdir).
#       We do not drop the global caches (echo 3 > drop_caches): remounting
#       empties this filesystem's cache without disturbing anything else
#       running on the machine.
#   torch_cpu_bound OUTJSON [WRAPPER...]
#       CPU-bound: 96 files of 64 KiB in $TMP (normal filesystem), warm (read
#       once before; fincore: all resident), 2 workers, batch 4, 25 ms of CPU
#       per sample in the workers, 5 ms of compute per step: workers are the
#       bottleneck (each batch costs a worker 100 ms), the loop waits ~80% of
#       ~1.4 s, sleeping while workers run.
#   torch_cpu_shortage OUTJSON [WRAPPER...]
#       CPU shortage: 3 x nproc workers (6 on 2 cores), 96 files of 64 KiB
#       warm, 25 ms of CPU per sample and 25 ms of compute per step: more
#       runnable threads than CPUs, so workers and the loop thread wait for a
#       CPU (schedstat run_delay), and the loop's compute takes longer in wall
#       time than its CPU time.
#
# Each function creates its data, runs
#     [WRAPPER...] /usr/bin/python3 tests/progs/torch_loader.py ... --out OUTJSON
# (WRAPPER: e.g. `"$GPUIO" trace --capture X --` to trace it; in the I/O
# scenario the wrapper runs in the throttled cgroup too: reads it makes from
# other devices are not throttled), prints the program's one-line summary,
# and adds a "scenario" object to OUTJSON: name, the facts the test set up
# (throttle_bps, device "MAJ:MIN", loop, cgroup, cgroup_read_bytes: the
# bytes blkio counted as read from the device by the group; resident_bytes:
# fincore before the run) and the program's command line. The program's
# stdout and stderr are in OUTJSON.log.
#
# Sizes are variables (set them before calling): TORCH_IO_FILES,
# TORCH_IO_FILE_SIZE, TORCH_IO_BPS, TORCH_CPU_FILES, TORCH_CPU_FILE_SIZE,
# TORCH_CPU_US, TORCH_SHORT_WORKERS, ... (defaults below). Every scenario
# runs in ~2-7 s on a 2-core machine (torch's import is ~1 s of it).
#
# Sourcing it registers torch_io_cleanup with on_exit (tests/lib/proc.sh): the
# I/O scenario's setup is undone at exit too, whatever the test's end.
#
# Torch: Debian's python3-torch for /usr/bin/python3 (scripts/install-deps.sh
# test). Always /usr/bin/python3: a `python3` on PATH may be another
# interpreter without torch.

TORCH_PY=${TORCH_PY:-/usr/bin/python3}
TORCH_PROG="$GPUIO_SRC/tests/progs/torch_loader.py"

TORCH_IO_FILES=${TORCH_IO_FILES:-64}
TORCH_IO_FILE_SIZE=${TORCH_IO_FILE_SIZE:-262144}
TORCH_IO_BPS=${TORCH_IO_BPS:-4194304}
TORCH_IO_WORKERS=${TORCH_IO_WORKERS:-2}
TORCH_IO_STEP_CPU_US=${TORCH_IO_STEP_CPU_US:-2000}
TORCH_CPU_FILES=${TORCH_CPU_FILES:-96}
TORCH_CPU_FILE_SIZE=${TORCH_CPU_FILE_SIZE:-65536}
TORCH_CPU_WORKERS=${TORCH_CPU_WORKERS:-2}
TORCH_CPU_US=${TORCH_CPU_US:-25000}
TORCH_CPU_STEP_CPU_US=${TORCH_CPU_STEP_CPU_US:-5000}
TORCH_SHORT_WORKERS=${TORCH_SHORT_WORKERS:-$((3 * $(nproc)))}
TORCH_SHORT_CPU_US=${TORCH_SHORT_CPU_US:-25000}
TORCH_SHORT_STEP_CPU_US=${TORCH_SHORT_STEP_CPU_US:-25000}
TORCH_BATCH=${TORCH_BATCH:-4}

# need_torch: skip (exit 77, saying why) unless /usr/bin/python3 imports torch
need_torch() {
  [ -x "$TORCH_PY" ] || skip "$TORCH_PY not found (torch tests need Debian's python3-torch)"
  local err
  err=$("$TORCH_PY" -c 'import torch' 2>&1) ||
    skip "$TORCH_PY cannot import torch (apt-get install python3-torch; scripts/install-deps.sh test): $(tail -n1 <<<"$err")"
}

# ---- state of the I/O scenario, undone by torch_io_cleanup (also on exit)
TORCH_MNT="" TORCH_LOOP="" TORCH_CG="" TORCH_IMG=""
torch_io_cleanup() {
  local p
  if [ -n "$TORCH_CG" ] && [ -d "$TORCH_CG" ]; then
    # only what we started is in our group: the program (and its wrapper)
    for p in $(cat "$TORCH_CG/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
    # (a cgroup file's size is 0: read it to see whether it still lists a pid)
    poll -t 5 -i 0.1 _torch_cg_empty "$TORCH_CG" || true
    rmdir "$TORCH_CG" 2>/dev/null || echo "torch_lib: could not remove $TORCH_CG" >&2
  fi
  TORCH_CG=""
  if [ -n "$TORCH_MNT" ]; then
    mountpoint -q "$TORCH_MNT" && { umount "$TORCH_MNT" 2>/dev/null || umount -l "$TORCH_MNT"; }
    TORCH_MNT=""
  fi
  [ -n "$TORCH_LOOP" ] && { losetup -d "$TORCH_LOOP" 2>/dev/null || echo "torch_lib: could not detach $TORCH_LOOP" >&2; }
  TORCH_LOOP=""
  [ -n "$TORCH_IMG" ] && rm -f "$TORCH_IMG"
  TORCH_IMG=""
  return 0
}
_torch_cg_empty() { [ -z "$(cat "$1/cgroup.procs" 2>/dev/null)" ]; }
on_exit torch_io_cleanup

# torch_run NAME OUTJSON NPRE PRE... ARGS...: run [PRE...] python PROGRAM ARGS
# --out OUTJSON (NPRE words of PRE go in front of the python command); fail
# with its log
torch_run() {
  local name=$1 out=$2 npre=$3; shift 3
  local pre=("${@:1:npre}"); shift "$npre"
  local rc=0
  rm -f "$out"
  "${pre[@]}" "$TORCH_PY" "$TORCH_PROG" "$@" --out "$out" >"$out.log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { cat "$out.log"; fail "$name: ${pre[*]} torch_loader.py $* failed (rc=$rc)"; }
  [ -s "$out" ] || { cat "$out.log"; fail "$name: torch_loader.py wrote no $out"; }
}

# torch_scenario OUTJSON KEY=VALUE...: add "scenario" to OUTJSON, print the summary
torch_scenario() {
  pycheck torch_truth.add_scenario "$@"
}

# torch_resident FILES...: bytes of them in the page cache (fincore)
torch_resident() {
  fincore -nb -o RES "$@" | awk '{ s += $1 } END { print s + 0 }'
}

# torch_warm_data DIR N SIZE: create DIR's N sample files (once) and read them
# into the page cache
torch_warm_data() {
  local dir=$1 n=$2 size=$3
  if [ ! -e "$dir/sample-$(printf %05d $((n - 1))).bin" ]; then
    "$TORCH_PY" "$TORCH_PROG" --create --data "$dir" --files "$n" --file-size "$size" 2>/dev/null ||
      fail "torch_loader.py --create $dir failed"
  fi
  cat "$dir"/sample-*.bin >/dev/null
}

torch_io_bound() {
  local out=$1; shift
  need_root
  local blkio=/sys/fs/cgroup/blkio
  [ -w "$blkio/cgroup.procs" ] || skip "no cgroup v1 blkio controller to throttle a device"
  command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (e2fsprogs)"
  local n=$TORCH_IO_FILES size=$TORCH_IO_FILE_SIZE bps=$TORCH_IO_BPS
  torch_io_cleanup
  TORCH_IMG="$TMP/torch-io.img"
  TORCH_MNT="$TMP/torch-io.mnt"
  truncate -s $(( n * size * 2 + (32 << 20) )) "$TORCH_IMG"
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$TORCH_IMG" || fail "mkfs.ext4 failed"
  TORCH_LOOP=$(losetup -f --show --direct-io=on "$TORCH_IMG" 2>/dev/null) ||
    TORCH_LOOP=$(losetup -f --show "$TORCH_IMG") || skip "no loop device"
  mkdir -p "$TORCH_MNT"
  mount -o noatime "$TORCH_LOOP" "$TORCH_MNT" || skip "cannot mount ext4 on $TORCH_LOOP"
  local data="$TORCH_MNT/data"
  "$TORCH_PY" "$TORCH_PROG" --create --data "$data" --files "$n" --file-size "$size" 2>/dev/null ||
    fail "torch_loader.py --create failed"
  # cold: unmount and mount again, this filesystem's page cache is gone
  umount "$TORCH_MNT" || fail "umount $TORCH_MNT failed"
  mount -o noatime "$TORCH_LOOP" "$TORCH_MNT" || fail "mount $TORCH_LOOP again failed"
  local resident
  resident=$(torch_resident "$data"/sample-*.bin)
  local dev
  dev="$(($(stat -c '0x%t' "$TORCH_LOOP"))):$(($(stat -c '0x%T' "$TORCH_LOOP")))"
  TORCH_CG="$blkio/gpuio-torch-$$"
  mkdir "$TORCH_CG" || skip "cannot create $TORCH_CG"
  echo "$dev $bps" >"$TORCH_CG/blkio.throttle.read_bps_device" || skip "cannot throttle $TORCH_LOOP"
  local args=(--data "$data" --files "$n" --workers "$TORCH_IO_WORKERS" --batch "$TORCH_BATCH"
              --step-cpu-us "$TORCH_IO_STEP_CPU_US")
  # the command joins the throttled group before it execs
  local pre=(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$TORCH_CG" "$@")
  torch_run io_bound "$out" ${#pre[@]} "${pre[@]}" "${args[@]}"
  local cgread
  cgread=$(awk -v d="$dev" '$1 == d && $2 == "Read" { print $3 }' "$TORCH_CG/blkio.throttle.io_service_bytes")
  torch_scenario "$out" name=io_bound throttle_bps="$bps" device="$dev" loop="$TORCH_LOOP" \
    cgroup="$TORCH_CG" cgroup_read_bytes="${cgread:-0}" resident_bytes="$resident" \
    file_size="$size" cmd="${args[*]}"
  torch_io_cleanup
}

torch_cpu_bound() {
  local out=$1; shift
  local data="$TMP/torch-cpu" n=$TORCH_CPU_FILES size=$TORCH_CPU_FILE_SIZE
  torch_warm_data "$data" "$n" "$size"
  local resident
  resident=$(torch_resident "$data"/sample-*.bin)
  local args=(--data "$data" --files "$n" --workers "$TORCH_CPU_WORKERS" --batch "$TORCH_BATCH"
              --cpu-us "$TORCH_CPU_US" --step-cpu-us "$TORCH_CPU_STEP_CPU_US")
  torch_run cpu_bound "$out" $# "$@" "${args[@]}"
  torch_scenario "$out" name=cpu_bound resident_bytes="$resident" file_size="$size" cmd="${args[*]}"
}

torch_cpu_shortage() {
  local out=$1; shift
  local data="$TMP/torch-cpu" n=$TORCH_CPU_FILES size=$TORCH_CPU_FILE_SIZE
  torch_warm_data "$data" "$n" "$size"
  local resident
  resident=$(torch_resident "$data"/sample-*.bin)
  local args=(--data "$data" --files "$n" --workers "$TORCH_SHORT_WORKERS" --batch "$TORCH_BATCH"
              --cpu-us "$TORCH_SHORT_CPU_US" --step-cpu-us "$TORCH_SHORT_STEP_CPU_US")
  torch_run cpu_shortage "$out" $# "$@" "${args[@]}"
  torch_scenario "$out" name=cpu_shortage resident_bytes="$resident" file_size="$size" \
    nproc="$(nproc)" cmd="${args[*]}"
}
