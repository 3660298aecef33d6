# tests/shapes_lib.sh — sourced by the t_shape_*.sh tests (after lib.sh; it
# sources tests/torch_lib.sh): PyTorch training loops of the common job shapes
# (tests/progs/torch_shapes.py, flags and JSON fields in its docstring) in
# scenarios whose cause of waiting is known, each run untraced, traced from
# its start, or attached to mid-run:
#
#   shape_ranks MODE BASE N CPU_US_LIST
#       N ranks started by one launcher as torchrun starts one loop per GPU:
#       `python3 -m torch.distributed.run --standalone --nproc_per_node N`
#       (offline, no process group; see SHAPE_LAUNCHER below), each rank a
#       DataLoader with 2 workers over its own warm files ($TMP/ranks/rank-R,
#       16 x 64 KiB), per-sample CPU from CPU_US_LIST (one value per rank:
#       the rank with the most waits most), 5 ms of compute per step, for
#       2.5 s of steps (--seconds: as long on any machine). BASE.json holds
#       every rank's JSON under "ranks".
#   shape_threads MODE BASE
#       a loop fed by 2 reader threads of its own process through a
#       queue.Queue, the files cold (64 x 128 KiB on ext4 on a loop device,
#       unmounted and mounted again: fincore 0) and the device throttled to
#       4 MiB/s for reads (cgroup v1 blkio, as tests/torch_lib.sh's I/O
#       scenario): ~2 s of queue.get() waiting on the readers' reads.
#   shape_noworkers MODE BASE
#       num_workers=0: the loop thread reads the same cold, throttled files
#       itself inside next() (~2 s in open+read).
#   shape_memmap MODE BASE
#       3 numpy.memmap files of 16 MiB, cold, throttled to 16 MiB/s, read by
#       2 DataLoader workers only through page faults (256 KiB samples,
#       every byte once): ~3 s; mincore before and after.
#   shape_remote MODE BASE
#       2 workers fetch 96 objects of 256 KiB over HTTP from
#       tests/progs/object_store.py on 127.0.0.1 (40 ms per request; traced
#       with --all-fds: sockets); the store's own log (requests, bytes,
#       per-request times) in the scenario as "server".
#   shape_loader MODE BASE SECONDS [--pin-memory]
#       the DataLoader loop with 2 persistent workers, warm files (32 x 64
#       KiB), 25 ms of CPU per sample, 5 ms of compute per step, for SECONDS
#       of steps; --pin-memory: through DataLoader's pin-memory thread.
#
# MODE: plain (untraced), launch (`gpuio trace --no-export --capture
# BASE.gpuio -- CMD`), attach (CMD started, then `gpuio trace -p PID -d
# $SHAPE_ATTACH_FOR --capture BASE.gpuio` once SHAPE_ATTACH_AT says: "ready",
# the default, right after the program's --ready file(s) appear, i.e. just
# before its first step; or a number of seconds after the start). In a
# throttled scenario the command (launch: gpuio and the command) runs in the
# blkio group. Outputs, by BASE: BASE.json (the program's, plus "scenario":
# name, mode, the facts set up, "info": `gpuio info --json` of the capture,
# whose first_ts_ns/last_ts_ns are the trace window), BASE.log (the
# command's output), BASE.gpuio, BASE.info.json, BASE.trace.log.
#
#   shape_exports BASE   BASE.gpuio converted to BASE.trace.json and
#                        BASE.trace.pftrace: each through check_struct (our
#                        checker, Perfetto's importer) and the counts
#                        `gpuio convert` said it wrote
#   shape_report SHAPE BASE   `gpuio report --json` into BASE.report.json,
#                        then shapes_truth.report, and findings_truth.report
#                        (the exports draw its steps and GPU gaps): the verdict
#   shape_own SHAPE BASE      the program's own numbers against the scenario
#
# Sizes are variables (set them before calling; defaults below); every run
# takes ~2-8 s on 2 cores (torch's import ~1 s of it). Torch: /usr/bin/python3
# (tests/torch_lib.sh: need_torch). The throttled setup is undone by
# torch_io_cleanup (registered by torch_lib.sh with on_exit).

source "$(dirname "${BASH_SOURCE[0]}")/torch_lib.sh"

SHAPES_PROG="$GPUIO_SRC/tests/progs/torch_shapes.py"
SHAPES_STORE="$GPUIO_SRC/tests/progs/object_store.py"

SHAPE_BATCH=${SHAPE_BATCH:-4}
SHAPE_STEP_CPU_US=${SHAPE_STEP_CPU_US:-2000}
SHAPE_RANK_FILES=${SHAPE_RANK_FILES:-16}
SHAPE_RANK_FILE_SIZE=${SHAPE_RANK_FILE_SIZE:-65536}
SHAPE_RANK_STEP_CPU_US=${SHAPE_RANK_STEP_CPU_US:-2000}
SHAPE_RANK_SECONDS=${SHAPE_RANK_SECONDS:-2.5}
SHAPE_IO_FILES=${SHAPE_IO_FILES:-64}
SHAPE_IO_FILE_SIZE=${SHAPE_IO_FILE_SIZE:-131072}
SHAPE_IO_BPS=${SHAPE_IO_BPS:-4194304}
SHAPE_MMAP_FILES=${SHAPE_MMAP_FILES:-3}
SHAPE_MMAP_FILE_SIZE=${SHAPE_MMAP_FILE_SIZE:-16777216}
SHAPE_MMAP_SAMPLE=${SHAPE_MMAP_SAMPLE:-262144}
SHAPE_MMAP_BPS=${SHAPE_MMAP_BPS:-16777216}
SHAPE_REMOTE_OBJECTS=${SHAPE_REMOTE_OBJECTS:-96}
SHAPE_REMOTE_SIZE=${SHAPE_REMOTE_SIZE:-262144}
SHAPE_REMOTE_LATENCY_MS=${SHAPE_REMOTE_LATENCY_MS:-40}
SHAPE_CPU_FILES=${SHAPE_CPU_FILES:-32}
SHAPE_CPU_FILE_SIZE=${SHAPE_CPU_FILE_SIZE:-65536}
SHAPE_CPU_US=${SHAPE_CPU_US:-25000}
SHAPE_CPU_STEP_CPU_US=${SHAPE_CPU_STEP_CPU_US:-5000}
# attach mode: when (ready, or seconds after the start) and for how long
SHAPE_ATTACH_AT=${SHAPE_ATTACH_AT:-ready}
SHAPE_ATTACH_FOR=${SHAPE_ATTACH_FOR:-1500ms}
# how long a program may take at most (a hang, not a speed check)
SHAPE_MAX_SECS=${SHAPE_MAX_SECS:-180}
SHAPE_TRACE_OPTS=()
SHAPE_READY=()

# ---- the throttled cold device (torch_lib.sh's TORCH_* state: torch_io_cleanup undoes it)
SHAPE_DEV=""
# shape_cold_fs: ext4 on a loop device, room for every throttled shape's data,
# mounted noatime at $TORCH_MNT, and the blkio group $TORCH_CG; once per test
# (skip without root, blkio, mkfs.ext4 or a loop device)
shape_cold_fs() {
  [ -n "$TORCH_CG" ] && return 0
  need_root
  local blkio=/sys/fs/cgroup/blkio
  [ -w "$blkio/cgroup.procs" ] || skip "no cgroup v1 blkio controller to throttle a device"
  command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (e2fsprogs)"
  torch_io_cleanup
  TORCH_IMG="$TMP/shape.img"
  TORCH_MNT="$TMP/shape.mnt"
  local need=$(( SHAPE_IO_FILES * SHAPE_IO_FILE_SIZE + SHAPE_MMAP_FILES * SHAPE_MMAP_FILE_SIZE ))
  truncate -s $(( need + need / 4 + (32 << 20) )) "$TORCH_IMG"
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$TORCH_IMG" || fail "mkfs.ext4 failed"
  TORCH_LOOP=$(losetup -f --show --direct-io=on "$TORCH_IMG" 2>/dev/null) ||
    TORCH_LOOP=$(losetup -f --show "$TORCH_IMG") || skip "no loop device"
  mkdir -p "$TORCH_MNT"
  mount -o noatime "$TORCH_LOOP" "$TORCH_MNT" || skip "cannot mount ext4 on $TORCH_LOOP"
  SHAPE_DEV="$(($(stat -c '0x%t' "$TORCH_LOOP"))):$(($(stat -c '0x%T' "$TORCH_LOOP")))"
  TORCH_CG="$blkio/gpuio-shape-$$"
  mkdir "$TORCH_CG" || skip "cannot create $TORCH_CG"
}
# shape_cold_data DIR N SIZE: N sample files of SIZE bytes in DIR (made once)
shape_cold_data() {
  [ -e "$1/sample-$(printf %05d $(($2 - 1))).bin" ] && return 0
  "$TORCH_PY" "$TORCH_PROG" --create --data "$1" --files "$2" --file-size "$3" 2>/dev/null ||
    fail "torch_loader.py --create $1 failed"
}
# shape_make_cold BPS FILES...: unmount and mount again (this filesystem's page
# cache is gone, nothing else's), reads from the device throttled to BPS;
# SHAPE_RESIDENT: bytes of FILES in the page cache now (fincore);
# SHAPE_CG_READ0: what blkio counted read so far
shape_make_cold() {
  local bps=$1; shift
  umount "$TORCH_MNT" || fail "umount $TORCH_MNT failed"
  mount -o noatime "$TORCH_LOOP" "$TORCH_MNT" || fail "mount $TORCH_LOOP again failed"
  echo "$SHAPE_DEV $bps" >"$TORCH_CG/blkio.throttle.read_bps_device" || skip "cannot throttle $TORCH_LOOP"
  SHAPE_BPS=$bps
  SHAPE_RESIDENT=$(torch_resident "$@")
  SHAPE_CG_READ0=$(shape_cg_read)
}
shape_cg_read() {
  awk -v d="$SHAPE_DEV" '$1 == d && $2 == "Read" { n = $3 } END { print n + 0 }' \
    "$TORCH_CG/blkio.throttle.io_service_bytes"
}
# the facts of a throttled run, for shape_scenario
shape_cold_facts() {
  echo "throttle_bps=$SHAPE_BPS" "device=$SHAPE_DEV" "loop=$TORCH_LOOP" "cgroup=$TORCH_CG" \
    "cgroup_read_bytes=$(( $(shape_cg_read) - SHAPE_CG_READ0 ))" "resident_bytes=$SHAPE_RESIDENT"
}

# ---- running a program: plain, launch, attach
# shape_exec MODE BASE NAME CMD...: run CMD (see the header); fails with its
# log when it fails; SHAPE_READY: the files that say the loop is starting
# (default BASE.ready)
shape_exec() {
  local mode=$1 base=$2 name=$3; shift 3
  local pre=() r pid
  [ ${#SHAPE_READY[@]} -gt 0 ] || SHAPE_READY=("$base.ready")
  rm -f "$base.json" "$base.gpuio" "$base.info.json" "${SHAPE_READY[@]}"
  # in a throttled scenario, into the blkio group before the exec
  [ -z "$TORCH_CG" ] || pre=(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$TORCH_CG")
  case $mode in
    plain)
      "${pre[@]}" "$@" >"$base.log" 2>&1 || { tail -n 30 "$base.log"; fail "$name: $* failed"; } ;;
    launch)
      "${pre[@]}" "$GPUIO" trace -q --no-export --capture "$base.gpuio" "${SHAPE_TRACE_OPTS[@]}" -- "$@" \
        >"$base.log" 2>&1 || { tail -n 30 "$base.log"; fail "$name: gpuio trace -- $* failed"; } ;;
    attach)
      spawn -l "$base.log" "$name" "${pre[@]}" "$@"
      pid=$SPAWNED
      if [ "$SHAPE_ATTACH_AT" = ready ]; then
        for r in "${SHAPE_READY[@]}"; do
          wait_file -t "$SHAPE_MAX_SECS" -f "$base.log" -m "$name: the loop never started ($r)" "$r"
        done
      else
        sleep "$SHAPE_ATTACH_AT"
      fi
      proc_alive "$pid" || { tail -n 30 "$base.log"; fail "$name ended before gpuio attached"; }
      "$GPUIO" trace -q -p "$pid" -d "$SHAPE_ATTACH_FOR" --no-export --capture "$base.gpuio" \
        "${SHAPE_TRACE_OPTS[@]}" >"$base.trace.log" 2>&1 ||
        { cat "$base.trace.log"; fail "$name: gpuio trace -p $pid failed"; }
      wait_exit -t "$SHAPE_MAX_SECS" -f "$base.log" "$pid"
      [ "$EXIT_STATUS" -eq 0 ] || { tail -n 30 "$base.log"; fail "$name: $* exited $EXIT_STATUS"; } ;;
    *) fail "shape_exec: mode $mode" ;;
  esac
  if [ "$mode" != plain ]; then
    "$GPUIO" info --json "$base.gpuio" >"$base.info.json" || fail "$name: gpuio info failed"
  fi
  SHAPE_READY=()
}
# shape_scenario BASE KEY=VALUE...: "scenario" into BASE.json (mode, info)
shape_scenario() {
  local base=$1; shift
  pycheck shapes_truth.add_scenario "$base.json" "$@" info=@"$base.info.json"
}

# ---- the shapes
# shape_torchrun: SHAPE_LAUNCHER = torchrun when torch.distributed.run starts
# ranks here, else own (torch_shapes.py launch). torch 1.13 on Python >= 3.11
# fails with its default --redirects 0 (IntFlag iteration skips 0: Std
# from_str gives None), so the ranks' stderr is redirected to files and teed
# (--redirects 2 --tee 2); --monitor_interval 0.2: the agent checks its ranks
# every 5 s by default, a 5 s tail after they end.
SHAPE_LAUNCHER=""
SHAPE_TORCHRUN=("$TORCH_PY" -m torch.distributed.run --standalone --redirects 2 --tee 2 --monitor_interval 0.2)
shape_torchrun() {
  [ -n "$SHAPE_LAUNCHER" ] && return 0
  SHAPE_LAUNCHER=own
  if "${SHAPE_TORCHRUN[@]}" --nproc_per_node 1 --log_dir "$TMP/probe.tlog" --no_python true \
      >"$TMP/probe.log" 2>&1; then
    SHAPE_LAUNCHER=torchrun
  else
    echo "shapes: torch.distributed.run does not start ranks here ($(tail -n 1 "$TMP/probe.log")):" \
      "torch_shapes.py launch instead"
  fi
}

shape_ranks() {
  local mode=$1 base=$2 n=$3 cpu=$4 sleep=${5:-0} r
  local data="$TMP/ranks" files=$SHAPE_RANK_FILES size=$SHAPE_RANK_FILE_SIZE
  for ((r = 0; r < n; r++)); do torch_warm_data "$data/rank-$r" "$files" "$size"; done
  shape_torchrun
  rm -f "$base".rank-*.json
  local args=(rank --data "$data" --files "$files" --workers 2 --batch "$SHAPE_BATCH" --cpu-us "$cpu"
              --sleep-us "$sleep"
              --step-cpu-us "$SHAPE_RANK_STEP_CPU_US" --seconds "$SHAPE_RANK_SECONDS"
              --ready "$base.ready-{rank}" --out "$base.rank-{rank}.json")
  local cmd
  if [ "$SHAPE_LAUNCHER" = torchrun ]; then
    rm -rf "$base.tlog"
    cmd=("${SHAPE_TORCHRUN[@]}" --nproc_per_node "$n" --log_dir "$base.tlog" "$SHAPES_PROG" "${args[@]}")
  else
    cmd=("$TORCH_PY" "$SHAPES_PROG" launch --nproc "$n" -- "${args[@]}")
  fi
  SHAPE_READY=()
  for ((r = 0; r < n; r++)); do SHAPE_READY+=("$base.ready-$r"); done
  shape_exec "$mode" "$base" "ranks$n" "${cmd[@]}"
  local outs=()
  for ((r = 0; r < n; r++)); do
    [ -s "$base.rank-$r.json" ] || { tail -n 30 "$base.log"; fail "ranks$n: rank $r wrote no JSON"; }
    outs+=("$base.rank-$r.json")
  done
  pycheck shapes_truth.merge_ranks "$base.json" "${outs[@]}"
  shape_scenario "$base" name=ranks mode="$mode" ranks="$n" launcher="$SHAPE_LAUNCHER" cpu_us="$cpu" sleep_us="$sleep" \
    file_size="$size" cmd="${cmd[*]}"
}

# shape_cold_run NAME MODE BASE DIRNAME N SIZE BPS ARGS...: a throttled cold run
# of torch_shapes.py NAME over N files of SIZE in $TORCH_MNT/DIRNAME
shape_cold_run() {
  local name=$1 mode=$2 base=$3 dir=$4 n=$5 size=$6 bps=$7; shift 7
  shape_cold_fs
  local data="$TORCH_MNT/$dir"
  shape_cold_data "$data" "$n" "$size"
  shape_make_cold "$bps" "$data"/sample-*.bin
  local args=("$name" --data "$data" --files "$n" --batch "$SHAPE_BATCH" --step-cpu-us "$SHAPE_STEP_CPU_US"
              "$@" --ready "$base.ready" --out "$base.json")
  shape_exec "$mode" "$base" "$name" "$TORCH_PY" "$SHAPES_PROG" "${args[@]}"
  # shellcheck disable=SC2046
  shape_scenario "$base" name="$name" mode="$mode" $(shape_cold_facts) file_size="$size" cmd="${args[*]}"
}

shape_threads() {
  shape_cold_run threads "$1" "$2" io "$SHAPE_IO_FILES" "$SHAPE_IO_FILE_SIZE" "$SHAPE_IO_BPS" \
    --readers 2 --queue 2
}

shape_noworkers() {
  shape_cold_run noworkers "$1" "$2" io "$SHAPE_IO_FILES" "$SHAPE_IO_FILE_SIZE" "$SHAPE_IO_BPS" --workers 0
}

shape_memmap() {
  shape_cold_run memmap "$1" "$2" mmap "$SHAPE_MMAP_FILES" "$SHAPE_MMAP_FILE_SIZE" "$SHAPE_MMAP_BPS" \
    --workers 2 --sample-size "$SHAPE_MMAP_SAMPLE"
}

shape_remote() {
  local mode=$1 base=$2 n=$SHAPE_REMOTE_OBJECTS size=$SHAPE_REMOTE_SIZE lat=$SHAPE_REMOTE_LATENCY_MS
  [ -f "$SHAPES_STORE" ] || fail "$SHAPES_STORE is missing (the object store)"
  rm -f "$base.port" "$base.server.json"
  spawn -l "$base.store.log" object_store "$TORCH_PY" "$SHAPES_STORE" --objects "$n" --size "$size" \
    --latency-ms "$lat" --port-file "$base.port" --log "$base.server.json"
  local store=$SPAWNED
  wait_nonempty -f "$base.store.log" "$base.port"
  local args=(remote --port-file "$base.port" --objects "$n" --workers 2 --batch "$SHAPE_BATCH"
              --step-cpu-us "$SHAPE_STEP_CPU_US" --ready "$base.ready" --out "$base.json")
  SHAPE_TRACE_OPTS=(--all-fds)
  shape_exec "$mode" "$base" remote "$TORCH_PY" "$SHAPES_PROG" "${args[@]}"
  SHAPE_TRACE_OPTS=()
  proc_stop "$store"
  [ -s "$base.server.json" ] || { cat "$base.store.log"; fail "the object store wrote no log"; }
  shape_scenario "$base" name=remote mode="$mode" size="$size" latency_ms="$lat" port="$(cat "$base.port")" \
    server=@"$base.server.json" cmd="${args[*]}"
}

shape_loader() {
  local mode=$1 base=$2 secs=$3; shift 3
  local data="$TMP/loader" n=$SHAPE_CPU_FILES size=$SHAPE_CPU_FILE_SIZE
  torch_warm_data "$data" "$n" "$size"
  local args=(loader --data "$data" --files "$n" --workers 2 --batch "$SHAPE_BATCH" --cpu-us "$SHAPE_CPU_US"
              --step-cpu-us "$SHAPE_CPU_STEP_CPU_US" --seconds "$secs" "$@" --ready "$base.ready"
              --out "$base.json")
  shape_exec "$mode" "$base" loader "$TORCH_PY" "$SHAPES_PROG" "${args[@]}"
  local name=loader
  [ "${1:-}" != --pin-memory ] || name=pin_memory
  shape_scenario "$base" name="$name" mode="$mode" file_size="$size" \
    resident_bytes="$(torch_resident "$data"/sample-*.bin)" cmd="${args[*]}"
}

# ---- the checks
shape_own() {
  pycheck shapes_truth.own "$1" "$2.json" || fail "$1 ($2): the program's own numbers disagree with the scenario"
}

shape_exports() {
  local base=$1 ext
  for ext in json pftrace; do
    "$GPUIO" convert "$base.gpuio" -o "$base.trace.$ext" 2>"$base.convert-$ext.log" ||
      { cat "$base.convert-$ext.log"; fail "gpuio convert $base.gpuio -o .$ext failed"; }
    check_struct "$base.trace.$ext"
    pycheck shapes_truth.export_counts "$base.convert-$ext.log" "$base.trace.$ext" ||
      fail "$base.trace.$ext: not the counts gpuio convert said it wrote"
  done
}

shape_report() {
  "$GPUIO" report --json "$2.gpuio" >"$2.report.json" 2>"$2.report.err" ||
    { cat "$2.report.err"; fail "$1: gpuio report --json $2.gpuio failed"; }
  pycheck shapes_truth.report "$1" "$2.json" "$2.report.json" "$2.info.json" || return 1
  # the exports (shape_exports) draw the report's steps and GPU gaps
  [ ! -f "$2.trace.json" ] ||
    pycheck findings_truth.report "$2.report.json" "$2.trace.json" "$2.trace.pftrace"
}
