#!/usr/bin/env bash
# t_unrelated: only the target's I/O is traced — and with -a, everyone's
# except gpuio's own.
#
# Two build/tests/attach_reader processes run at once, reading different
# files: the target (file A) and an unrelated one (file B, started by the
# test, not a child of the target). Checks:
#   - -p TARGET: reads of A by the target are there; B and the unrelated
#     pid appear nowhere;
#   - launch mode (-- attach_reader A ...): same;
#   - -a: reads of both A and B are there, each on its own pid; gpuio's own
#     capture and output files and gpuio's pid appear nowhere.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/attach_reader"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

mkdir -p "$TMP/a" "$TMP/b" "$TMP/out"
head -c $((1 << 20)) /dev/urandom >"$TMP/a/fileA"
head -c $((1 << 20)) /dev/urandom >"$TMP/b/fileB"

spawn unrelated "$PROG" "$TMP/b/fileB" "$TMP/b/log" 2000 0
UPID=$SPAWNED
spawn target "$PROG" "$TMP/a/fileA" "$TMP/a/log" 2000 0
TPID=$SPAWNED
wait_lines "$TMP/a/log" 10
wait_lines "$TMP/b/log" 10

verify() { # TRACE MODE TARGET_PID
  pycheck procs.unrelated "$1" "$2" "$3" "$UPID" "$TMP" "$GPID"
}

# -p TARGET
GPID=0
spawn -e "$TMP/p.err" gpuio "$GPUIO" trace -q -p "$TPID" -d 1s -o "$TMP/out/p.json"
GPID=$SPAWNED
wait "$GPID" || { cat "$TMP/p.err"; fail "-p: gpuio trace exited non-zero"; }
check_struct "$TMP/out/p.json"
verify "$TMP/out/p.json" pid "$TPID" || fail "-p traced an unrelated process"

# launch mode: the launched reader is the target
spawn -e "$TMP/l.err" gpuio "$GPUIO" trace -q -o "$TMP/out/l.json" -- "$PROG" "$TMP/a/fileA" "$TMP/a/log2" 2000 300
GPID=$SPAWNED
LPID=""
launched() { LPID=$(pgrep -P "$GPID" -f attach_reader || true); [ -n "$LPID" ]; }
poll -t 5 launched || true
wait "$GPID" || { cat "$TMP/l.err"; fail "launch: gpuio trace exited non-zero"; }
[ -n "$LPID" ] || fail "launch: never saw the launched reader"
check_struct "$TMP/out/l.json"
verify "$TMP/out/l.json" launch "$LPID" || fail "launch mode traced an unrelated process"

# -a: everybody but gpuio
spawn -e "$TMP/a.err" gpuio "$GPUIO" trace -q -a -d 1s -o "$TMP/out/a.json"
GPID=$SPAWNED
wait "$GPID" || { cat "$TMP/a.err"; fail "-a: gpuio trace exited non-zero"; }
check_struct "$TMP/out/a.json"
verify "$TMP/out/a.json" all "$TPID" || fail "-a missed a process, or traced gpuio itself"
echo "PASS: -p and launch trace only the target; -a traces everyone but gpuio"
