#!/usr/bin/env bash
# t_children: forked workers, threads and exec'd children are all traced,
# with exact bytes, on the right pid/tid, with their names.
#
# build/tests/fork_workers (a DataLoader-like tree) starts 3 threads that
# pread their own file, forks 3 workers that read() their own file, and
# runs `sh -c 'cat FILE >/dev/null'`. Every reader prints its pid, tid,
# file and the bytes its calls returned; file sizes are all different.
# Checks, in launch mode and in attach mode (-p of a shell that execs
# fork_workers a moment after the attach, so every child is forked while
# traced):
#   - each reader's reads of its file sum to the bytes it printed (== the
#     file's size), and all are on its pid and tid;
#   - thread_name of each thread/worker is the name it gave itself;
#   - process_name metadata exists for every worker, the sh and the cat;
#     the cat's reads of its file (whole file) are on a pid named "cat".
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/fork_workers"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

D="$TMP/data"
mkdir -p "$D"
for i in 0 1 2; do
  head -c $(( (i + 1) * 300000 + 123 )) /dev/urandom >"$D/w$i"
  head -c $(( (i + 1) * 200000 + 77 )) /dev/urandom >"$D/t$i"
done
head -c 555555 /dev/urandom >"$D/x"

verify() { # TRACE OUT MODE
  pycheck procs.children "$1" "$2" "$D"
}

# launch mode
"$GPUIO" trace -q -o "$TMP/launch.json" -- "$PROG" "$D" 3 3 >"$TMP/launch.out" 2>"$TMP/launch.err" \
  || { cat "$TMP/launch.err"; fail "launch: gpuio trace -- fork_workers exited non-zero"; }
check_struct "$TMP/launch.json"
verify "$TMP/launch.json" "$TMP/launch.out" || fail "launch mode: children not traced exactly"

# attach mode: the children are forked after the attach
spawn shell sh -c 'while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1" "$2" 3 3 >"$3"' \
  "$TMP/go" "$PROG" "$D" "$TMP/attach.out"
SPID=$SPAWNED
spawn -e "$TMP/attach.err" gpuio "$GPUIO" trace -p "$SPID" -o "$TMP/attach.json"
GPID=$SPAWNED
poll grep -q tracing "$TMP/attach.err" || true
touch "$TMP/go"
wait "$SPID" || fail "attach: fork_workers failed"
sleep 0.2
# stop as a user would, if it has not ended by itself (that is t_attach's business)
kill -INT "$GPID" 2>/dev/null || true
wait "$GPID" || { cat "$TMP/attach.err"; fail "attach: gpuio trace -p exited non-zero"; }
check_struct "$TMP/attach.json"
verify "$TMP/attach.json" "$TMP/attach.out" || fail "attach mode: children not traced exactly"
echo "PASS: every worker, thread and exec'd child traced with exact bytes, pids, tids and names"
