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

pycheck report_truth.train "$TMP/report.json" "$TMP/prog.json" "$TMP/data" ||
  fail "report misses the known answers"
grep -q "HEADLINES" "$TMP/report.txt" || fail "text report has no headlines"
echo "PASS: report finds the training loop's files, hit ratio, checkpoint and thread time split"
