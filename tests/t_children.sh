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
  python3 - "$1" "$2" "$D" <<'EOF'
import os, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth
trace, outf, d = sys.argv[1:]
ev = truth.load(trace)
pn, tn = truth.process_names(ev), truth.thread_names(ev)
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond

lines = [l.split() for l in open(outf) if l.strip()]
kinds = sorted(l[0] for l in lines)
check(kinds == ["exec"] + ["thread"] * 3 + ["worker"] * 3, f"fork_workers reported {kinds}")
for kind, pid, tid, path, nbytes, name in lines:
    pid, tid = int(pid), int(tid)
    reads = truth.vfs(ev, path=path, names=truth.READ_CALLS)
    got = sum(e["args"].get("bytes", 0) for e in reads)
    size = os.path.getsize(path)
    if kind == "exec":
        pids = {e["pid"] for e in reads}
        catpid = pids.pop() if len(pids) == 1 else None
        check(catpid is not None and got == size,
              f"cat: {got} bytes of {path} (size {size}) read by one process {sorted(pids | {catpid})}")
        check(catpid is not None and "cat" in pn.get(catpid, ""),
              f"cat: process_name of pid {catpid} is {pn.get(catpid)!r}")
        check(pid in pn and pn[pid].startswith("sh"), f"sh (pid {pid}): process_name {pn.get(pid)!r}")
        continue
    check(got == int(nbytes) == size, f"{kind} {pid}/{tid}: {got} bytes of {os.path.basename(path)} "
          f"in the trace, it read {nbytes}, size {size}")
    where = {(e["pid"], e["tid"]) for e in reads}
    check(where == {(pid, tid)}, f"{kind} {pid}/{tid}: reads attributed to {sorted(where)}")
    check(tn.get((pid, tid)) == name, f"{kind} {pid}/{tid}: thread_name {tn.get((pid, tid))!r} == {name!r}")
    check(pid in pn, f"{kind} {pid}: process_name {pn.get(pid)!r}")
sys.exit(1 if bad else 0)
EOF
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
