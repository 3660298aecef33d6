# tests/lib/proc.sh — sourced by tests/lib.sh: the process registry, the one
# EXIT trap, and the wait helpers every test uses instead of its own.
#
# Registry. A test starts what it needs in the background with spawn (or
# starts it itself and registers the pid with proc_reg); when the test ends,
# for whatever reason (pass, fail, skip, set -e, a signal), the EXIT trap
# installed here stops every registered process that is still the one that
# was registered (same pid and start time: a reused pid is never touched),
# with its signal (TERM unless said), waits for it ($PROC_STOP_SECS, 10 s,
# then SIGKILL), then runs the commands given to on_exit (last given first),
# then removes $TMP, and exits with the test's status.
#
#   spawn [-l LOG] [-o OUT] [-e ERR] [-i IN] [-C DIR] [-s SIG] NAME CMD [ARG...]
#       CMD in the background (in DIR; stdin from IN; stdout to OUT, stderr
#       to ERR, both to LOG; else where the call's own redirections point),
#       registered as NAME; its pid in $SPAWNED. CMD is exec'd (a program,
#       not a shell function). The redirections are done in the child, so IN
#       may be a FIFO whose writer is opened later.
#   proc_reg [-s SIG] PID [NAME] [LOG]   register a process started otherwise
#   proc_unreg PID                        forget it (the test ended it itself)
#   proc_stop PID                         its signal now, wait for it, forget it
#   proc_alive PID                        it exists and is not a zombie
#   on_exit CMD                           eval CMD at exit, after the processes
#
# Waits. Each tries its condition every STEP s (-i, default 0.05) at most
# SECS/STEP times (-t SECS, default 10), like the loops they replace. On a
# timeout they fail with a message that says what was awaited (or -m MSG) and
# show the file awaited (or -f FILE); `poll` returns 1 instead, for waits
# whose outcome the test checks itself.
#   poll [-t SECS] [-i STEP] CMD [ARG...]         0 once CMD succeeds, else 1
#   wait_for [-t] [-i] [-m MSG] [-f FILE] WHAT CMD [ARG...]
#                                                  fail "timed out ... WHAT"
#   (every wait takes -f FILE: the file to show on a timeout)
#   wait_file [-t] [-i] [-m MSG] FILE              FILE exists
#   wait_nonempty [-t] [-i] [-m MSG] FILE          FILE exists, not empty
#   wait_line [-t] [-i] [-m MSG] [-F|-E|-x]... PATTERN FILE
#                                                  a line of FILE matches (grep)
#   wait_lines [-t] [-i] [-m MSG] FILE N           FILE has >= N lines
#   wait_pid [-t] [-i] [-m MSG] PID                PID exists (and is no zombie)
#   wait_exit [-t] [-i] [-m MSG] PID               PID has exited; its status in
#                                                  $EXIT_STATUS (`wait`'s: 127 for
#                                                  a pid that is not this shell's
#                                                  child); forgets it

PROC_STOP_SECS=${PROC_STOP_SECS:-10}
_PROC_PIDS=()
declare -A _PROC_NAME=() _PROC_LOG=() _PROC_SIG=() _PROC_START=()
_ON_EXIT=()

# _proc_stat PID: the fields of /proc/PID/stat after "pid (comm) " in _STAT
# (field 3, the state, is ${_STAT[0]}); 1 when there is no such process
_proc_stat() {
  local s
  { read -r s < "/proc/$1/stat"; } 2>/dev/null || return 1
  s=${s##*) }
  read -r -a _STAT <<< "$s"
}
proc_alive() { _proc_stat "$1" && [ "${_STAT[0]}" != Z ]; }
# the process registered as PID is still that process (start time, field 22)
_proc_same() { _proc_stat "$1" && [ "${_STAT[19]}" = "${_PROC_START[$1]:-}" ]; }

proc_reg() {
  local sig=TERM
  [ "${1:-}" = -s ] && { sig=$2; shift 2; }
  local pid=$1
  _PROC_PIDS+=("$pid")
  _PROC_NAME[$pid]=${2:-pid $pid}
  _PROC_LOG[$pid]=${3:-}
  _PROC_SIG[$pid]=$sig
  if _proc_stat "$pid"; then _PROC_START[$pid]=${_STAT[19]}; else _PROC_START[$pid]=gone; fi
  return 0
}
proc_unreg() {
  local p keep=()
  for p in "${_PROC_PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  _PROC_PIDS=("${keep[@]}")
  unset "_PROC_NAME[$1]" "_PROC_LOG[$1]" "_PROC_SIG[$1]" "_PROC_START[$1]"
  return 0
}

spawn() {
  local log="" out="" err="" in="" dir="" sig=TERM
  while [ $# -gt 0 ]; do
    case $1 in
      -l) log=$2; shift 2 ;;
      -o) out=$2; shift 2 ;;
      -e) err=$2; shift 2 ;;
      -i) in=$2; shift 2 ;;
      -C) dir=$2; shift 2 ;;
      -s) sig=$2; shift 2 ;;
      *) break ;;
    esac
  done
  local name=$1; shift
  {
    [ -z "$dir" ] || cd "$dir" || exit 1
    [ -z "$in" ] || exec < "$in"
    [ -z "$log" ] || exec > "$log" 2>&1
    [ -z "$out" ] || exec > "$out"
    [ -z "$err" ] || exec 2> "$err"
    exec "$@"
  } &
  SPAWNED=$!
  proc_reg -s "$sig" "$SPAWNED" "$name" "${log:-${err:-$out}}"
}

# _proc_end PID...: send each its signal, wait ($PROC_STOP_SECS) for all, SIGKILL the rest, reap
_proc_end() {
  local p q live=() n steps
  steps=$(awk -v s="$PROC_STOP_SECS" 'BEGIN { print int(s / 0.05 + 0.5) }')
  for p in "$@"; do
    _proc_same "$p" && [ "${_STAT[0]}" != Z ] || continue
    kill -s "${_PROC_SIG[$p]:-TERM}" "$p" 2>/dev/null || true
    kill -s CONT "$p" 2>/dev/null || true    # a stopped process acts on it now
    live+=("$p")
  done
  for ((n = 0; n < steps; n++)); do
    q=""
    for p in "${live[@]}"; do
      if _proc_same "$p" && [ "${_STAT[0]}" != Z ]; then q=$p; break; fi
    done
    [ -n "$q" ] || break
    sleep 0.05
  done
  for p in "${live[@]}"; do
    if _proc_same "$p" && [ "${_STAT[0]}" != Z ]; then
      echo "lib: ${_PROC_NAME[$p]:-pid $p} ($p) did not end on SIG${_PROC_SIG[$p]:-TERM}: SIGKILL" >&2
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
  for p in "$@"; do wait "$p" 2>/dev/null || true; done
  return 0
}
proc_stop() { _proc_end "$1"; proc_unreg "$1"; }

on_exit() { _ON_EXIT+=("$1"); }

_lib_exit() {
  local rc=$? i
  set +e
  local rev=()
  for ((i = ${#_PROC_PIDS[@]} - 1; i >= 0; i--)); do rev+=("${_PROC_PIDS[i]}"); done
  [ ${#rev[@]} -eq 0 ] || _proc_end "${rev[@]}"
  for ((i = ${#_ON_EXIT[@]} - 1; i >= 0; i--)); do eval "${_ON_EXIT[i]}"; done
  # GPUIO_KEEP_TMP=1 keeps it for a look (its path on stderr)
  if [ -n "${GPUIO_KEEP_TMP:-}" ]; then echo "kept $TMP" >&2; else rm -rf "$TMP"; fi
  exit "$rc"
}
trap _lib_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- waits
# _wait_opts ARGS...: -t SECS, -i STEP, -m MSG, -f FILE into _W_SECS, _W_STEP,
# _W_MSG, _W_FILE; _W_SHIFT: how many words they took
_wait_opts() {
  _W_SECS=10 _W_STEP=0.05 _W_MSG="" _W_FILE="" _W_SHIFT=0
  while [ $# -gt 0 ]; do
    case $1 in
      -t) _W_SECS=$2 ;;
      -i) _W_STEP=$2 ;;
      -m) _W_MSG=$2 ;;
      -f) _W_FILE=$2 ;;
      *) return 0 ;;
    esac
    shift 2; _W_SHIFT=$((_W_SHIFT + 2))
  done
}
# _poll SECS STEP CMD...: CMD until it succeeds, at most SECS/STEP tries STEP s apart
_poll() {
  local secs=$1 step=$2 n; shift 2
  n=$(awk -v s="$secs" -v i="$step" 'BEGIN { n = int(s / i + 0.5); print (n < 1 ? 1 : n) }')
  while [ "$n" -gt 0 ]; do
    "$@" && return 0
    sleep "$step"
    n=$((n - 1))
  done
  return 1
}
# _wait_fail WHAT [FILE]: the timeout's message, with the last lines of FILE
# (or of the -f FILE)
_wait_fail() {
  local f=${_W_FILE:-${2:-}}
  if [ -n "$f" ]; then
    if [ -e "$f" ]; then
      echo "--- last lines of $f:" >&2; tail -n 30 "$f" >&2
    else
      echo "--- $f does not exist" >&2
    fi
  fi
  fail "${_W_MSG:-timed out after ${_W_SECS} s waiting for $1}"
}
poll() {
  _wait_opts "$@"; shift "$_W_SHIFT"
  _poll "$_W_SECS" "$_W_STEP" "$@"
}
wait_for() {
  _wait_opts "$@"; shift "$_W_SHIFT"
  local what=$1; shift
  _poll "$_W_SECS" "$_W_STEP" "$@" || _wait_fail "$what"
}
_is_file() { [ -e "$1" ]; }
_nonempty() { [ -s "$1" ]; }
wait_file() {
  _wait_opts "$@"; shift "$_W_SHIFT"
  _poll "$_W_SECS" "$_W_STEP" _is_file "$1" || _wait_fail "$1 to exist"
}
wait_nonempty() {
  _wait_opts "$@"; shift "$_W_SHIFT"
  _poll "$_W_SECS" "$_W_STEP" _nonempty "$1" || _wait_fail "$1 to have content" "$1"
}
_grep_q() { grep -q "$@" 2>/dev/null; }
wait_line() {
  _wait_opts "$@"; shift "$_W_SHIFT"
  local gopts=()
  while [ $# -gt 2 ]; do gopts+=("$1"); shift; done
  _poll "$_W_SECS" "$_W_STEP" _grep_q "${gopts[@]}" -- "$1" "$2" ||
    _wait_fail "a line '$1' in $2" "$2"
}
_has_lines() { [ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ]; }
wait_lines() {
  _wait_opts "$@"; shift "$_W_SHIFT"
  _poll "$_W_SECS" "$_W_STEP" _has_lines "$1" "$2" || {
    [ -n "$_W_MSG" ] || _W_MSG="$1 never reached $2 lines"
    _wait_fail "" "$1"
  }
}
wait_pid() {
  _wait_opts "$@"; shift "$_W_SHIFT"
  _poll "$_W_SECS" "$_W_STEP" proc_alive "$1" || _wait_fail "pid $1 to exist"
}
_gone() { ! proc_alive "$1"; }
wait_exit() {
  _wait_opts "$@"; shift "$_W_SHIFT"
  _poll "$_W_SECS" "$_W_STEP" _gone "$1" ||
    _wait_fail "${_PROC_NAME[$1]:-pid $1} ($1) to exit" "${_PROC_LOG[$1]:-}"
  EXIT_STATUS=0
  wait "$1" 2>/dev/null || EXIT_STATUS=$?
  proc_unreg "$1"
}

# stall_tracer_during PROCNAME TRACE ERRLOG: once a process named PROCNAME
# runs (fio's jobs), stop gpuio TRACE (spawned) 0.3 s later for 2 s, so its
# ring fills and the kernel loses or sheds records; then let it go and wait
# for it to end (failing with ERRLOG if it fails). t_lost_ledger, t_shed.
_stall_up() { pgrep -x "$1" > /dev/null; }
stall_tracer_during() {
  local name=$1 trace=$2 errlog=$3
  wait_for -t 20 -i 0.1 "$name running" _stall_up "$name"
  sleep 0.3
  kill -STOP "$trace"
  sleep 2
  kill -CONT "$trace"
  wait "$trace" || { cat "$errlog"; fail "gpuio trace (stopped 2 s) failed"; }
  proc_unreg "$trace"
}
