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
  python3 - "$1" "$2" "$3" "$UPID" "$TMP" "$GPID" <<'EOF'
import os, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth
trace, mode, tpid, upid, tmp, gpid = sys.argv[1:]
tpid, upid, gpid = int(tpid), int(upid), int(gpid)
ev = truth.load(trace)
A, B = os.path.realpath(tmp + "/a/fileA"), os.path.realpath(tmp + "/b/fileB")
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + f"{mode}: {msg}")
    bad += not cond
a = truth.vfs(ev, path=A, names={"pread64"})
b = truth.vfs(ev, path=B, names={"pread64"})
check(len(a) >= 100 and {e["pid"] for e in a} == {tpid}, f"{len(a)} reads of A, on pids {sorted({e['pid'] for e in a})} (target {tpid})")
pids = {e.get("pid") for e in ev if e.get("ph") in ("X", "M", "i", "B", "E")}
blockpids = {e["args"].get("pid") for e in truth.block(ev)}
if mode == "all":
    check(len(b) >= 100 and {e["pid"] for e in b} == {upid},
          f"{len(b)} reads of B, on pids {sorted({e['pid'] for e in b})} (unrelated {upid})")
    mine = [e for e in ev if e.get("args", {}).get("path", "").startswith(os.path.realpath(tmp + "/out"))
            or e.get("args", {}).get("path2", "").startswith(os.path.realpath(tmp + "/out"))]
    check(not mine, f"gpuio's own capture/output files appear in {len(mine)} events "
          f"{[(e['name'], e.get('pid')) for e in mine[:3]]}")
    check(gpid not in pids and gpid not in blockpids, f"gpuio's pid {gpid} appears nowhere")
else:
    check(not b, f"no reads of B ({len(b)})")
    strays = [e for e in ev if B in (e.get("args", {}).get("path"), e.get("args", {}).get("path2"))]
    check(not strays, f"B appears in no event ({len(strays)})")
    check(upid not in pids and upid not in blockpids, f"the unrelated pid {upid} appears nowhere")
sys.exit(1 if bad else 0)
EOF
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
