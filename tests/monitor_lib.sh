# tests/monitor_lib.sh — sourced by tests/t_monitor_*.sh (after lib.sh):
# start/stop a `gpuio monitor` daemon, scrape it with curl, and a strict
# Prometheus text-format parser (prom_parse FILE > FILE.json). The daemon is
# a registered process (tests/lib/proc.sh: SIGTERM at exit); the cgroups
# mk_cgroup made are removed at exit, after every process; a test's own
# teardown goes to on_exit.
command -v curl >/dev/null || skip "curl not installed (scripts/install-deps.sh test)"
MON_PID=""
MON_RUN="$TMP/run"
MON_PORT=${MON_PORT:-$((19500 + RANDOM % 400))}
CGV2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CGROUPS=()

on_exit 'for cg in "${CGROUPS[@]}"; do rmdir "$cg" 2>/dev/null || true; done'

# mon_start ARGS...: the daemon in the background, ready when /metrics answers
mon_start() {
  spawn -l "$TMP/monitor.log" monitor \
    "$GPUIO" monitor --run-dir "$MON_RUN" --dump-dir "$TMP/dumps" "$@"
  MON_PID=$SPAWNED
  wait_for -t 20 -i 0.1 -f "$TMP/monitor.log" -m "the monitor never answered on port $MON_PORT" \
    "/metrics on port $MON_PORT" _mon_up
}
_mon_up() {
  curl -sf "http://127.0.0.1:$MON_PORT/metrics" -o /dev/null 2>/dev/null && return 0
  proc_alive "$MON_PID" || { cat "$TMP/monitor.log"; fail "the monitor exited at start"; }
  return 1
}
mon_stop() {
  local rc=0
  kill -TERM "$MON_PID"; wait "$MON_PID" || rc=$?
  proc_unreg "$MON_PID"
  MON_PID=""
  [ "$rc" = 0 ] || fail "the monitor exited non-zero on SIGTERM"
}
# scrape FILE: GET /metrics with a real HTTP client, then the strict parse (FILE.json)
scrape() {
  curl -sf --max-time 20 "http://127.0.0.1:$MON_PORT/metrics" -o "$1" || fail "curl /metrics failed"
  prom_parse "$1" > "$1.json" || fail "/metrics is not valid Prometheus text format (see above)"
  if command -v promtool >/dev/null; then
    promtool check metrics < "$1" > "$TMP/promtool.out" 2>&1 || true
    grep -qiE 'error' "$TMP/promtool.out" && { cat "$TMP/promtool.out"; fail "promtool rejects /metrics"; }
  fi
  return 0
}
# mk_cgroup NAME: a child of the cgroup v2 root; prints its path
mk_cgroup() {
  [ -n "$CGV2" ] || skip "no cgroup v2 mount"
  local p="$CGV2/$1"
  mkdir -p "$p" || skip "cannot create a cgroup under $CGV2"
  CGROUPS+=("$p")
  echo "$p"
}

# prom_parse FILE: the strict text-format 0.0.4 parse (checks/monitor.py
# parse_prom: HELP/TYPE comments and samples only, well-formed names and
# labels, one contiguous group per family, counters _total and >= 0, sane
# histograms). Prints {"name{sorted labels}": value, ...} as JSON.
prom_parse() {
  pycheck monitor.prom_parse "$1"
}

# start_in_cgroup CG CMD...: run CMD (in the background, its pid in $CGPID,
# registered) inside cgroup CG, moved there by this shell while CMD is held
# stopped: the process being measured does no I/O of its own to join the
# cgroup (a `echo $$ > cgroup.procs` from inside would count its pid's bytes
# as its own).
start_in_cgroup() {
  local cg=$1; shift
  spawn "$1 in $cg" sh -c 'kill -STOP $$; exec "$@"' sh "$@"
  CGPID=$SPAWNED
  # it must have stopped itself: a CONT sent before its STOP would leave it
  # stopped for good, and its caller waiting on it with no end
  poll -t 60 -i 0.01 _stopped "$CGPID" || fail "$1 (pid $CGPID) never stopped itself to join $cg"
  echo "$CGPID" > "$cg/cgroup.procs" || fail "cannot move $CGPID into $cg"
  kill -CONT "$CGPID"
}
_stopped() { [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" = T ]; }

# mount_loop_ext4 SIZE: a fresh ext4 of SIZE (truncate's units) on a loop
# device, mounted at $TMP/mnt; LOOP and DEV (loopN, the kernel's name the
# monitor labels it with) set; undone at exit
mount_loop_ext4() {
  command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
  truncate -s "$1" "$TMP/fs.img"
  mkfs.ext4 -q -F "$TMP/fs.img"
  mkdir -p "$TMP/mnt"
  LOOP=$(losetup -f --show "$TMP/fs.img") || skip "no loop device"
  on_exit 'umount "$TMP/mnt" 2>/dev/null; losetup -d "$LOOP" 2>/dev/null'
  mount -o noatime "$LOOP" "$TMP/mnt"
  DEV=$(basename "$LOOP")
}
