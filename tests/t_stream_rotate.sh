#!/usr/bin/env bash
# gpuio trace --stream --rotate: long runs cut into self-contained files.
#  - by size, gzip: --rotate 400K --keep 3 -o r.pftrace.gz over ~300,000
#    preads makes r.0001.pftrace.gz, r.0002...; exactly the newest 3 remain
#    (the highest numbers, r.0001 is gone), each at most the limit plus one
#    pump's worth, each decodes on its own: its own ClockSnapshot and
#    SEQ_INCREMENTAL_STATE_CLEARED first, descriptors for every track it uses,
#    every interned name defined in it, its own "gpuio trace info" at the end;
#    together they hold the last preads of the run, in order, without gaps
#    between files.
#  - by time, plain: --rotate 1s over a 3.5 s workload gives >= 3 files, each
#    decoding on its own, with the workload's reads spread over them.
source "$(dirname "$0")/lib.sh"
need_root
PREAD="$GPUIO_TESTS/preadloop"
[ -x "$PREAD" ] || fail "missing $PREAD (run: make test-progs)"

head -c 8M /dev/urandom > "$TMP/data"
"$GPUIO" trace -q --stream --rotate 400K --keep 3 -o "$TMP/r.pftrace.gz" -- \
  "$PREAD" --size 1 "$TMP/data" 300000 5 > /dev/null 2> "$TMP/r.err" \
  || { cat "$TMP/r.err"; fail "trace --rotate failed"; }
ls "$TMP" | grep -E '^r\.[0-9]{4}\.pftrace\.gz$' | sort > "$TMP/files"
echo "size rotation kept: $(tr '\n' ' ' < "$TMP/files")"
[ "$(wc -l < "$TMP/files")" -eq 3 ] || fail "--keep 3 left $(wc -l < "$TMP/files") files"
[ ! -e "$TMP/r.0001.pftrace.gz" ] || fail "--keep 3 did not delete the oldest file"
[ ! -e "$TMP/r.pftrace.gz" ] || fail "rotation also wrote the unrotated name"
for f in $(cat "$TMP/files"); do tp_check --part "$TMP/$f"; done

python3 - "$TMP" "$GPUIO_SRC/tests" $(cat "$TMP/files") <<'EOF' || fail "rotated files do not stand alone"
import os, sys
sys.path.insert(0, sys.argv[2])
import pftrace as pf
d, files = sys.argv[1], sys.argv[3:]
nums = [int(f.split(".")[1]) for f in files]
assert nums == list(range(nums[0], nums[0] + 3)) and nums[0] >= 2, nums
prev_last = None
for f in files:
    path = os.path.join(d, f)
    size = os.path.getsize(path)
    # a file is cut at the first pump past the limit: at most one pump more
    assert size < 400 * 1024 + 16 * 1024 * 1024, (f, size)
    t = pf.load(path)
    assert not t.errors, (f, t.errors[:5])
    assert t.first_flags & pf.SEQ_CLEARED and t.clock_snapshots, f
    assert 3 in t.clock_snapshots[0]["clocks"], f
    sl = [s for s in t.slices() if s["name"] == "pread64" and s["args"].get("path", "").endswith("/data")]
    info = [i for i in t.instants() if i["name"] == "gpuio trace info"]
    assert sl and info, (f, len(sl), len(info))
    first, last = min(s["ts"] for s in sl), max(s["ts"] for s in sl)
    if prev_last is not None:
        assert first > prev_last, (f, "overlaps the previous file")
    prev_last = last
    print("%s: %d bytes, %d packets, %d preads, info: %d vfs events so far" %
          (f, size, t.packets, len(sl), info[0]["args"]["vfs_events"]))
EOF

# --- by time, plain files
cat > "$TMP/slow.sh" <<EOF
#!/bin/sh
for i in 1 2 3 4 5 6 7; do cat "$TMP/data" > /dev/null; sleep 0.5; done
EOF
chmod +x "$TMP/slow.sh"
"$GPUIO" trace -q --stream --rotate 1s -o "$TMP/t.pftrace" -- "$TMP/slow.sh" 2> "$TMP/t.err" \
  || { cat "$TMP/t.err"; fail "trace --rotate 1s failed"; }
n=$(ls "$TMP" | grep -cE '^t\.[0-9]{4}\.pftrace$')
[ "$n" -ge 3 ] || fail "--rotate 1s over 3.5 s made $n files"
python3 - "$TMP" "$GPUIO_SRC/tests" <<'EOF' || fail "time-rotated files do not stand alone"
import os, sys
sys.path.insert(0, sys.argv[2])
import pftrace as pf
d = sys.argv[1]
files = sorted(f for f in os.listdir(d) if f.startswith("t.") and f.endswith(".pftrace"))
with_reads = 0
for f in files:
    t = pf.load(os.path.join(d, f))
    assert not t.errors, (f, t.errors[:5])
    assert t.first_flags & pf.SEQ_CLEARED and t.clock_snapshots, f
    reads = [s for s in t.slices() if s["name"] == "read" and s["args"].get("path", "").endswith("/data")]
    with_reads += bool(reads)
print("time rotation: %d files, %d with reads of the data file" % (len(files), with_reads))
assert with_reads >= 2, with_reads
EOF
echo "rotated files stand alone and --keep keeps the newest"
