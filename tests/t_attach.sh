#!/usr/bin/env bash
# t_attach: attach to processes already in the middle of their I/O.
#
# build/tests/attach_reader opens its file (relative to its own cwd) and a
# log, then preads 512 bytes at offset seq*512 every millisecond, logging
# "seq t_before t_after offset bytes" after each read. Ground truth is that
# log. Checks:
#   A. attach -p PID -d 2s mid-run: the trace's reads of the file are a
#      contiguous run of the logged sequence, none from before gpuio started,
#      all reads logged in the first 1.5 s after "tracing" was printed
#      present, each inside its logged [t_before, t_after]; the file (and
#      the log) were opened before the attach and are named by absolute path;
#   B. the target exits during the trace: gpuio ends by itself ("all traced
#      processes exited"), exit 0, valid JSON, capture_complete, and the
#      trace has the reads up to the last one the target did;
#   C. attach to a shell whose child (started before the attach) does the
#      reads: the child is traced too.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/attach_reader"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"

mkdir -p "$TMP/data" "$TMP/cwd"
head -c $((8 << 20)) /dev/urandom >"$TMP/data/input.bin"

# ---- A: attach mid-run -------------------------------------------------
spawn -C "$TMP/cwd" reader "$PROG" ../data/input.bin "$TMP/a.log" 1000 0
RPID=$SPAWNED
wait_lines "$TMP/a.log" 100
N_BEFORE=$(wc -l <"$TMP/a.log")
spawn -e "$TMP/a.err" gpuio "$GPUIO" trace -p "$RPID" -d 2s -o "$TMP/a.json"
GPID=$SPAWNED
# CLOCK_MONOTONIC when gpuio said it is tracing (python: time.monotonic_ns)
T_TRACING=$(python3 - "$TMP/a.err" <<'EOF'
import sys, time
for _ in range(2000):
    try:
        if "tracing" in open(sys.argv[1]).read():
            print(time.monotonic_ns()); sys.exit(0)
    except FileNotFoundError:
        pass
    time.sleep(0.005)
print(0)
EOF
)
wait "$GPID" || { cat "$TMP/a.err"; fail "A: gpuio trace -p exited non-zero"; }
cat "$TMP/a.err"
[ "$T_TRACING" != 0 ] || fail "A: gpuio never printed 'tracing ...'"
proc_stop "$RPID"
check_struct "$TMP/a.json"

python3 - "$TMP/a.json" "$TMP/a.log" "$TMP/data/input.bin" "$RPID" "$N_BEFORE" "$T_TRACING" <<'EOF' || fail "A: attach mid-run"
import os, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth
trace, logf, data, pid, n_before, t_tracing = sys.argv[1:]
pid, n_before, t_tracing = int(pid), int(n_before), int(t_tracing)
ev = truth.load(trace)
inf = truth.info(ev)
log = {}
for l in open(logf):
    s, t0, t1, off, r = map(int, l.split())
    log[s] = (t0, t1, off, r)
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond

path = os.path.realpath(data)
reads = truth.vfs(ev, names={"pread64"}, pid=pid)
named = [e for e in reads if e["args"].get("path") == path]
check(reads and len(named) == len(reads),
      f"{len(reads)} preads by pid {pid}, {len(named)} named {path} "
      f"(others: {sorted({e['args'].get('path') for e in reads} - {path})})")
seqs = [e["args"].get("offset", -1) // 512 for e in named]
check(seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else False,
      f"reads are a contiguous run of the sequence: {seqs[:1]}..{seqs[-1:]} ({len(seqs)})")
check(seqs and seqs[0] >= n_before, f"first traced read #{seqs[0] if seqs else None} is after the "
      f"{n_before} reads done before gpuio started")
want = [s for s, (t0, t1, off, r) in log.items() if t0 >= t_tracing and t1 <= t_tracing + 1_500_000_000]
missing = sorted(set(want) - set(seqs))
check(len(want) > 500 and not missing,
      f"all {len(want)} reads logged in the first 1.5 s after 'tracing' are traced (missing {missing[:5]})")
check(all(e["args"].get("bytes") == 512 and e["args"].get("requested") == 512 for e in named),
      "every read is 512 bytes")
outside = 0
for e, s in zip(named, seqs):
    t0, t1, off, r = log[s]
    a, b = truth.to_mono_ns(inf, e["ts"]), truth.to_mono_ns(inf, e["ts"] + e["dur"])
    outside += not (t0 - 1000 <= a and b <= t1 + 1000)
check(outside == 0, f"each read's slice lies inside its logged window ({outside} outside)")
logpath = os.path.realpath(logf)
w = truth.vfs(ev, names={"write"}, pid=pid)
check(w and all(e["args"].get("path") == logpath for e in w),
      f"the log (opened before the attach) is named {logpath}: {sorted({e['args'].get('path') for e in w})}")
sys.exit(1 if bad else 0)
EOF

# ---- B: the target exits while traced ----------------------------------
spawn -C "$TMP/cwd" reader "$PROG" ../data/input.bin "$TMP/b.log" 2000 300
RPID=$SPAWNED
wait_lines "$TMP/b.log" 20
SECONDS=0
timeout 20 "$GPUIO" trace -p "$RPID" -d 15s -o "$TMP/b.json" 2>"$TMP/b.err" \
  || { cat "$TMP/b.err"; fail "B: gpuio trace -p exited non-zero when the target exited"; }
cat "$TMP/b.err"
[ "$SECONDS" -lt 10 ] || fail "B: gpuio did not end when its target exited (${SECONDS}s)"
grep -q "all traced processes exited" "$TMP/b.err" || fail "B: no 'all traced processes exited' message"
wait "$RPID" || fail "B: attach_reader failed"
[ "$(wc -l <"$TMP/b.log")" -eq 300 ] || fail "B: attach_reader did not do its 300 reads"
[ -s "$TMP/b.gpuio" ] || fail "B: no capture $TMP/b.gpuio"
check_struct "$TMP/b.json"
python3 - "$TMP/b.json" "$TMP/data/input.bin" "$RPID" <<'EOF' || fail "B: target exiting during the trace"
import os, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth
trace, data, pid = sys.argv[1:]
ev = truth.load(trace)
inf = truth.info(ev)
seqs = [e["args"].get("offset") // 512 for e in truth.vfs(ev, path=os.path.realpath(data), names={"pread64"}, pid=int(pid))]
ok = seqs and seqs == list(range(seqs[0], 300)) and inf.get("capture_complete") is True
print(f"{'ok  ' if ok else 'FAIL'} traced reads #{seqs[:1]}..#{seqs[-1:]} end at the last read (#299); "
      f"capture_complete={inf.get('capture_complete')}")
sys.exit(0 if ok else 1)
EOF

# ---- C: a child that existed before the attach is traced ----------------
spawn -C "$TMP/cwd" shell sh -c '"$0" ../data/input.bin "$1" 2000 0 & echo $! >"$2"; wait' "$PROG" "$TMP/c.log" "$TMP/c.pid"
SPID=$SPAWNED
wait_lines "$TMP/c.log" 20
CPID=$(cat "$TMP/c.pid")
proc_reg "$CPID" "the shell's reader"
"$GPUIO" trace -p "$SPID" -d 1s -o "$TMP/c.json" 2>"$TMP/c.err" || { cat "$TMP/c.err"; fail "C: gpuio trace -p exited non-zero"; }
check_struct "$TMP/c.json"
python3 - "$TMP/c.json" "$TMP/data/input.bin" "$CPID" <<'EOF' || fail "C: a pre-existing child of the target is not traced"
import os, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth
trace, data, pid = sys.argv[1:]
ev = truth.load(trace)
n = len(truth.vfs(ev, path=os.path.realpath(data), names={"pread64"}, pid=int(pid)))
print(f"{'ok  ' if n >= 100 else 'FAIL'} {n} reads by the target's child {pid} (>= 100 in 1 s)")
sys.exit(0 if n >= 100 else 1)
EOF
echo "PASS: attach traces exactly the I/O after the attach, names pre-opened files, ends when targets exit"
