#!/usr/bin/env bash
# t_timestamps: slice times are CLOCK_MONOTONIC, exact to the nanosecond, and
# block requests are tied only to the calls that caused them.
#
# build/tests/attach_reader reads CLOCK_MONOTONIC just before and just after
# each pread and logs both (ns). The file is dropped from the page cache
# first, so the first reads go to the disk. The log is on tmpfs, so the
# reader itself never writes to a disk. Meanwhile the test (untraced) writes
# and syncs a file on the same disk as the data. Ground truth: the logged
# windows, and the fact that the reader only reads. Checks, for all 200
# reads:
#   - t = monotonic_base_ns + ts*1000 (the trace info's base) puts each
#     read's slice [ts, ts+dur] inside its logged window, to the ns;
#   - the slices are in the same order as the log;
#   - every block request on the reader's pid is a read (page-fault reads of
#     its binary need not be joined to a call); those joined (flow) to one of
#     its reads were submitted inside that read's window; none of the test's
#     untraced writes (or its file) is attributed to the reader.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/attach_reader"
[ -x "$PROG" ] || fail "$PROG missing (make test-progs)"
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not a tmpfs (the reader's log must not touch a disk)"

SHM=$(mktemp -d /dev/shm/gpuio-test.XXXXXX)
on_exit 'rm -rf "$SHM"'

head -c $((4 << 20)) /dev/urandom >"$TMP/data.bin"
sync "$TMP/data.bin"
# untraced writer: once the reader is under way, write and sync another file
(
  poll -t 2 -i 0.01 test -s "$SHM/reads.log" || true
  dd if=/dev/urandom of="$TMP/other.bin" bs=64k count=64 conv=fsync status=none
  sync
) &
BG=$!
proc_reg "$BG" "the untraced writer"
"$GPUIO" trace -q -o "$TMP/run.json" -- \
  sh -c '"$0" "$1" "$2" 500 200 cold && sleep 1.5' "$PROG" "$TMP/data.bin" "$SHM/reads.log" 2>"$TMP/gpuio.err" \
  || { cat "$TMP/gpuio.err"; fail "gpuio trace -- attach_reader exited non-zero"; }
wait "$BG" || fail "the untraced writer failed"
proc_unreg "$BG"
check_struct "$TMP/run.json"

python3 - "$TMP/run.json" "$SHM/reads.log" "$TMP/data.bin" "$TMP/other.bin" <<'EOF' || fail "slice times or block attribution wrong"
import os, sys
sys.path.insert(0, os.environ.get("GPUIO_SRC", ".") + "/tests")
import truth
trace, logf, data, other = sys.argv[1:]
other_ino = os.stat(other).st_ino
ev = truth.load(trace)
inf = truth.info(ev)
log = [tuple(map(int, l.split())) for l in open(logf)]
reads = truth.vfs(ev, path=os.path.realpath(data), names={"pread64"})
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond

check(len(reads) == len(log) == 200, f"{len(reads)} reads traced, {len(log)} logged")
check([e["args"].get("offset") for e in reads] == [l[3] for l in log], "same reads, same order (offsets)")
outside = []
for e, (seq, t0, t1, off, r) in zip(reads, log):
    a = truth.to_mono_ns(inf, e["ts"])
    b = truth.to_mono_ns(inf, e["ts"] + e["dur"])
    if not (t0 <= a <= b <= t1):
        outside.append((seq, a - t0, t1 - b))
check(not outside, f"every slice inside its CLOCK_MONOTONIC window "
      f"(outside: {outside[:5]} as (seq, start-t0 ns, t1-end ns))")
print(f"     {sum(1 for e in reads if e['dur'] > 20)} reads took > 20 µs (cold)")

rpid = reads[0]["pid"] if reads else None
by_bind = {e.get("bind_id"): (e, l) for e, l in zip(reads, log) if e.get("flow_out")}
mine = [b for b in truth.block(ev) if b["args"].get("pid") == rpid]
check(any(b.get("bind_id") in by_bind for b in mine), f"{len(mine)} block requests on the reader's pid, "
      f"some joined to its reads (cold file)")
wrong = []
for b in mine:
    a = b["args"]
    p = str(a.get("path"))
    if b["name"] != "read" or p == os.path.realpath(other) or p.endswith(f",ino={other_ino}"):
        wrong.append(f"{b['name']} {a.get('flags')} {a.get('bytes')} B path={p}: attributed to the "
                     "reader, which only reads its own file (the test's untraced write?)")
        continue
    if b.get("bind_id") not in by_bind or not b.get("flow_in"):
        continue    # a page-fault read (its binary, libraries): no call to join
    e, (seq, t0, t1, off, r) = by_bind[b["bind_id"]]
    s = truth.to_mono_ns(inf, b["ts"])
    if b["name"] != "read" or not t0 <= s <= t1:
        wrong.append(f"{b['name']} {a.get('flags')} {a.get('bytes')} B path={a.get('path')} joined to read "
                     f"#{seq} but submitted {(s - t1) / 1e6:.3f} ms after it returned")
check(not wrong, "every block request on the reader is a read of its own files, submitted during the "
      f"read it is joined to ({len(wrong)} not):" + "".join("\n       " + w for w in wrong[:6]))
sys.exit(1 if bad else 0)
EOF
echo "PASS: every read's slice lies inside the CLOCK_MONOTONIC window the program measured"
