#!/usr/bin/env bash
# t_report_train: `gpuio report` on a traced "training loop" with known
# answers (tests/progs/train_loop.c): 8 files of 2 MiB read twice (dropped
# from the page cache first: epoch 1 misses, epoch 2 hits), 5 steps of 40 ms
# CPU spin, then a 4 MiB checkpoint written and fsynced. The report must find:
#   - every sample file: 4 MiB read in 16 reads of 256 KiB, sequential, hit
#     ratio 0.5 +- 0.05 (epoch 2 all hits), ~512 pages missed (epoch 1);
#   - one checkpoint: ckpt.pt, 4 MiB in 4 writes, ended by fsync;
#   - the main thread's time split: time in I/O calls within 10% + 3 ms of
#     what the program measured around its own calls; wall time >= the
#     program's loop time and at most 150 ms more (exec, loader); the rest
#     (wall - I/O) >= the 200 ms of spinning.
source "$(dirname "$0")/lib.sh"
need_root
PROG="$GPUIO_TESTS/train_loop"
[ -x "$PROG" ] || fail "$PROG not built (make test-progs)"

mkdir -p "$TMP/data"
"$PROG" setup "$TMP/data" 8 2048 || fail "train_loop setup failed"
"$GPUIO" trace -q --no-export --capture "$TMP/run.gpuio" -- \
  "$PROG" run "$TMP/data" 8 2048 5 40 4 >"$TMP/prog.json" 2>"$TMP/gpuio.err" \
  || { cat "$TMP/gpuio.err"; fail "gpuio trace -- train_loop failed"; }
cat "$TMP/prog.json"
"$GPUIO" report --json --files all "$TMP/run.gpuio" >"$TMP/report.json" || fail "report --json failed"
"$GPUIO" report "$TMP/run.gpuio" >"$TMP/report.txt" || fail "report failed"
sed -n '1,12p' "$TMP/report.txt"

python3 - "$TMP/report.json" "$TMP/prog.json" "$TMP/data" <<'EOF' || fail "report misses the known answers"
import json, sys
rep, prog, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
bad = 0
def check(cond, msg):
    global bad
    print(("ok   " if cond else "FAIL ") + msg)
    bad += not cond
MiB = 1 << 20
files = {f["path"]: f for f in rep["files"]}
for i in range(8):
    p = f"{d}/sample-{i:03d}.bin"
    f = files.get(p)
    check(f is not None, f"{p} in the report")
    if not f:
        continue
    hr = f["page_cache"]["hit_ratio"]
    check(f["read_bytes"] == 4 * MiB and f["read_ops"] == 16,
          f"sample-{i:03d}: {f['read_bytes']} bytes in {f['read_ops']} reads (2 epochs of 2 MiB)")
    check(f["pattern"] == "sequential", f"sample-{i:03d}: pattern {f['pattern']}")
    check(hr is not None and abs(hr - 0.5) <= 0.05, f"sample-{i:03d}: hit ratio {hr} ~ 0.5 (epoch 2 cached)")
    check(480 <= f["page_cache"]["miss_pages"] <= 560,
          f"sample-{i:03d}: {f['page_cache']['miss_pages']} pages missed ~ 512 (epoch 1)")
    check(f["opens"] >= 2, f"sample-{i:03d}: {f['opens']} opens")
ck = rep["checkpoints"]
check(len(ck) == 1, f"{len(ck)} checkpoint(s)")
if ck:
    c = ck[0]
    check(c["path"] == f"{d}/ckpt.pt" and c["bytes"] == 4 * MiB and c["writes"] == 4
          and c["ended_by"] == "fsync", f"checkpoint {c['path']} {c['bytes']} bytes, {c['writes']} writes, "
          f"then {c['ended_by']}")
main = [t for t in rep["threads"] if t["pid"] == t["tid"] and t["comm"] == "train_loop"]
check(len(main) == 1, "the main thread is in the thread table")
if main:
    t = main[0]
    io, wall, rest = t["io_us"] * 1000, t["wall_us"] * 1000, t["rest_us"] * 1000
    pio, loop, spin = prog["io_ns"], prog["loop_ns"], prog["spin_ns"]
    check(abs(io - pio) <= 0.10 * pio + 3e6, f"I/O time {io/1e6:.2f} ms ~ measured {pio/1e6:.2f} ms")
    check(loop <= wall <= loop + 150e6, f"wall {wall/1e6:.1f} ms vs loop {loop/1e6:.1f} ms")
    check(rest >= spin, f"rest {rest/1e6:.1f} ms >= spin {spin/1e6:.1f} ms")
    check(t["read_bytes"] >= 32 * MiB, f"thread read {t['read_bytes']} bytes")
s = rep["summary"]
hr = s["page_cache"]["hit_ratio"]
check(hr is not None and 0.4 <= hr <= 0.6, f"overall hit ratio {hr}")
check(s["dropped"] == 0 and s["complete"], "no drops, complete capture")
sys.exit(1 if bad else 0)
EOF
grep -q "HEADLINES" "$TMP/report.txt" || fail "text report has no headlines"
echo "PASS: report finds the training loop's files, hit ratio, checkpoint and thread time split"
